/* op_rope.c: rotary position embedding, rotate-half convention (HF Llama),
 * with YaRN NTK-by-parts frequency interpolation (and Llama 3's rescaling,
 * for pretrained checkpoints).
 *
 * YaRN (Peng et al. 2023) leaves fast-rotating dims alone (they see many
 * periods inside the original context), divides the slow ones by the scale
 * (interpolation), and ramps linearly in between; alpha = 1, beta = 32.
 * The paper ramps linearly in a pair's turns within the original context;
 * its reference code, which Hugging Face checkpoints follow, ramps
 * linearly in the pair index between the same two bounds (yarn_inv_freq
 * does both, YarnParams.ramp).
 */
#include <math.h>
#include <string.h>

#include "opprof.h"
#include "ops.h"
#include "simd.h"

/* r_i: the turns rotary pair i makes within orig_len positions. */
static double pair_turns(double f, double orig_len) {
    const double two_pi = 6.283185307179586;
    return orig_len * f / two_pi;
}

static double pair_freq(int i, int dh, double base) {
    return 1.0 / pow(base, (double)(2 * i) / (double)dh);
}

static double unit_clamp(double v) { return v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v); }

/* The share of a pair's frequency YaRN keeps by its turns r (the paper's
 * ramp): 0 interpolated at r <= slow, 1 kept at r >= fast. */
static double keep_share(double r, double slow, double fast) {
    return unit_clamp((r - slow) / (fast - slow));
}

/* The (fractional) index of the pair that turns n times within orig_len
 * positions: r_i = n solved for i (the reference code's
 * find_correction_dim). */
static double pair_at_turns(double n, int rd, double base, double orig_len) {
    return (double)rd * log(orig_len / (n * 6.283185307179586)) / (2.0 * log(base));
}

float yarn_attention_factor(float factor, float mscale) {
    return factor <= 1.0f ? 1.0f : 0.1f * mscale * logf(factor) + 1.0f;
}

void yarn_inv_freq(float *inv_freq, int rd, double base, const YarnParams *y) {
    double lo = 0.0, hi = 1.0; /* YARN_RAMP_PAIRS: the ramp's first and last pair */
    if (y->ramp == YARN_RAMP_PAIRS) {
        lo = pair_at_turns(y->beta_fast, rd, base, y->orig_len);
        hi = pair_at_turns(y->beta_slow, rd, base, y->orig_len);
        if (y->truncate) lo = floor(lo), hi = ceil(hi);
        lo = lo > 0.0 ? lo : 0.0, hi = hi < rd - 1 ? hi : rd - 1;
        if (lo == hi) hi += 0.001;
    }
    for (int i = 0; i < rd / 2; i++) {
        double f = pair_freq(i, rd, base);
        double g = y->ramp == YARN_RAMP_TURNS
                       ? keep_share(pair_turns(f, y->orig_len), y->beta_slow, y->beta_fast)
                       : 1.0 - unit_clamp(((double)i - lo) / (hi - lo));
        inv_freq[i] = (float)((1.0 - g) * f / y->factor + g * f);
    }
}

float rope_inv_freq(float *inv_freq, int dh, float base, float scale, int orig_len) {
    if (scale > 1.0f) {
        const YarnParams y = {scale, orig_len, YARN_BETA, YARN_ALPHA, YARN_RAMP_TURNS, 0};
        yarn_inv_freq(inv_freq, dh, (double)base, &y);
        return yarn_attention_factor(scale, 1.0f);
    }
    for (int i = 0; i < dh / 2; i++) inv_freq[i] = (float)pair_freq(i, dh, (double)base);
    return 1.0f;
}

YarnSplit yarn_split(int dh, double base, int orig_len, double *turns) {
    YarnSplit s = {dh / 2, 0, 0, 0, 0.0};
    for (int i = 0; i < s.pairs; i++) {
        double r = pair_turns(pair_freq(i, dh, base), orig_len),
               g = keep_share(r, YARN_ALPHA, YARN_BETA);
        if (turns) turns[i] = r;
        if (i == 0) s.fastest = r;
        s.kept += g >= 1.0;
        s.interpolated += g <= 0.0;
        s.ramped += g > 0.0 && g < 1.0;
    }
    return s;
}

int yarn_keep_len(void) { return (int)ceil(YARN_BETA * 6.283185307179586); }

/* cos_t, sin_t [T, dh/2]: angle = (pos0 + t) * inv_freq[i], in float as
 * PyTorch forms it (float positions times float frequencies). */
void rope_tables(float *cos_t, float *sin_t, const float *inv_freq, int T, int dh, int pos0) {
    size_t half = (size_t)(dh / 2);
    for (int t = 0; t < T; t++) {
        float p = (float)(pos0 + t);
        for (size_t i = 0; i < half; i++) {
            float a = p * inv_freq[i];
            cos_t[(size_t)t * half + i] = cosf(a);
            sin_t[(size_t)t * half + i] = sinf(a);
        }
    }
}

void rope_llama3_scale(float *inv_freq, int n, double factor, double low, double high,
                       double orig_len) {
    const double two_pi = 6.283185307179586, lo_wl = orig_len / low, hi_wl = orig_len / high;
    for (int i = 0; i < n; i++) {
        double inv = inv_freq[i], wl = two_pi / inv, f = inv;
        if (wl > lo_wl) {
            f = inv / factor;
        } else if (wl >= hi_wl) {
            double s = (orig_len / wl - low) / (high - low);
            f = (1.0 - s) * inv / factor + s * inv;
        }
        inv_freq[i] = (float)f;
    }
}

/* One rotation per (b, t, head) of its first rd dims: (x1, x2) ->
 * (x1 c - x2 s, x2 c + x1 s), read from src and written to dst: the same
 * array (in place), or one that does not overlap it (then rd = dh). sign
 * = -1 applies the inverse (transpose) rotation. Pairs go ROPE_LANES at a
 * time in vectors (each pair's values are read before its results are
 * written, as in place needs), the rest one at a time; every pair does the
 * same operations either way. Compiled three times (simd.h). */
#define ROPE_LANES 8

typedef float RopeVec __attribute__((vector_size(ROPE_LANES * sizeof(float))));

SIMD_BODY void rope_rows_body(float *dst, const float *src, const float *cos_t, const float *sin_t,
                              int B, int T, int nh, int dh, int rd, float sign) {
    size_t half = (size_t)(rd / 2);
    for (size_t b = 0; b < (size_t)B; b++) {
        for (size_t t = 0; t < (size_t)T; t++) {
            const float *c = cos_t + t * half;
            const float *s = sin_t + t * half;
            size_t row = (b * (size_t)T + t) * (size_t)nh * (size_t)dh;
            for (size_t h = 0; h < (size_t)nh; h++) {
                float *y1 = dst + row + h * (size_t)dh, *y2 = y1 + half;
                const float *x1 = src + row + h * (size_t)dh, *x2 = x1 + half;
                size_t i = 0;
                for (; i + ROPE_LANES <= half; i += ROPE_LANES) {
                    RopeVec a, bb, cv, si;
                    memcpy(&a, x1 + i, sizeof a);
                    memcpy(&bb, x2 + i, sizeof bb);
                    memcpy(&cv, c + i, sizeof cv);
                    memcpy(&si, s + i, sizeof si);
                    si = sign * si;
                    RopeVec o1 = a * cv - bb * si, o2 = bb * cv + a * si;
                    memcpy(y1 + i, &o1, sizeof o1);
                    memcpy(y2 + i, &o2, sizeof o2);
                }
                for (; i < half; i++) {
                    float a = x1[i], bb = x2[i], si = sign * s[i];
                    y1[i] = a * c[i] - bb * si;
                    y2[i] = bb * c[i] + a * si;
                }
            }
        }
    }
}
SIMD_KERNEL_STATIC(rope_rows,
                   (float *dst, const float *src, const float *cos_t, const float *sin_t, int B,
                    int T, int nh, int dh, int rd, float sign),
                   (dst, src, cos_t, sin_t, B, T, nh, dh, rd, sign))

/* rope_rows in place (x read and written) and from x into a y that does
 * not overlap it. */
static void rope_in_place(float *x, const float *cos_t, const float *sin_t, int B, int T, int nh,
                          int dh, int rd, float sign) {
    int prof = opprof_enter(OPPROF_ATTENTION);
    rope_rows(x, x, cos_t, sin_t, B, T, nh, dh, rd, sign);
    opprof_leave(prof);
}

static void rope_apart(float *y, const float *x, const float *cos_t, const float *sin_t, int B,
                       int T, int nh, int dh) {
    int prof = opprof_enter(OPPROF_ATTENTION);
    rope_rows(y, x, cos_t, sin_t, B, T, nh, dh, dh, 1.0f);
    opprof_leave(prof);
}

void rope_forward_to(float *y, const float *x, const float *cos_t, const float *sin_t, int B, int T,
                     int nh, int dh) {
    if (y == x) rope_in_place(y, cos_t, sin_t, B, T, nh, dh, dh, 1.0f);
    else rope_apart(y, x, cos_t, sin_t, B, T, nh, dh);
}

/* x[B,T,nh,dh] in place */
void rope_forward(float *x, const float *cos_t, const float *sin_t, int B, int T, int nh, int dh) {
    rope_in_place(x, cos_t, sin_t, B, T, nh, dh, dh, 1.0f);
}

void rope_forward_part(float *x, const float *cos_t, const float *sin_t, int B, int T, int nh,
                       int dh, int rd) {
    rope_in_place(x, cos_t, sin_t, B, T, nh, dh, rd, 1.0f);
}

/* dx[B,T,nh,dh] in place: the rotation is orthogonal, so R^T = R(-angle). */
void rope_backward(float *dx, const float *cos_t, const float *sin_t, int B, int T, int nh,
                   int dh) {
    rope_in_place(dx, cos_t, sin_t, B, T, nh, dh, dh, -1.0f);
}
