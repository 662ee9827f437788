/* DeepInline - a known call chain for the nmethod/scope decoders
 * (tests/e2e/cases/nmethod_live.sh): run() -> Inner.a() -> b() -> c() -> leaf()
 * -> Inner.alloc(), hot enough for C2 to compile run() with the rest inlined.
 * The line of each call is what the scope decoding must give back (the case
 * reads them with javap). Prints READY once warm, then keeps running. */
public class DeepInline {
	static volatile Object sink;
	static long sum;

	static final class Inner {
		static int a(int i) {
			return b(i + 1) + 1;
		}

		static int b(int i) {
			return c(i * 3) ^ 5;
		}

		static int c(int i) {
			return leaf(i - 7) + 2;
		}

		static int leaf(int i) {
			sink = alloc(i & 15);
			return i >> 1;
		}

		static byte[] alloc(int n) {
			return new byte[16 + n];
		}
	}

	static long run(int n) {
		long s = 0;
		for (int i = 0; i < n; i++)
			s += Inner.a(i);
		return s;
	}

	public static void main(String[] args) throws Exception {
		long until = System.nanoTime() + 1_500_000_000L;
		while (System.nanoTime() < until)
			sum += run(10_000);
		System.out.println("READY " + sum);
		System.out.flush();
		for (;;)
			sum += run(10_000);
	}
}
