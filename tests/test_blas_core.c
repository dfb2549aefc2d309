/* test_blas_core.c: the BLAS core decision (which core to switch to, when
 * the user's choice wins) and the sgemm check on the running core. The
 * re-exec itself is tested end to end by tests/blas_core.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "blas_core.h"

static void test_core_for_cpu(void **state) {
    (void)state;
    assert_string_equal(blas_core_for_cpu(1, 1), "SkylakeX");
    assert_string_equal(blas_core_for_cpu(0, 1), "Haswell");
    assert_null(blas_core_for_cpu(0, 0));
}

static void test_generic_cores(void **state) {
    (void)state;
    assert_true(blas_core_is_generic("Prescott"));
    assert_true(blas_core_is_generic("Sandybridge"));
    assert_true(blas_core_is_generic("Nehalem"));
    assert_false(blas_core_is_generic("SkylakeX"));
    assert_false(blas_core_is_generic("Haswell"));
    assert_false(blas_core_is_generic("Zen"));
    assert_false(blas_core_is_generic("Cooperlake"));
    assert_false(blas_core_is_generic(NULL));
}

static void test_upgrade_rules(void **state) {
    (void)state;
    /* a generic fallback, nobody asked for it: upgrade */
    assert_string_equal(blas_core_upgrade("Prescott", "SkylakeX", 0, NULL), "SkylakeX");
    assert_string_equal(blas_core_upgrade("Prescott", "Haswell", 0, ""), "Haswell");
    /* the user's OPENBLAS_CORETYPE wins */
    assert_null(blas_core_upgrade("Prescott", "SkylakeX", 1, NULL));
    /* GATELAB_BLAS_CORE=keep turns it off */
    assert_null(blas_core_upgrade("Prescott", "SkylakeX", 0, "keep"));
    /* a good core is never touched, nor a CPU without AVX2 */
    assert_null(blas_core_upgrade("SkylakeX", "SkylakeX", 0, NULL));
    assert_null(blas_core_upgrade("Haswell", "SkylakeX", 0, NULL));
    assert_null(blas_core_upgrade("Prescott", NULL, 0, NULL));
    /* the test hook counts a preset core as OpenBLAS's own choice */
    assert_string_equal(blas_core_upgrade("Prescott", "SkylakeX", 1, "test-generic"), "SkylakeX");
}

static void test_verify_running_core(void **state) {
    (void)state;
    char err[160] = "";
    assert_int_equal(blas_core_verify(err, sizeof err), 0);
    BlasInfo bi;
    blas_info(&bi);
    assert_string_equal(bi.library, "OpenBLAS");
    assert_true(strlen(bi.core) > 0 && strcmp(bi.core, "unknown"));
    assert_true(bi.version[0] >= '0' && bi.version[0] <= '9');
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_for_cpu),
        cmocka_unit_test(test_generic_cores),
        cmocka_unit_test(test_upgrade_rules),
        cmocka_unit_test(test_verify_running_core),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
