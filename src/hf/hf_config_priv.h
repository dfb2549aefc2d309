/* hf_config_priv.h: the config.json readers (hf_config_read.c) that
 * hf_config.c shares with the families parsed in their own files
 * (hf_config_gptoss.c, hf_config_afmoe.c, hf_config_laguna.c,
 * hf_config_step3p5.c, hf_config_mimo.c). Each reader
 * that fails sets c->failed and one line in c->err; once failed, every
 * later reader returns its default. Private to src/hf/hf_config*.c. */
#ifndef GATELAB_HF_CONFIG_PRIV_H
#define GATELAB_HF_CONFIG_PRIV_H

#include <jansson.h>

#include "hf_config.h"

typedef struct {
    json_t *root;
    const char *path;
    char *err;
    size_t errlen;
    int failed;
} Cfg;

/* Integer key of obj (objname in messages, NULL for the top level) in
 * [lo, hi]; dflt when absent or null and dflt >= lo, else refused. */
int cfg_int_in(Cfg *c, json_t *obj, const char *objname, const char *key, long long dflt,
               long long lo, long long hi);
/* cfg_int_in on the top level. */
int cfg_int(Cfg *c, const char *key, long long dflt, long long lo, long long hi);
/* Number key of obj within float's range; dflt when absent or null. */
double cfg_num_in(Cfg *c, json_t *obj, const char *key, double dflt);
/* cfg_num_in on the top level. */
double cfg_num(Cfg *c, const char *key, double dflt);
/* Boolean top-level key; dflt when absent or null. */
int cfg_bool(Cfg *c, const char *key, int dflt);
/* The keys of the Llama layout (sizes, RMSNorm, SwiGLU, RoPE and its
 * scaling, the projection biases) into a. */
void cfg_llama_like(Cfg *c, HfArch *a);
/* Which layers slide under a->sliding_window: layer_types when present
 * (every p-th layer full_attention, the others sliding_attention), else
 * every dflt-th layer full; sets sliding_period and sliding_layers. */
void cfg_layer_types(Cfg *c, HfArch *a, int dflt);
/* Layer l's query heads heads[l] into a->layer_heads, the largest into
 * a->H (cfg_check_heads checks each against the key/value heads). */
void cfg_heads(HfArch *a, const int *heads);
/* Every layer's query heads (a->H where the family read no count of its
 * own) a multiple of its key/value heads, the largest a->H; the counts
 * of all layers alone where no layer has counts of its own. -1 with one
 * line naming the layer and the keys to change. */
int cfg_check_heads(Cfg *c, HfArch *a);
/* gpt-oss (hf_config_gptoss.c): its keys after cfg_llama_like's. */
void cfg_gptoss(Cfg *c, HfArch *a);
/* AFMoE (hf_config_afmoe.c): its keys after cfg_llama_like's. */
void cfg_afmoe(Cfg *c, HfArch *a);
/* Laguna (hf_config_laguna.c): its keys after cfg_llama_like's. */
void cfg_laguna(Cfg *c, HfArch *a);
/* Step-3.5 (hf_config_step3p5.c): its keys after cfg_llama_like's. */
void cfg_step3p5(Cfg *c, HfArch *a);
/* MiMo-V2-Flash (hf_config_mimo.c): its keys after cfg_llama_like's. */
void cfg_mimo(Cfg *c, HfArch *a);

#endif
