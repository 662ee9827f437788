/** How many objects DynA and DynB allocate (each run). */
public class ClassUnloadCount { public static final int N = 300_000; }
