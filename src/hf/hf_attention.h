/* hf_attention.h: causal softmax attention of a pretrained model's layer,
 * with GQA, over threads (OpenBLAS single-threaded inside each), keeping
 * only what the probe stores: the first-token column of every head and
 * the full maps of the first M queries. */
#ifndef GATELAB_HF_ATTENTION_H
#define GATELAB_HF_ATTENTION_H

#include <stddef.h>

typedef struct {
    int T, H, Hkv, dh, M, threads;
    const float *Q;   /* [T, H*dh] (RoPE applied) */
    const float *K;   /* [T, Hkv*dh] */
    const float *V;   /* [T, Hkv*dh] */
    float *O;         /* out [T, H*dh]: softmax(Q K^T / sqrt(dh)) V */
    float *first_col; /* out [H, T]: A[t, 0] */
    float *maps;      /* out [H, M, M]: A[t, s] for t, s < M (0 above the diagonal) */
} HfAttn;

/* -1 + err only when scratch memory runs out. */
int hf_attention_forward(const HfAttn *a, char *err, size_t errlen);

#endif
