/* DeepInline - a known call chain for the nmethod/scope decoders
 * (tests/e2e/cases/nmethod_live.sh): run() -> Inner.a() -> b() -> c() -> leaf()
 * -> Inner.alloc(), hot enough for C2 to compile run() with the rest inlined.
 * Each call is on its own line, not the method's first: the lines the scope
 * decoding gives back must be those (the case reads them with javap).
 * Prints READY once warm, then keeps running. */
public class DeepInline {
	static volatile Object sink;
	static long sum;

	static final class Inner {
		static int a(int i) {
			int j = i + 1;
			return b(j) + 1;
		}

		static int b(int i) {
			int j = i * 3;
			j ^= 5;
			return c(j) ^ 5;
		}

		static int c(int i) {
			int j = i - 7;
			return leaf(j) + 2;
		}

		static int leaf(int i) {
			int n = i & 15;
			sink = alloc(n);
			return i >> 1;
		}

		static byte[] alloc(int n) {
			int len = 16 + n;
			return new byte[len];
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
