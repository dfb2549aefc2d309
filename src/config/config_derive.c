/* config_derive.c: values derived from a config (config_derive.h): the
 * shapes config.c and variants.c both need, and the training threads'
 * split of a batch. It calls neither of its users. */
#include "config_derive.h"

#include <math.h>

int config_auto_d_ff(int d_model, MlpKind mlp) {
    if (mlp == MLP_GELU) return 4 * d_model;
    long r = lround(8.0 * d_model / 3.0);
    return (int)((r + 31) / 32 * 32);
}

int config_head_dim(const Config *c) {
    if (c->head_dim > 0) return c->head_dim;
    return c->n_heads > 0 ? c->d_model / c->n_heads : 0;
}

long long config_extend_step(const Config *c) {
    if (!(c->extend_share > 0.0f)) return c->steps;
    return c->steps - llround((double)c->extend_share * c->steps);
}

int config_max_len(const Config *c) {
    return c->extend_share > 0.0f && c->extend_seq_len > c->seq_len ? c->extend_seq_len
                                                                    : c->seq_len;
}

void config_extended(Config *c) {
    if (!(c->extend_share > 0.0f)) return;
    c->seq_len = config_max_len(c);
    if (c->extend_rope_base > 0.0f) c->rope_base = c->extend_rope_base;
    c->extend_share = 0.0f, c->extend_seq_len = 0, c->extend_rope_base = 0.0f;
}

int config_rope_split(int diff_attn) { return diff_attn ? 2 : 1; }

/* Rows of the attention map do not sum to one (variants.md: Gu's proxy):
 * an extra slot or null key takes mass, there is no normaliser, or the map
 * is a difference of two softmaxes. */
int config_attention_proxy(const Config *c) {
    return c->normaliser == NORMZ_SOFTMAX1 || c->normaliser == NORMZ_SINK_LOGIT ||
           c->normaliser == NORMZ_SIGMOID || c->normaliser == NORMZ_SOFTPICK ||
           c->normaliser == NORMZ_STICKBREAK || c->diff_attn;
}

int config_attention_slots(const Config *c) {
    return c->sink_token + (c->kv_bias != 0) + (c->normaliser == NORMZ_SINK_LOGIT);
}

int config_layer_window(const Config *c, int l) {
    if (c->window <= 0) return 0;
    if (c->window_layers == WINLAYERS_ALTERNATE && l % 2) return 0;
    return c->window;
}

int config_shards(const Config *cfg) {
    int ns = cfg->batch_size < cfg->shards ? cfg->batch_size : cfg->shards;
    return ns < 1 ? 1 : ns;
}

int config_workers(const Config *cfg) {
    int nw = cfg->threads < 1 ? 1 : cfg->threads, ns = config_shards(cfg);
    return nw > ns ? ns : nw;
}

int batch_share(int B, int nw, int w) { return B / nw + (w < B % nw); }
