/** QPayload - loaded by three class loaders of QueryWorkload ("loaders"); each keeps N instances. */
public class QPayload {
    static QPayload[] kept;
    long v;
    public static void keep(int n) { kept = new QPayload[n]; for (int i = 0; i < n; i++) kept[i] = new QPayload(); }
}
