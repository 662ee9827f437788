/** DynA - loaded by its own class loader in ClassUnload, then unloaded. */
public class DynA implements Runnable {
    static volatile Object sink;
    long a0, a1, a2, a3, a4, a5; // 64 bytes
    public void run() { for (int i = 0; i < ClassUnloadCount.N; i++) sink = new DynA(); }
}
