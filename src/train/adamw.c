/* adamw.c: see adamw.h. */
#include "adamw.h"

#include <math.h>
#include <string.h>

#include "simd.h"

float lr_at_step(const Config *cfg, long long s) {
    if (cfg->warmup > 0 && s < cfg->warmup) return cfg->lr * (float)(s + 1) / (float)cfg->warmup;
    long long span = cfg->steps - cfg->warmup;
    if (span < 1) span = 1;
    double p = (double)(s - cfg->warmup) / (double)span;
    if (p > 1.0) p = 1.0;
    double c = 0.5 * (1.0 + cos(M_PI * p));
    return (float)(cfg->lr * (cfg->min_lr_frac + (1.0 - cfg->min_lr_frac) * c));
}

double grad_sumsq(double s, const float *g, size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; i++) s += (double)g[i] * (double)g[i];
    return s;
}

enum { SUM_BLOCK = 16 };
typedef float SumVec __attribute__((vector_size(SUM_BLOCK * sizeof(float))));

/* One block of SUM_BLOCK elements at a time, every shard's term added in
 * shard order. The squares' chain is bound by the add's latency; the next
 * block's sum, independent of it, runs in its shadow. */
SIMD_BODY double grad_sum_shards_body(float *const *g, const float *w, int n, size_t i0, size_t i1,
                                      int sumsq, double s) {
    float *g0 = g[0];
    size_t i = i0;
    for (; i + SUM_BLOCK <= i1; i += SUM_BLOCK) {
        SumVec x, y;
        memcpy(&x, g0 + i, sizeof x);
        x = x * w[0];
        for (int j = 1; j < n; j++) {
            memcpy(&y, g[j] + i, sizeof y);
            x += w[j] * y;
        }
        memcpy(g0 + i, &x, sizeof x);
        if (sumsq)
            for (int k = 0; k < SUM_BLOCK; k++) s += (double)x[k] * (double)x[k];
    }
    for (; i < i1; i++) {
        float x = g0[i] * w[0];
        for (int j = 1; j < n; j++) x += w[j] * g[j][i];
        g0[i] = x;
        if (sumsq) s += (double)x * (double)x;
    }
    return s;
}
SIMD_KERNEL_RET(, double, grad_sum_shards,
                (float *const *g, const float *w, int n, size_t i0, size_t i1, int sumsq, double s),
                (g, w, n, i0, i1, sumsq, s))

double grad_global_norm(const float *g, size_t n) { return sqrt(grad_sumsq(0.0, g, 0, n)); }

float grad_clip_scale(double norm, float clip) {
    if (clip > 0.0f && norm > clip && isfinite(norm)) return (float)(clip / (norm + 1e-6));
    return 1.0f;
}

double grad_clip(float *g, size_t n, float clip) {
    double norm = grad_global_norm(g, n);
    float scale = grad_clip_scale(norm, clip);
    if (scale != 1.0f)
        for (size_t i = 0; i < n; i++) g[i] *= scale;
    return norm;
}

float decay_factor(const Config *cfg, float lr) {
    if (cfg->wd_scale == WD_SCALE_FIXED) return cfg->weight_decay * (lr / cfg->lr);
    return lr * cfg->weight_decay;
}

void adamw_update(float *params, const float *grads, float *m, float *v, const ParamTable *t,
                  const Config *cfg, float lr, long long step) {
    adamw_update_range(params, grads, 1.0f, m, v, t, cfg, lr, step, 0, t->total);
}

/* The scalars of one tensor's update. */
typedef struct {
    float decay, gscale, b1, b2, eps, step_size, sqrt_bc2;
} AdamwScalars;

/* One tensor's elements: the same operations in the same order on every
 * element as torch.optim.AdamW, so fixtures agree. Compiled three times
 * (simd.h); this file is built with -fno-math-errno (meson.build), which
 * changes no result (sqrtf is IEEE's correctly rounded root either way)
 * but lets the loop use vector square roots instead of a call per element
 * that may set errno. */
SIMD_BODY void adamw_tensor_body(float *restrict p, const float *restrict g, float *restrict mm,
                                 float *restrict vv, size_t n, const AdamwScalars *k) {
    const float decay = k->decay, gscale = k->gscale, b1 = k->b1, b2 = k->b2, eps = k->eps;
    const float step_size = k->step_size, sqrt_bc2 = k->sqrt_bc2;
    for (size_t i = 0; i < n; i++) {
        p[i] -= decay * p[i];
        const float gi = g[i] * gscale;
        mm[i] = b1 * mm[i] + (1.0f - b1) * gi;
        vv[i] = b2 * vv[i] + (1.0f - b2) * gi * gi;
        p[i] -= step_size * mm[i] / (sqrtf(vv[i]) / sqrt_bc2 + eps);
    }
}
SIMD_KERNEL_STATIC(adamw_tensor,
                   (float *restrict p, const float *restrict g, float *restrict mm,
                    float *restrict vv, size_t n, const AdamwScalars *k),
                   (p, g, mm, vv, n, k))

void adamw_update_range(float *params, const float *grads, float gscale, float *m, float *v,
                        const ParamTable *t, const Config *cfg, float lr, long long step, size_t i0,
                        size_t i1) {
    AdamwScalars k = {.gscale = gscale, .b1 = cfg->beta1, .b2 = cfg->beta2, .eps = cfg->adam_eps};
    const float bc1 = 1.0f - powf(k.b1, (float)(step + 1));
    const float bc2 = 1.0f - powf(k.b2, (float)(step + 1));
    k.step_size = lr / bc1, k.sqrt_bc2 = sqrtf(bc2);
    for (int j = 0; j < t->count; j++) {
        const ParamInfo *pi = &t->info[j];
        size_t a = pi->offset > i0 ? pi->offset : i0;
        size_t b = pi->offset + pi->numel < i1 ? pi->offset + pi->numel : i1;
        if (a >= b) continue;
        k.decay = pi->decay ? decay_factor(cfg, lr) : 0.0f;
        adamw_tensor(params + a, grads + a, m + a, v + a, b - a, &k);
    }
}
