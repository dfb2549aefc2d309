/* op_xsa.c: exclusive self-attention (Zhai 2026, docs/variants.md): each
 * head's SDPA output y_t loses its component along the token's own value
 * v_t, z_t = y_t - (y_t . v_t) v_t / (v_t . v_t + XSA_EPS). XSA_EPS only
 * keeps a zero value vector from dividing by zero.
 */
#include "opprof.h"
#include "ops.h"

static float dot(const float *a, const float *b, int n) {
    float s = 0.0f;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* z = y - c v with c = (y . v) / (v . v + eps), per row m and head h */
void xsa_forward(float *z, const float *y, const float *v, int M, int H, int Hkv, int dh) {
    int prof = opprof_enter(OPPROF_ACTIVATIONS);
    const int rep = H / Hkv;
    for (size_t m = 0; m < (size_t)M; m++) {
        for (int h = 0; h < H; h++) {
            const size_t yo = (m * (size_t)H + (size_t)h) * (size_t)dh;
            const float *vr = v + (m * (size_t)Hkv + (size_t)(h / rep)) * (size_t)dh;
            const float c = dot(y + yo, vr, dh) / (dot(vr, vr, dh) + XSA_EPS);
            for (int i = 0; i < dh; i++) z[yo + i] = y[yo + i] - c * vr[i];
        }
    }
    opprof_leave(prof);
}

/* With a = y . v, b = v . v + eps, c = a / b and g = dz:
 *   dy = g - (g . v) / b v
 *   dv += -c g - (g . v) / b (y - 2 c v) */
void xsa_backward(float *dy, float *dv, const float *dz, const float *y, const float *v, int M,
                  int H, int Hkv, int dh) {
    int prof = opprof_enter(OPPROF_ACTIVATIONS);
    const int rep = H / Hkv;
    for (size_t m = 0; m < (size_t)M; m++) {
        for (int h = 0; h < H; h++) {
            const size_t yo = (m * (size_t)H + (size_t)h) * (size_t)dh;
            const size_t vo = (m * (size_t)Hkv + (size_t)(h / rep)) * (size_t)dh;
            const float *g = dz + yo, *yr = y + yo, *vr = v + vo;
            const float b = dot(vr, vr, dh) + XSA_EPS;
            const float c = dot(yr, vr, dh) / b, gv = dot(g, vr, dh) / b;
            for (int i = 0; i < dh; i++) {
                dy[yo + i] = g[i] - gv * vr[i];
                dv[vo + i] += -c * g[i] - gv * (yr[i] - 2.0f * c * vr[i]);
            }
        }
    }
    opprof_leave(prof);
}
