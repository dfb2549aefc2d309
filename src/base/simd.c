/* simd.c: see simd.h. */
#include "simd.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static _Atomic int chosen; /* 0: not yet decided */

/* The widest path this CPU runs. */
static SimdPath cpu_best(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
#if defined(__clang__) /* clang 14 has no level names: the features the paths use */
    int v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
    if (v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512cd"))
        return SIMD_AVX512;
    if (v3) return SIMD_AVX2;
#else
    if (__builtin_cpu_supports("x86-64-v4")) return SIMD_AVX512;
    if (__builtin_cpu_supports("x86-64-v3")) return SIMD_AVX2;
#endif
#endif
    return SIMD_BASE;
}

/* GATELAB_SIMD as a path, 0 when unset, -1 when not a path name. */
static int env_path(void) {
    const char *e = getenv("GATELAB_SIMD");
    if (!e || !*e) return 0;
    for (int p = SIMD_BASE; p <= SIMD_AVX512; p++)
        if ((p == SIMD_BASE || p == SIMD_AVX2 || p == SIMD_AVX512) &&
            !strcmp(e, simd_path_name((SimdPath)p)))
            return p;
    return -1;
}

SimdPath simd_path(void) {
    int p = atomic_load(&chosen);
    if (p) return (SimdPath)p;
    int want = env_path(), best = (int)cpu_best();
    p = want > 0 && want <= best ? want : best;
    atomic_store(&chosen, p);
    return (SimdPath)p;
}

const char *simd_path_name(SimdPath p) {
    switch (p) {
    case SIMD_AVX512: return "avx512";
    case SIMD_AVX2: return "avx2";
    case SIMD_BASE:
    default: return "base";
    }
}

int simd_startup(char *err, size_t errlen) {
    int want = env_path();
    if (want < 0)
        return seterr(err, errlen, "GATELAB_SIMD='%s' is not avx512, avx2 or base",
                      getenv("GATELAB_SIMD"));
    if (want > (int)cpu_best())
        return seterr(err, errlen, "GATELAB_SIMD=%s: this CPU has only %s",
                      simd_path_name((SimdPath)want), simd_path_name(cpu_best()));
    simd_path();
    return 0;
}
