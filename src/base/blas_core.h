/* blas_core.h: which OpenBLAS kernels run, and picking better ones.
 *
 * OpenBLAS picks its kernels ("core") once, when the library loads, from
 * OPENBLAS_CORETYPE or its own CPU detection. An OpenBLAS older than the
 * CPU may not know it and fall back to a generic pre-AVX2 core that runs at
 * a fifth of the speed. blas_core_startup() notices that, re-executes the
 * program with OPENBLAS_CORETYPE set to the best core the CPU supports,
 * checks one small sgemm against a naive loop in the new process, and goes
 * back (with a one-line warning) if it disagrees.
 *
 * Environment:
 *   OPENBLAS_CORETYPE            set by the user: always respected
 *   GATELAB_BLAS_CORE=keep       never change the core
 *   GATELAB_BLAS_CORE=test-generic  (tests) treat a preset OPENBLAS_CORETYPE
 *                                as if OpenBLAS had chosen it by itself
 *   GATELAB_BLAS_CORE=test-badverify  (tests) as test-generic, and make the
 *                                check of the new core fail
 *   GATELAB_BLAS_AUTO=CORE       internal: set on the re-exec, naming the
 *                                core OpenBLAS had chosen
 */
#ifndef GATELAB_BLAS_CORE_H
#define GATELAB_BLAS_CORE_H

#include <stddef.h>

typedef struct {
    char library[16]; /* "OpenBLAS" */
    char version[16]; /* "0.3.21" */
    char core[32];    /* the kernels in use, e.g. "SkylakeX" */
    char how[96];     /* "detected", "auto (OpenBLAS chose Prescott)", ... */
} BlasInfo;

/* What the running process uses, and how that core was chosen. */
void blas_info(BlasInfo *bi);

/* Print "BLAS: OpenBLAS 0.3.21, core X (how)" and then tail (or nothing)
 * and a newline to stdout: --version and both benches say it alike. */
void blas_print(const char *tail);

/* The best OpenBLAS core for CPU features (AVX-512 F/BW/VL/DQ ->
 * "SkylakeX", AVX2 + FMA -> "Haswell"), or NULL for neither. */
const char *blas_core_for_cpu(int avx512, int avx2_fma);
/* 1 when core is one of OpenBLAS's generic pre-AVX2 x86 cores. */
int blas_core_is_generic(const char *core);
/* The core to switch to, or NULL to keep the current one. user_set: the
 * user set OPENBLAS_CORETYPE; mode: GATELAB_BLAS_CORE (may be NULL). */
const char *blas_core_upgrade(const char *current, const char *best, int user_set,
                              const char *mode);

/* One 37x41x29 sgemm against a naive double loop. 0 when they agree to
 * 1e-4 relative, else -1 with the largest error in err. */
int blas_core_verify(char *err, size_t errlen);

/* Call first thing in main(). May replace the process (execv of
 * /proc/self/exe with the same argv) and so never return; else returns
 * having printed at most a one-line warning on stderr. */
void blas_core_startup(char **argv);

#endif
