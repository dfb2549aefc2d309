/* adamw.c: see adamw.h. */
#include "adamw.h"

#include <math.h>

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

void adamw_update_range(float *params, const float *grads, float gscale, float *m, float *v,
                        const ParamTable *t, const Config *cfg, float lr, long long step, size_t i0,
                        size_t i1) {
    const float b1 = cfg->beta1, b2 = cfg->beta2, eps = cfg->adam_eps;
    const float bc1 = 1.0f - powf(b1, (float)(step + 1));
    const float bc2 = 1.0f - powf(b2, (float)(step + 1));
    /* the same operation order as torch.optim.AdamW, so fixtures agree */
    const float step_size = lr / bc1, sqrt_bc2 = sqrtf(bc2);
    for (int k = 0; k < t->count; k++) {
        const ParamInfo *pi = &t->info[k];
        size_t a = pi->offset > i0 ? pi->offset : i0;
        size_t b = pi->offset + pi->numel < i1 ? pi->offset + pi->numel : i1;
        if (a >= b) continue;
        const float decay = pi->decay ? decay_factor(cfg, lr) : 0.0f;
        float *p = params + a, *mm = m + a, *vv = v + a;
        const float *g = grads + a;
        for (size_t i = 0; i < b - a; i++) {
            p[i] -= decay * p[i];
            const float gi = g[i] * gscale;
            mm[i] = b1 * mm[i] + (1.0f - b1) * gi;
            vv[i] = b2 * vv[i] + (1.0f - b2) * gi * gi;
            p[i] -= step_size * mm[i] / (sqrtf(vv[i]) / sqrt_bc2 + eps);
        }
    }
}
