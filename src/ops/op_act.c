/* op_act.c: elementwise activations (gate activations, SwiGLU, GELU, SiLU)
 * and the residual add. Backward recomputes from the saved input, which is
 * cheaper in memory than keeping activated copies, and accumulates (+=),
 * except the MLP's SwiGLU and GELU, which write (=): their gradients always
 * land in fresh scratch, so the model need not zero 2 x N x d_ff floats.
 */
#include <math.h>

#include "fastexp.h"
#include "opprof.h"
#include "ops.h"
#include "simd.h"
#include "stream.h"

/* An exported kernel NAME on the chosen SIMD path, its time counted as
 * activations by bench --profile (opprof.h). */
#define ACT_KERNEL(name, params, args)                                                             \
    SIMD_BODY void name##_path_body params { name##_body args; }                                   \
    SIMD_KERNEL_STATIC(name##_path, params, args)                                                  \
    void name params {                                                                             \
        int prof = opprof_enter(OPPROF_ACTIVATIONS);                                               \
        name##_path args;                                                                          \
        opprof_leave(prof);                                                                        \
    }

/* fast_expf: these loops run over every MLP and gate activation, and libm's
 * expf would keep them from vectorising */
static inline float sigmoidf(float x) { return 1.0f / (1.0f + fast_expf(-x)); }

SIMD_BODY void gate_act_forward_body(float *out, const float *inp, size_t n, GateAct act) {
    switch (act) {
    case ACT_SIGMOID:
        for (size_t i = 0; i < n; i++) out[i] = sigmoidf(inp[i]);
        break;
    case ACT_SILU:
        for (size_t i = 0; i < n; i++) out[i] = inp[i] * sigmoidf(inp[i]);
        break;
    case ACT_NS_SIGMOID:
        for (size_t i = 0; i < n; i++) out[i] = 0.5f + 0.5f * sigmoidf(inp[i]);
        break;
    case ACT_2SIGMOID:
        for (size_t i = 0; i < n; i++) out[i] = 2.0f * sigmoidf(inp[i]);
        break;
    case ACT_SOFTPLUS: /* max(z, 0) + ln(1 + e^-|z|): no overflow for large |z| */
        for (size_t i = 0; i < n; i++)
            out[i] = fmaxf(inp[i], 0.0f) + log1pf(fast_expf(-fabsf(inp[i])));
        break;
    case ACT_IDENTITY:
    default:
        for (size_t i = 0; i < n; i++) out[i] = inp[i];
        break;
    }
}
ACT_KERNEL(gate_act_forward, (float *out, const float *inp, size_t n, GateAct act),
           (out, inp, n, act))

SIMD_BODY void gate_act_backward_body(float *dinp, const float *dout, const float *inp, size_t n,
                                      GateAct act) {
    switch (act) {
    case ACT_SIGMOID:
        for (size_t i = 0; i < n; i++) {
            float s = sigmoidf(inp[i]);
            dinp[i] += dout[i] * s * (1.0f - s);
        }
        break;
    case ACT_SILU:
        for (size_t i = 0; i < n; i++) {
            float s = sigmoidf(inp[i]);
            dinp[i] += dout[i] * s * (1.0f + inp[i] * (1.0f - s));
        }
        break;
    case ACT_NS_SIGMOID:
        for (size_t i = 0; i < n; i++) {
            float s = sigmoidf(inp[i]);
            dinp[i] += dout[i] * 0.5f * s * (1.0f - s);
        }
        break;
    case ACT_2SIGMOID:
        for (size_t i = 0; i < n; i++) {
            float s = sigmoidf(inp[i]);
            dinp[i] += dout[i] * 2.0f * s * (1.0f - s);
        }
        break;
    case ACT_SOFTPLUS: /* d softplus(z) / dz = sigmoid(z) */
        for (size_t i = 0; i < n; i++) dinp[i] += dout[i] * sigmoidf(inp[i]);
        break;
    case ACT_IDENTITY:
    default:
        for (size_t i = 0; i < n; i++) dinp[i] += dout[i];
        break;
    }
}
ACT_KERNEL(gate_act_backward,
           (float *dinp, const float *dout, const float *inp, size_t n, GateAct act),
           (dinp, dout, inp, n, act))

/* out = silu(a) * b; out is hinted ahead (stream.h) */
SIMD_BODY void swiglu_forward_body(float *out, const float *a, const float *b, size_t n) {
    for (size_t i0 = 0; i0 < n; i0 += STREAM_CHUNK) {
        const size_t e = stream_end(i0, n);
        stream_hint(out, i0, n, 1);
        stream_hint(a, i0, n, 0);
        for (size_t i = i0; i < e; i++) out[i] = a[i] * sigmoidf(a[i]) * b[i];
    }
}
ACT_KERNEL(swiglu_forward, (float *out, const float *a, const float *b, size_t n), (out, a, b, n))

/* da, db and out of n elements, each buffer its own (restrict: three
 * outputs and three inputs are more pairs than the vectoriser checks for
 * overlap at run time). */
SIMD_BODY void swiglu_back_out(float *restrict da, float *restrict db, float *restrict out,
                               const float *restrict dout, const float *restrict a,
                               const float *restrict b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float s = sigmoidf(a[i]);
        out[i] = a[i] * s * b[i];
        da[i] = dout[i] * b[i] * s * (1.0f + a[i] * (1.0f - s));
        db[i] = dout[i] * a[i] * s;
    }
}

/* The NULL checks sit outside the loops so each loop vectorises. The
 * usual case runs one pass, one sigmoid per element, with a and b (the
 * forward's, read back from far away) hinted ahead; with out it also
 * writes the forward's a * s * b, each the forward's operations. */
SIMD_BODY void swiglu_backward_body(float *da, float *db, float *out, const float *dout,
                                    const float *a, const float *b, size_t n) {
    if (da && db) {
        for (size_t i0 = 0; i0 < n; i0 += STREAM_CHUNK) {
            const size_t e = stream_end(i0, n);
            stream_hint(a, i0, n, 0);
            stream_hint(b, i0, n, 0);
            if (out) {
                swiglu_back_out(da + i0, db + i0, out + i0, dout + i0, a + i0, b + i0, e - i0);
                continue;
            }
            for (size_t i = i0; i < e; i++) {
                float s = sigmoidf(a[i]);
                da[i] = dout[i] * b[i] * s * (1.0f + a[i] * (1.0f - s));
                db[i] = dout[i] * a[i] * s;
            }
        }
        return;
    }
    if (da)
        for (size_t i = 0; i < n; i++) {
            float s = sigmoidf(a[i]);
            da[i] = dout[i] * b[i] * s * (1.0f + a[i] * (1.0f - s));
        }
    if (db)
        for (size_t i = 0; i < n; i++) db[i] = dout[i] * a[i] * sigmoidf(a[i]);
    if (out) swiglu_forward_body(out, a, b, n);
}
ACT_KERNEL(swiglu_backward,
           (float *da, float *db, float *out, const float *dout, const float *a, const float *b,
            size_t n),
           (da, db, out, dout, a, b, n))

#define GELU_K 0.7978845608028654f /* sqrt(2 / pi) */
#define GELU_C 0.044715f

/* 0.5 x (1 + tanh(k (x + c x^3))) */
SIMD_BODY void gelu_forward_body(float *out, const float *inp, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        out[i] = 0.5f * x * (1.0f + tanhf(GELU_K * (x + GELU_C * x * x * x)));
    }
}
ACT_KERNEL(gelu_forward, (float *out, const float *inp, size_t n), (out, inp, n))

SIMD_BODY void gelu_backward_body(float *dinp, const float *dout, const float *inp, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float th = tanhf(GELU_K * (x + GELU_C * x * x * x));
        float dth = (1.0f - th * th) * GELU_K * (1.0f + 3.0f * GELU_C * x * x);
        dinp[i] = dout[i] * (0.5f * (1.0f + th) + 0.5f * x * dth);
    }
}
ACT_KERNEL(gelu_backward, (float *dinp, const float *dout, const float *inp, size_t n),
           (dinp, dout, inp, n))

/* The same tanh GELU as x sigmoid(2u), u = k (x + c x^3), through
 * fast_expf: a loop that vectorises, where tanhf is a call per element. */
SIMD_BODY void gelu_fast_forward_body(float *out, const float *inp, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        out[i] = x / (1.0f + fast_expf(-2.0f * GELU_K * (x + GELU_C * x * x * x)));
    }
}
ACT_KERNEL(gelu_fast_forward, (float *out, const float *inp, size_t n), (out, inp, n))

/* 0.5 x (1 + erf(x / sqrt 2)) */
void gelu_erf_forward(float *out, const float *inp, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = 0.5f * inp[i] * (1.0f + erff(inp[i] * 0.70710678f));
}

void relu_forward(float *out, const float *inp, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

void silu_forward(float *out, const float *inp, size_t n) {
    gate_act_forward(out, inp, n, ACT_SILU);
}

void silu_backward(float *dinp, const float *dout, const float *inp, size_t n) {
    gate_act_backward(dinp, dout, inp, n, ACT_SILU);
}

/* Counted by bench --profile as "other", with the embeddings. */
SIMD_BODY void residual_forward_body(float *out, const float *a, const float *b, size_t n) {
    for (size_t i0 = 0; i0 < n; i0 += STREAM_CHUNK) {
        const size_t e = stream_end(i0, n);
        stream_hint(a, i0, n, 0);
        stream_hint(out, i0, n, 1);
        for (size_t i = i0; i < e; i++) out[i] = a[i] + b[i];
    }
}
SIMD_KERNEL(residual_forward, (float *out, const float *a, const float *b, size_t n),
            (out, a, b, n))
