/* fmapeak.h: the machine's FMA peak, the ceiling of any product on it.
 *
 * n threads each run independent chains of fused multiply-adds in
 * registers on the widest SIMD path gatelab runs (simd.h; no memory
 * traffic), GFLOP/s summed. No sgemm, whatever its kernels, can exceed it,
 * so a share of it is a lower bound of the share of the best sgemm peak. */
#ifndef GATELAB_FMAPEAK_H
#define GATELAB_FMAPEAK_H

/* GFLOP/s of n concurrent threads (1..64), timed by the wall clock or, with
 * cpu_clock, by each thread's CPU time. About 0.1 s a call. */
double fma_peak(int n, int cpu_clock);

#endif
