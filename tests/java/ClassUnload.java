import java.lang.ref.WeakReference;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * ClassUnload - load DynA in its own loader, allocate DynA objects, drop the
 * loader and collect until DynA is unloaded, then load DynB in a fresh loader
 * (its Klass* may take DynA's old place) and allocate DynB objects.
 *
 *   java ClassUnload DYN_CLASSES_DIR --go FILE
 *
 * Prints "unloaded" once DynA's class is gone (a weak reference to it clears),
 * then DONE.
 */
public class ClassUnload {
    public static void main(String[] args) throws Exception {
        URL dir = Path.of(args[0]).toUri().toURL();
        String go = args.length > 2 ? args[2] : null;
        System.out.println("READY");
        System.out.flush();
        while (go != null && !Files.exists(Path.of(go))) Thread.sleep(10);
        WeakReference<Class<?>> ref = runIn(dir, "DynA");
        for (int i = 0; i < 50 && ref.get() != null; i++) { System.gc(); Thread.sleep(20); }
        System.out.println(ref.get() == null ? "unloaded" : "still loaded");
        runIn(dir, "DynB");
        System.out.println("DONE");
        System.out.flush();
        while (true) Thread.sleep(1000);
    }

    static WeakReference<Class<?>> runIn(URL dir, String name) throws Exception {
        URLClassLoader l = new URLClassLoader(new URL[] { dir }, null);
        Class<?> c = l.loadClass(name);
        Runnable r = (Runnable) c.getDeclaredConstructor().newInstance();
        r.run();
        l.close();
        return new WeakReference<>(c);
    }
}
