/* op_gate.c: applying activated gate scores to a tensor viewed as
 * x[M, G, Cg], with the broadcast of the gate's granularity; the
 * head-shared mean; the head-slice linear of head-gate-linear; and the
 * prefix linear of a narrow-input gate (gate_in_dim).
 *
 * FORM_ADD is defined for every broadcast (out = x + s broadcast) though
 * the model only uses it elementwise; its score gradient is the sum of
 * dout over the broadcast axes.
 */
#include "opprof.h"
#include "ops.h"

/* Offset of the score for element (m, g, c) in s, by broadcast kind. */
static inline size_t score_index(GateBroadcast kind, size_t m, size_t g, size_t c, size_t G,
                                 size_t Cg) {
    switch (kind) {
    case GB_HEAD: return m * G + g;
    case GB_SHARED: return m * Cg + c;
    case GB_CONST: return g * Cg + c;
    case GB_ELEM:
    default: return (m * G + g) * Cg + c;
    }
}

/* out[M,G,Cg] = x * s (or x + s) */
void gate_apply_forward(float *out, const float *x, const float *s, GateBroadcast kind,
                        GateForm form, int M, int G, int Cg) {
    int prof = opprof_enter(OPPROF_ACTIVATIONS);
    size_t GG = (size_t)G, CC = (size_t)Cg;
    for (size_t m = 0; m < (size_t)M; m++) {
        for (size_t g = 0; g < GG; g++) {
            size_t base = (m * GG + g) * CC;
            const float *xr = x + base;
            float *o = out + base;
            const float *sr = s + score_index(kind, m, g, 0, GG, CC);
            if (kind == GB_HEAD) {
                float sv = sr[0];
                if (form == FORM_ADD)
                    for (size_t c = 0; c < CC; c++) o[c] = xr[c] + sv;
                else
                    for (size_t c = 0; c < CC; c++) o[c] = xr[c] * sv;
            } else {
                if (form == FORM_ADD)
                    for (size_t c = 0; c < CC; c++) o[c] = xr[c] + sr[c];
                else
                    for (size_t c = 0; c < CC; c++) o[c] = xr[c] * sr[c];
            }
        }
    }
    opprof_leave(prof);
}

/* dx = dout * s (or dout), written: every caller's dx is fresh scratch;
 * ds += dout * x (or dout), summed over the broadcast axes. */
void gate_apply_backward(float *dx, float *ds, const float *dout, const float *x, const float *s,
                         GateBroadcast kind, GateForm form, int M, int G, int Cg) {
    int prof = opprof_enter(OPPROF_ACTIVATIONS);
    size_t GG = (size_t)G, CC = (size_t)Cg;
    int add = form == FORM_ADD;
    for (size_t m = 0; m < (size_t)M; m++) {
        for (size_t g = 0; g < GG; g++) {
            size_t base = (m * GG + g) * CC;
            const float *xr = x + base;
            const float *d = dout + base;
            size_t si = score_index(kind, m, g, 0, GG, CC);
            if (dx) {
                float *dxr = dx + base;
                if (add)
                    for (size_t c = 0; c < CC; c++) dxr[c] = d[c];
                else if (kind == GB_HEAD)
                    for (size_t c = 0; c < CC; c++) dxr[c] = d[c] * s[si];
                else
                    for (size_t c = 0; c < CC; c++) dxr[c] = d[c] * s[si + c];
            }
            if (!ds) continue;
            if (kind == GB_HEAD) {
                float acc = 0.0f;
                if (add)
                    for (size_t c = 0; c < CC; c++) acc += d[c];
                else
                    for (size_t c = 0; c < CC; c++) acc += d[c] * xr[c];
                ds[si] += acc;
            } else {
                float *dsr = ds + si;
                if (add)
                    for (size_t c = 0; c < CC; c++) dsr[c] += d[c];
                else
                    for (size_t c = 0; c < CC; c++) dsr[c] += d[c] * xr[c];
            }
        }
    }
    opprof_leave(prof);
}

/* out[M,Cg] = mean_g inp[M,G,Cg] */
void group_mean_forward(float *out, const float *inp, int M, int G, int Cg) {
    size_t GG = (size_t)G, CC = (size_t)Cg;
    float inv = G > 0 ? 1.0f / (float)G : 0.0f;
    for (size_t m = 0; m < (size_t)M; m++) {
        float *o = out + m * CC;
        for (size_t c = 0; c < CC; c++) o[c] = 0.0f;
        for (size_t g = 0; g < GG; g++) {
            const float *r = inp + (m * GG + g) * CC;
            for (size_t c = 0; c < CC; c++) o[c] += r[c];
        }
        for (size_t c = 0; c < CC; c++) o[c] *= inv;
    }
}

void group_mean_backward(float *dinp, const float *dout, int M, int G, int Cg) {
    size_t GG = (size_t)G, CC = (size_t)Cg;
    float inv = G > 0 ? 1.0f / (float)G : 0.0f;
    for (size_t m = 0; m < (size_t)M; m++) {
        const float *d = dout + m * CC;
        for (size_t g = 0; g < GG; g++) {
            float *r = dinp + (m * GG + g) * CC;
            for (size_t c = 0; c < CC; c++) r[c] += d[c] * inv;
        }
    }
}

/* z[M,H] = x[M, h*S : (h+1)*S] . w[h] + b[h]; b may be NULL */
void headslice_linear_forward(float *z, const float *x, const float *w, const float *b, int M,
                              int H, int S) {
    size_t HH = (size_t)H, SS = (size_t)S;
    for (size_t m = 0; m < (size_t)M; m++) {
        for (size_t h = 0; h < HH; h++) {
            const float *xr = x + m * HH * SS + h * SS;
            const float *wr = w + h * SS;
            float acc = 0.0f;
            for (size_t c = 0; c < SS; c++) acc += xr[c] * wr[c];
            z[m * HH + h] = acc + (b ? b[h] : 0.0f);
        }
    }
}

void headslice_linear_backward(float *dx, float *dw, float *db, const float *dz, const float *x,
                               const float *w, int M, int H, int S) {
    size_t HH = (size_t)H, SS = (size_t)S;
    for (size_t m = 0; m < (size_t)M; m++) {
        for (size_t h = 0; h < HH; h++) {
            float g = dz[m * HH + h];
            size_t off = m * HH * SS + h * SS;
            if (dx)
                for (size_t c = 0; c < SS; c++) dx[off + c] += g * w[h * SS + c];
            if (dw)
                for (size_t c = 0; c < SS; c++) dw[h * SS + c] += g * x[off + c];
            if (db) db[h] += g;
        }
    }
}

/* z[M,C] = x[M, 0:K] . w[C, 0:K]; x rows are D wide */
void prefix_linear_forward(float *z, const float *x, const float *w, int M, int D, int K, int C) {
    size_t DD = (size_t)D, KK = (size_t)K, CC = (size_t)C;
    for (size_t m = 0; m < (size_t)M; m++) {
        const float *xr = x + m * DD;
        for (size_t c = 0; c < CC; c++) {
            const float *wr = w + c * KK;
            float acc = 0.0f;
            for (size_t j = 0; j < KK; j++) acc += xr[j] * wr[j];
            z[m * CC + c] = acc;
        }
    }
}

/* dx[M, 0:K] += dz w; dw += dz^T x[:, 0:K] */
void prefix_linear_backward(float *dx, float *dw, const float *dz, const float *x, const float *w,
                            int M, int D, int K, int C) {
    size_t DD = (size_t)D, KK = (size_t)K, CC = (size_t)C;
    for (size_t m = 0; m < (size_t)M; m++) {
        for (size_t c = 0; c < CC; c++) {
            float g = dz[m * CC + c];
            if (dx)
                for (size_t j = 0; j < KK; j++) dx[m * DD + j] += g * w[c * KK + j];
            for (size_t j = 0; j < KK; j++) dw[c * KK + j] += g * x[m * DD + j];
        }
    }
}
