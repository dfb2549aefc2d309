/* hf_ovrank.c: each head's W_V W_O effective rank (metrics.h
 * ov_effective_rank) from a checkpoint's weights, one layer at a time,
 * into the probe reducer. Head h reads the value rows of its KV group and
 * writes through its columns of o_proj; the fused layouts (GPT-2's
 * Conv1D c_attn, NeoX's per-head query_key_value) are read in place. */
#include "hf_ovrank.h"

#include "hf_steps.h"
#include "metrics.h"
#include "util.h"

/* Head h's value map V (dv x d) and output map O (d x dv) in layer l (W)
 * of Hl query heads (dv: hf_vdim, dh in the fused layouts). */
static void head_maps(const HfModel *m, const float *W[W_N_ROLES], int l, int h, int Hl,
                      StridedMat *V, StridedMat *O) {
    const HfArch *a = &m->a;
    const size_t d = (size_t)a->d, dh = (size_t)hf_vdim(a), hd = (size_t)Hl * dh;
    const size_t g = (size_t)(h * hf_layer_kv(a, l) / Hl);
    if (a->family == HF_GPT2) { /* Conv1D: [in, out] */
        *V = (StridedMat){W[W_QKV] + 2 * d + (size_t)h * dh, 1, 3 * d};
        *O = (StridedMat){W[W_O] + (size_t)h * dh * d, 1, d};
        return;
    }
    if (a->family == HF_NEOX) /* [3d, d], per head [q k v] */
        *V = (StridedMat){W[W_QKV] + ((size_t)h * 3 * dh + 2 * dh) * d, d, 1};
    else *V = (StridedMat){W[W_V] + g * dh * d, d, 1};
    *O = (StridedMat){W[W_O] + (size_t)h * dh, hd, 1};
}

int hf_ov_erank(HfModel *m, ProbeAcc *acc, char *err, size_t errlen) {
    const HfArch *a = &m->a;
    for (int l = 0; l < a->L; l++) {
        const float *W[W_N_ROLES];
        if (hf_weights_layer(&m->w, l, W, err, errlen) < 0) return -1;
        for (int h = 0, Hl = hf_layer_heads(a, l); h < Hl; h++) {
            StridedMat V, O;
            head_maps(m, W, l, h, Hl, &V, &O);
            if (probe_acc_ov_erank(acc, l, h, ov_effective_rank(V, O, a->d, hf_vdim(a))) < 0)
                return seterr(err, errlen, "out of memory for the W_V W_O ranks");
        }
    }
    return 0;
}
