/* simd.h: the instruction path of gatelab's own elementwise kernels.
 *
 * The loops over whole activations (gate activations, SwiGLU, GELU, the
 * attention's exponentials, a few probe reductions) are compiled three
 * times from one body: for x86-64-v4 (AVX-512), x86-64-v3 (AVX2 + FMA) and
 * plain x86-64. simd_path() picks one per process: the widest the CPU has,
 * or the one GATELAB_SIMD names ("avx512", "avx2", "base"). The three give
 * the same bits (tests/repro.sh holds every catalog id to it): the build does
 * not contract a*b+c into FMA (ISO C11 mode) nor reassociate sums, so a
 * wider vector only does more of the same elementwise operations at once.
 *
 * A kernel is written as a static inline body NAME_body and stamped out by
 * SIMD_KERNEL(NAME, (params), (args)), which defines the three clones and
 * the exported NAME that calls the chosen one. */
#ifndef GATELAB_SIMD_H
#define GATELAB_SIMD_H

#include <stddef.h>

typedef enum { SIMD_BASE = 1, SIMD_AVX2 = 3, SIMD_AVX512 = 4 } SimdPath;

/* The path in use (decided once, on the first call). */
SimdPath simd_path(void);
/* "avx512", "avx2" or "base". */
const char *simd_path_name(SimdPath p);
/* Checks GATELAB_SIMD (unset, or a path this CPU has); 0, or -1 with a
 * one-line reason in err. Called once by main before any kernel runs. */
int simd_startup(char *err, size_t errlen);

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SIMD_V4 __attribute__((target("arch=x86-64-v4")))
#define SIMD_V3 __attribute__((target("arch=x86-64-v3")))
#define SIMD_BODY static inline __attribute__((always_inline))
/* storage type NAME params, returning NAME_body args compiled three ways
 * (storage: static, or empty for an exported kernel) */
#define SIMD_KERNEL_RET(storage, type, name, params, args)                                         \
    SIMD_V4 static type name##_v4 params { return name##_body args; }                              \
    SIMD_V3 static type name##_v3 params { return name##_body args; }                              \
    static type name##_v1 params { return name##_body args; }                                      \
    storage type name params {                                                                     \
        switch (simd_path()) {                                                                     \
        case SIMD_AVX512: return name##_v4 args;                                                   \
        case SIMD_AVX2: return name##_v3 args;                                                     \
        default: return name##_v1 args;                                                            \
        }                                                                                          \
    }
/* the same for a void kernel, exported (SIMD_KERNEL) or static */
#define SIMD_KERNEL(name, params, args) SIMD_KERNEL_VOID_(, name, params, args)
#define SIMD_KERNEL_STATIC(name, params, args) SIMD_KERNEL_VOID_(static, name, params, args)
#define SIMD_KERNEL_VOID_(storage, name, params, args)                                             \
    SIMD_V4 static void name##_v4 params { name##_body args; }                                     \
    SIMD_V3 static void name##_v3 params { name##_body args; }                                     \
    static void name##_v1 params { name##_body args; }                                             \
    storage void name params {                                                                     \
        switch (simd_path()) {                                                                     \
        case SIMD_AVX512: name##_v4 args; break;                                                   \
        case SIMD_AVX2: name##_v3 args; break;                                                     \
        default: name##_v1 args; break;                                                            \
        }                                                                                          \
    }
#else
#define SIMD_BODY static inline
#define SIMD_KERNEL_RET(storage, type, name, params, args)                                         \
    storage type name params { return name##_body args; }
#define SIMD_KERNEL(name, params, args)                                                            \
    void name params { name##_body args; }
#define SIMD_KERNEL_STATIC(name, params, args)                                                     \
    static void name params { name##_body args; }
#endif

#endif
