/* repro.h: the reproducible mode (config key `reproducible`).
 *
 * A run in this mode computes the same bits on every x86-64 machine with
 * AVX2 and FMA and the same Debian packages: its products go to OpenBLAS
 * (model_init: gemm_use_blas), which runs its Haswell kernels
 * (OPENBLAS_CORETYPE=Haswell, OPENBLAS_L2_SIZE=512), and gatelab's own
 * kernels run their AVX2 path (GATELAB_SIMD=avx2), whatever wider ones the
 * CPU has. These are the products the committed reference studies were
 * trained with. (Out of the mode, gatelab's own products give the same bits
 * on every path and core too; they are simply not the studies' arithmetic.) The rest is already
 * machine-independent: the training batch is cut into fixed shards whatever the `threads` key,
 * sgemm's split over OpenBLAS's threads never reorders a sum, libm runs its FMA variants on every
 * such CPU, and subnormal flushing is a mode, not a speed.
 *
 * The run file records the mode in /config and the kernels in its root
 * attributes blas_core and simd_path. */
#ifndef GATELAB_REPRO_H
#define GATELAB_REPRO_H

#include <stddef.h>

#define REPRO_BLAS_CORE "Haswell"
#define REPRO_L2_SIZE "512"
#define REPRO_SIMD "avx2"

/* With on = 0 does nothing and returns 0. With on = 1: returns 0 when this
 * process already runs pinned; otherwise sets the environment above and
 * re-executes main's argv (blas_core_pin), returning only on failure: -1
 * with a one-line reason (no AVX2 + FMA, or the exec failed). */
int repro_enter(int on, char *err, size_t errlen);

#endif
