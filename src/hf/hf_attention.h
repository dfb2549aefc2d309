/* hf_attention.h: causal softmax attention of a pretrained model's layer,
 * with GQA, over threads (OpenBLAS single-threaded inside each), keeping
 * only what the probe stores: the first-token column of every head and
 * the full maps of the first M queries. */
#ifndef GATELAB_HF_ATTENTION_H
#define GATELAB_HF_ATTENTION_H

#include <stddef.h>

typedef struct {
    int T, H, Hkv, dh, M, threads;
    int ldq, ldkv;    /* row strides of Q and of K, V: H*dh and Hkv*dh, or
                         wider when they are slices of a fused projection */
    const float *Q;   /* [T, ldq], head h at h*dh (RoPE applied) */
    const float *K;   /* [T, ldkv] */
    const float *V;   /* [T, ldkv] */
    float *O;         /* out [T, H*dh]: softmax(Q K^T / sqrt(dh)) V */
    float *first_col; /* out [H, T]: A[t, 0] */
    float *maps;      /* out [H, M, M]: A[t, s] for t, s < M (0 above the diagonal) */
    float *scratch;   /* hf_attention_scratch(T, threads) floats, kept by the caller:
                         fresh memory each layer costs page faults */
} HfAttn;

/* Floats of scratch that hf_attention_forward needs. */
size_t hf_attention_scratch(int T, int threads);

/* The caller runs OpenBLAS single-threaded (hf_model_forward does): each
 * of the a->threads workers makes its own sgemm calls. */
void hf_attention_forward(const HfAttn *a);

#endif
