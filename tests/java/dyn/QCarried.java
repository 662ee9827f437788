/** QCarried - defined by each of QuerySeeds' three QLoaders; hold(n) keeps a
 * QCarried[n] (each QCarried with its own QCarriedPart) in a local variable
 * only, so the array is a stack-local heap root whose class belongs to the loader. */
public class QCarried {
    long v;
    QCarriedPart part = new QCarriedPart();

    public static void hold(int n) throws InterruptedException {
        QCarried[] kept = new QCarried[n];
        for (int i = 0; i < n; i++) kept[i] = new QCarried();
        while (kept.length > 0) Thread.sleep(100000); // `kept` stays live in this frame
    }
}

class QCarriedPart { long a, b; }
