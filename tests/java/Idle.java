/* Idle - a JVM that does nothing: prints READY and sleeps until killed.
 * Used by tests that only read the JVM's state (VMStructs, flags). */
public class Idle {
	public static void main(String[] args) throws Exception {
		int[] keep = new int[4];
		long[][] keep2 = new long[2][2];
		System.out.println("READY " + keep.length + keep2.length);
		System.out.flush();
		Thread.sleep(Long.MAX_VALUE);
	}
}
