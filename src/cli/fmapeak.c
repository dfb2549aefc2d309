/* fmapeak.c: the machine's FMA peak (fmapeak.h). */
#include "fmapeak.h"

#include <immintrin.h>
#include <pthread.h>
#include <time.h>

#include "simd.h"

#define CHAINS 12     /* independent accumulators: FMA latency x ports */
#define ITERS 2000000 /* ~0.1 s a thread at 250 GFLOP/s */

static volatile float sink; /* keeps the chains' results alive */

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/* FLOP of one call: CHAINS x lanes x 2 x ITERS */
SIMD_V4 static double chains_v4(void) {
    __m512 acc[CHAINS], x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
    for (int c = 0; c < CHAINS; c++) acc[c] = _mm512_set1_ps((float)c);
    for (long i = 0; i < ITERS; i++)
        _Pragma("GCC unroll 12") for (int c = 0; c < CHAINS; c++) acc[c] =
            _mm512_fmadd_ps(acc[c], x, y);
    for (int c = 1; c < CHAINS; c++) acc[0] = _mm512_add_ps(acc[0], acc[c]);
    sink = _mm512_reduce_add_ps(acc[0]);
    return (double)CHAINS * 16 * 2 * ITERS;
}

SIMD_V3 static double chains_v3(void) {
    __m256 acc[CHAINS], x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
    for (int c = 0; c < CHAINS; c++) acc[c] = _mm256_set1_ps((float)c);
    for (long i = 0; i < ITERS; i++)
        _Pragma("GCC unroll 12") for (int c = 0; c < CHAINS; c++) acc[c] =
            _mm256_fmadd_ps(acc[c], x, y);
    for (int c = 1; c < CHAINS; c++) acc[0] = _mm256_add_ps(acc[0], acc[c]);
    float v[8];
    _mm256_storeu_ps(v, acc[0]);
    sink = v[0];
    return (double)CHAINS * 8 * 2 * ITERS;
}
#endif

/* Without FMA: a multiply and an add per lane of SSE, counted as 2 FLOP. */
static double chains_v1(void) {
    float acc[CHAINS][4];
    for (int c = 0; c < CHAINS; c++)
        for (int l = 0; l < 4; l++) acc[c][l] = (float)c;
    for (long i = 0; i < ITERS; i++)
        for (int c = 0; c < CHAINS; c++)
            for (int l = 0; l < 4; l++) acc[c][l] = acc[c][l] * 0.999999f + 1e-7f;
    float s = 0;
    for (int c = 0; c < CHAINS; c++) s += acc[c][0];
    sink = s;
    return (double)CHAINS * 4 * 2 * ITERS;
}

typedef struct {
    int cpu_clock;
    double gflops;
} Job;

static double clock_s(int cpu) {
    struct timespec ts;
    clock_gettime(cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *job(void *p) {
    Job *j = p;
    double t0 = clock_s(j->cpu_clock), flop;
    switch (simd_path()) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    case SIMD_AVX512: flop = chains_v4(); break;
    case SIMD_AVX2: flop = chains_v3(); break;
#endif
    default: flop = chains_v1(); break;
    }
    j->gflops = flop / (clock_s(j->cpu_clock) - t0) / 1e9;
    return NULL;
}

double fma_peak(int n, int cpu_clock) {
    Job jobs[64];
    pthread_t th[64];
    int started[64] = {0};
    n = n < 1 ? 1 : n > 64 ? 64 : n;
    for (int i = 0; i < n; i++) jobs[i] = (Job){cpu_clock, 0};
    for (int i = 1; i < n; i++) started[i] = pthread_create(&th[i], NULL, job, &jobs[i]) == 0;
    job(&jobs[0]);
    double total = jobs[0].gflops;
    for (int i = 1; i < n; i++) {
        if (started[i]) pthread_join(th[i], NULL);
        else job(&jobs[i]);
        total += jobs[i].gflops;
    }
    return total;
}
