/* hf_model.h: the forward pass of a Hugging Face causal LM checkpoint
 * (Llama, Qwen2, Qwen3 incl. the gated-attention variants, GPT-2,
 * GPT-NeoX, OLMo 2, Mistral, Phi-3, Gemma 2, Gemma 3, gpt-oss, AFMoE) on B windows of token ids at
 * once (each window its own positions and attention; norms, activations and the fake quantization
 * of each linear layer's input over the rows of all B), through OpenBLAS sgemm. After each layer a
 * callback sees what the probe needs. */
#ifndef GATELAB_HF_MODEL_H
#define GATELAB_HF_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "hf_config.h"
#include "probe_reduce.h"

typedef struct HfModel HfModel;

/* After each layer the callback sees what the probe reduces (valid during
 * the call only; probe_reduce.h): maps [H, M, M], the first column
 * [H, T], the sigmoid gate scores [T, C] (NULL when C = 0), the block's
 * output [T, d], the keys, values and gated head outputs; the sink
 * logit's share [H, T] where the architecture has one (gpt-oss), else no
 * slot. A pass of B windows hands over all of them, window after window:
 * maps [B, H, M, M], first column and slot [B, H, T], the rows [B, T, ...] (o->T is one
 * window's length). H and C are the layer's own (hf_layer_heads: fewer
 * than the model's on a layer with fewer query heads). */
typedef void (*HfLayerFn)(void *ctx, const ProbeLayer *o);

/* Open MODEL_DIR (config.json + safetensors), check every tensor. */
int hf_model_open(HfModel **out, const char *dir, int threads, char *err, size_t errlen);
void hf_model_close(HfModel *m);

const HfArch *hf_model_arch(const HfModel *m);
/* Threads the forward pass runs on (>= 1). */
int hf_model_threads(const HfModel *m);
const char *hf_model_config_text(const HfModel *m);
const char *hf_model_dtype(const HfModel *m); /* F32, BF16, F16 or mixed */
/* Gate channels of a layer of the model's H heads (H * dh, H, or 0). */
int hf_model_gate_channels(const HfModel *m);

/* The probe of N windows of T tokens with maps of M: the reducer's shape
 * (softmax rows, no slot), and the record's attributes after
 * probe_acc_finish. */
ProbeShape hf_model_probe_shape(const HfModel *m, int N, int T, int M);
void hf_model_probe_attrs(const HfModel *m, ProbeRecord *p);

/* What a pass of N windows of T tokens with maps of M, B of them a
 * forward, allocates besides the mapped weights, in bytes: *weights, the
 * scratch F16/BF16 layers are converted into (allocated by hf_model_open);
 * *buffers, the forward pass's with the LM head's converted rows (the
 * count pass of its plan, hf_bufs_bytes); *probe, the probe reducer's
 * (probe_acc_bytes). For a memory plan made before the pass. */
void hf_model_pass_bytes(const HfModel *m, int N, int B, int T, int M, size_t *weights,
                         size_t *buffers, size_t *probe);
/* The bytes the forward's buffers hold now (what *buffers above counts for
 * the last forward's B, T and M). */
size_t hf_model_buffer_bytes(const HfModel *m);

/* Window b's logits [T, V] of a pass (valid during the call only); -1
 * (with one line in err) stops the pass. */
typedef int (*HfLogitsFn)(void *ctx, int b, const float *logits, char *err, size_t errlen);

/* One forward pass's options (zero: one window, plain, no maps, no
 * callback). */
typedef struct {
    int B;                         /* windows (0 reads as 1) */
    int M;                         /* maps kept for the first M <= T positions */
    const struct Intervention *iv; /* NULL: plain (intervention.h: the gate
                                      and residual kinds, the streaming window;
                                      its fake quantization: one pass of B) */
    HfLayerFn fn;                  /* or NULL: called after each layer */
    void *ctx;                     /* handed to fn and logits_fn */
    float *logits;                 /* or NULL: filled [T, V], one window at a time */
    HfLogitsFn logits_fn;          /* with logits: called on each window's (needed when B > 1) */
    int layers;                    /* run the first `layers` layers only, with no logits (0: all) */
} HfRun;

/* Forward ids[B, T] (each in [0, V), T <= max positions for GPT-2). A
 * window's logits are the same bits whether it runs alone or among B. */
int hf_model_forward(HfModel *m, const int32_t *ids, int T, const HfRun *run, char *err,
                     size_t errlen);

#endif
