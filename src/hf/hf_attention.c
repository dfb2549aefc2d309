/* hf_attention.c: blocked causal attention, one (head, query block) per
 * task. Each task: S = scale Q_blk K^T (sgemm), row softmax over the
 * visible keys, record column 0 and the first M rows, O_blk = S V. */
#include "hf_attention.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fastexp.h" /* SIMD_CLONES */
#include "hf_fastexp.h"
#include "hf_parallel.h"

#define QB 64 /* queries per task */

#define LANES 8 /* independent partial max/sum chains (they vectorise) */

/* max of s[0..n), n >= 1; exact, so the lane order does not matter. */
static inline float row_max(const float *s, int n) {
    float m[LANES];
    int j = 0;
    for (int k = 0; k < LANES; k++) m[k] = s[0];
    for (; j + LANES <= n; j += LANES)
        for (int k = 0; k < LANES; k++) m[k] = s[j + k] > m[k] ? s[j + k] : m[k];
    for (; j < n; j++) m[0] = s[j] > m[0] ? s[j] : m[0];
    float mx = m[0];
    for (int k = 1; k < LANES; k++) mx = m[k] > mx ? m[k] : mx;
    return mx;
}

/* sum of s[0..n) in double, over LANES partial sums. */
static inline double row_sum(const float *s, int n) {
    double a[LANES] = {0};
    int j = 0;
    for (; j + LANES <= n; j += LANES)
        for (int k = 0; k < LANES; k++) a[k] += s[j + k];
    for (; j < n; j++) a[0] += s[j];
    double sum = 0.0;
    for (int k = 0; k < LANES; k++) sum += a[k];
    return sum;
}

/* Softmax of row r (query t) over keys 0..t; zero beyond. */
SIMD_CLONES static void softmax_row(float *s, int t, int keys) {
    const float mx = row_max(s, t + 1);
    for (int j = 0; j <= t; j++) s[j] = hf_expf(s[j] - mx); /* vectorises */
    float inv = (float)(1.0 / row_sum(s, t + 1));
    for (int j = 0; j <= t; j++) s[j] *= inv;
    if (keys > t + 1) memset(s + t + 1, 0, (size_t)(keys - t - 1) * sizeof(float));
}

static void run_task(const HfAttn *a, int h, int blk, float *S) {
    const int ldq = a->ldq, ldk = a->ldkv, ldo = a->H * a->dh, kvh = h / (a->H / a->Hkv);
    const int t0 = blk * QB, t1 = t0 + QB < a->T ? t0 + QB : a->T, n = t1 - t0, keys = t1;
    const float scale = 1.0f / sqrtf((float)a->dh);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, keys, a->dh, scale,
                a->Q + (size_t)t0 * ldq + (size_t)h * a->dh, ldq, a->K + (size_t)kvh * a->dh, ldk,
                0.0f, S, keys);
    for (int r = 0; r < n; r++) {
        int t = t0 + r;
        float *s = S + (size_t)r * keys;
        softmax_row(s, t, keys);
        a->first_col[(size_t)h * a->T + t] = s[0];
        if (t < a->M && a->maps) {
            float *row = a->maps + ((size_t)h * a->M + t) * a->M;
            int k = keys < a->M ? keys : a->M;
            memcpy(row, s, (size_t)k * sizeof(float));
            if (k < a->M) memset(row + k, 0, (size_t)(a->M - k) * sizeof(float));
        }
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, a->dh, keys, 1.0f, S, keys,
                a->V + (size_t)kvh * a->dh, ldk, 0.0f, a->O + (size_t)t0 * ldo + (size_t)h * a->dh,
                ldo);
}

/* Worker ids [w0, w1): worker w takes tasks w, w + n, ... with its own
 * rows of the scratch. Later blocks cost more: they go out first. */
static void workers(void *ctx, size_t w0, size_t w1) {
    const HfAttn *a = ctx;
    const int n = a->threads < 1 ? 1 : a->threads, nblk = (a->T + QB - 1) / QB, tasks = a->H * nblk;
    for (size_t w = w0; w < w1; w++)
        for (int i = (int)w; i < tasks; i += n) {
            int blk = nblk - 1 - i / a->H, h = i % a->H;
            run_task(a, h, blk, a->scratch + w * (size_t)QB * a->T);
        }
}

size_t hf_attention_scratch(int T, int threads) {
    return (size_t)(threads < 1 ? 1 : threads) * QB * (size_t)T;
}

void hf_attention_forward(const HfAttn *a) {
    const size_t n = a->threads < 1 ? 1 : (size_t)a->threads;
    hf_parallel_for((int)n, n, workers, (void *)a);
}
