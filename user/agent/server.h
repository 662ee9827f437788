/* server.h - the agent's socket thread (server.c): one memtrace client at a
 * time, the protocol of agent_proto.h. */
#ifndef MEMTRACE_AGENT_SERVER_H
#define MEMTRACE_AGENT_SERVER_H

#include <jni.h>
#include <sys/types.h>

/*
 * server_listen - create the listening socket at @path (replacing a stale
 * socket, refusing any other file type), mode 0600. Returns the fd or -errno.
 * *@ino receives the socket file's inode, to notice later removal.
 */
int server_listen(const char *path, ino_t *ino);

/*
 * server_start - start the socket thread (a JVMTI agent thread, daemon) that
 * serves @listen_fd. Called once, with agent.lock held, from a Java thread
 * (@jni). Returns 0 or -1 after logging.
 */
int server_start(JNIEnv *jni, int listen_fd, ino_t ino);

/* server_shutdown - VM death: remove our socket file if it is still ours;
 * the server thread never binds it again. */
void server_shutdown(void);

#endif
