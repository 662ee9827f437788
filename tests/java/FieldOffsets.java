import java.lang.reflect.Field;

/**
 * FieldOffsets - prints, for each "pkg/Class.field" argument, the offset the
 * JVM itself reports (sun.misc.Unsafe.objectFieldOffset), then sleeps so that
 * memtrace can read the same offsets from the class metadata.
 * Output: one line "pkg/Class.field OFFSET" per argument, then "ready".
 */
public class FieldOffsets {
    public static void main(String[] args) throws Exception {
        Field uf = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
        uf.setAccessible(true);
        sun.misc.Unsafe u = (sun.misc.Unsafe) uf.get(null);
        for (String a : args) {
            int dot = a.lastIndexOf('.');
            Class<?> c = Class.forName(a.substring(0, dot).replace('/', '.'));
            Field f = null;
            for (Class<?> k = c; k != null && f == null; k = k.getSuperclass()) {
                try {
                    f = k.getDeclaredField(a.substring(dot + 1));
                } catch (NoSuchFieldException e) {
                    // a superclass may declare it
                }
            }
            @SuppressWarnings("deprecation")
            long off = u.objectFieldOffset(f);
            System.out.println(a + " " + off);
        }
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(600_000);
    }
}
