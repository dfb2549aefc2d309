/* adamw.h: AdamW, the warmup + cosine schedule, and global-norm clipping,
 * exactly as docs/MODEL.md "Optimiser" states (torch.optim.AdamW semantics). */
#ifndef GATELAB_ADAMW_H
#define GATELAB_ADAMW_H

#include <stddef.h>
#include "config.h"
#include "model.h"

/* Learning rate used at step s (0-based). */
float lr_at_step(const Config *cfg, long long s);

/* s plus the squares of g[i0 .. i1), added in double one element after
 * the other in index order: a sum over [0, n) cut at any point and
 * continued from the first part's result has the bits of one pass. */
double grad_sumsq(double s, const float *g, size_t i0, size_t i1);

/* The shards' gradient sum over elements [i0, i1): g[0][i] = g[0][i] * w[0]
 * + w[1] * g[1][i] + ... + w[n-1] * g[n-1][i], each element's operations
 * in that order, those of one pass per shard (g[0] *= w[0], then
 * g[0] += w[j] * g[j] for each j); with sumsq, returns s advanced by
 * grad_sumsq over the summed elements, else s. On the widest SIMD path. */
double grad_sum_shards(float *const *g, const float *w, int n, size_t i0, size_t i1, int sumsq,
                       double s);

/* Global L2 norm of n gradients (grad_sumsq over all of them, then sqrt). */
double grad_global_norm(const float *g, size_t n);

/* The factor that brings a gradient of norm `norm` to norm clip: 1 when
 * clip is 0, the norm is at most clip, or the norm is not finite. */
float grad_clip_scale(double norm, float clip);

/* Scale g so its norm is at most clip; returns the pre-clip norm. clip = 0
 * turns clipping off: g is left as it is, whatever its norm. */
double grad_clip(float *g, size_t n, float clip);

/* The decoupled decay of a decayed tensor at a step of learning rate lr
 * (p -= factor * p): lr * weight_decay with wd_scale = lr, weight_decay *
 * (lr / cfg->lr), the schedule's multiplier alone, with wd_scale = fixed. */
float decay_factor(const Config *cfg, float lr);

/* One AdamW update of every tensor in the table. step is 0-based (the bias
 * correction uses step + 1). m and v have the arena's layout. */
void adamw_update(float *params, const float *grads, float *m, float *v, const ParamTable *t,
                  const Config *cfg, float lr, long long step);
/* adamw_update on the arena's elements [i0, i1) only, with each gradient
 * taken as grads[i] * gscale (the clip factor, or 1: the bits of a
 * gradient scaled in place first): every element's update depends on that
 * element alone, so ranges on different threads give the bits of one
 * whole update. */
void adamw_update_range(float *params, const float *grads, float gscale, float *m, float *v,
                        const ParamTable *t, const Config *cfg, float lr, long long step, size_t i0,
                        size_t i1);

#endif
