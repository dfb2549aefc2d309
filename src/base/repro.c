/* repro.c: see repro.h. */
#include "repro.h"

#include <stdlib.h>
#include <string.h>

#include "blas_core.h"
#include "simd.h"
#include "util.h"

/* 1 when name's value is want. */
static int env_is(const char *name, const char *want) {
    const char *v = getenv(name);
    return v && !strcmp(v, want);
}

int repro_enter(int on, char *err, size_t errlen) {
    if (!on) return 0;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
        return seterr(err, errlen, "reproducible = 1 needs a CPU with AVX2 and FMA");
    int simd_ok = simd_path() == SIMD_AVX2 && env_is("GATELAB_SIMD", REPRO_SIMD);
    int l2_ok = env_is("OPENBLAS_L2_SIZE", REPRO_L2_SIZE);
    if (simd_ok && l2_ok) return blas_core_pin(REPRO_BLAS_CORE, err, errlen);
    setenv("GATELAB_SIMD", REPRO_SIMD, 1);
    setenv("OPENBLAS_L2_SIZE", REPRO_L2_SIZE, 1);
    unsetenv("OPENBLAS_CORETYPE"); /* so blas_core_pin re-executes */
    return blas_core_pin(REPRO_BLAS_CORE, err, errlen);
}
