/* hf_tokenizer_priv.h: the loaded tokenizer, shared by hf_tokenizer_load.c
 * (builds it) and hf_tokenizer.c (encodes with it). */
#ifndef GATELAB_HF_TOKENIZER_PRIV_H
#define GATELAB_HF_TOKENIZER_PRIV_H

#include "hf_added.h"
#include "hf_bpe.h"
#include "hf_regex.h"
#include "hf_split.h"
#include "hf_tokenizer.h"

#define HF_MAX_STEPS 16
#define HF_MAX_NORM 8
#define HF_MAX_ID (1 << 24)

typedef enum { HF_STEP_SPLIT, HF_STEP_BYTELEVEL } HfStepKind;

/* One pre-tokenizer step; ByteLevel is always the last. */
typedef struct {
    HfStepKind kind;
    pcre2_code *re;       /* Split: its regex */
    int behavior, invert; /* Split: HfSplitBehavior, and whether to swap matches and gaps */
    int add_prefix_space; /* ByteLevel */
    int use_regex;        /* ByteLevel: split by the GPT-2 regex */
} HfStep;

struct HfTokenizer {
    HfBpe bpe;
    HfMap token_ids; /* token as spelled in the file -> id */
    HfAddedSet added;
    int norm[HF_MAX_NORM]; /* HfNormForm, applied in order */
    int n_norm;
    HfStep steps[HF_MAX_STEPS];
    int n_steps;
    pcre2_code *bytelevel_re;
    pcre2_match_context *mctx;
    HfIds prefix, suffix; /* post-processor, one sequence */
    int32_t max_id;
    int32_t *id_slot; /* [max_id + 1] slot of token_ids holding the id, or -1 */
};

#endif
