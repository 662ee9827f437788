/* test_symres.c - frame naming: C++ demangling of nested names, perf-map names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "jstack/symres.h"

static void dm(const char *in, const char *want)
{
	char out[256];

	symres_demangle(in, out, sizeof(out));
	assert_string_equal(out, want);
}

static void java_name_is(const char *in, const char *want)
{
	char out[256];

	symres_java_name(in, out, sizeof(out));
	assert_string_equal(out, want);
}

static void test_demangle(void **state)
{
	dm("_ZN11AllocTracer27send_allocation_in_new_tlabEP5KlassPP12HeapWordImplmmP10JavaThread",
	   "AllocTracer::send_allocation_in_new_tlab");
	dm("_ZN11OptoRuntime11new_array_CEP5KlassiP10JavaThread", "OptoRuntime::new_array_C");
	dm("_ZNK5Klass8externalEv", "Klass::external");
	dm("_ZL17jni_invoke_staticP7JNIEnv_P9JavaValue", "jni_invoke_static");
	dm("_Z10JavaThreadv", "JavaThread");
	dm("JavaMain", "JavaMain");
	dm("_Zgarbage", "_Zgarbage");
	dm("_ZN999999x", "_ZN999999x");
}

static void test_java_names(void **state)
{
	java_name_is("void DemoWorkload$Request.<init>(int)", "DemoWorkload$Request.<init>");
	java_name_is("java.lang.Object jdk.internal.misc.Unsafe.getReferenceVolatile(java.lang.Object, long)",
	   "jdk.internal.misc.Unsafe.getReferenceVolatile");
	java_name_is("StubRoutines (1)", "StubRoutines (1)");
	java_name_is("Interpreter", "Interpreter");
	java_name_is("_new_array_Java", "_new_array_Java");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_java_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
