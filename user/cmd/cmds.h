/* cmds.h - one entry point per subcommand (user/cmd_*.c). Each parses its own
 * options, returns the process exit code (0 ok, 1 failure, 2 usage). */
#ifndef MEMTRACE_CMDS_H
#define MEMTRACE_CMDS_H

int do_gc(int argc, char **argv);
int do_alloc(int argc, char **argv);
int do_top(int argc, char **argv);
int do_ps(int argc, char **argv);
int do_doctor(int argc, char **argv);
int do_attach(int argc, char **argv);
int do_detach(int argc, char **argv);
int do_age(int argc, char **argv);
int do_leaks(int argc, char **argv);
int do_vmstructs(int argc, char **argv);
int do_selftest_sinks(int argc, char **argv);
int do_selftest_walks(int argc, char **argv);
int do_serve(int argc, char **argv);
int do_record(int argc, char **argv);
int do_report(int argc, char **argv);
int do_check(int argc, char **argv);
int do_locks(int argc, char **argv);
int do_query(int argc, char **argv);
int do_snapshot(int argc, char **argv);
int do_histo(int argc, char **argv);
int do_heap(int argc, char **argv);

#endif
