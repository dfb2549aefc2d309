/* paper_scales.h: the scales at which the paper and other public work saw
 * (or looked for and did not see) each effect the studies test, as data:
 * one row per source, cited in docs/paper-tables.md ("Scales at which each
 * effect is seen"). */
#ifndef GATELAB_PAPER_SCALES_H
#define GATELAB_PAPER_SCALES_H

/* The effects a source can speak to. */
typedef enum {
    SE_SINK_FORMS,   /* a first-token attention sink forms at all */
    SE_SINK_REMOVAL, /* the gate removes the sink (F-Attn) */
    SE_MASSIVE,      /* the gate lowers massive activations (M-Act) */
    SE_LOSS,         /* the gate lowers the loss (perplexity) */
    SE_STABILITY,    /* the gate keeps training stable at a high learning rate */
    SE_LONGCTX,      /* the gate helps long-context extension */
    SE_COUNT
} ScaleEffect;

/* One source's scale for one effect. params, tokens and flops are the
 * source's own numbers (NAN: it states none); seen is 1 when it saw the
 * effect, 0 when it looked and did not (a null result), -1 for the survey's
 * "no public evidence found" (who says where it looked, the numbers are
 * NAN). dense: every parameter is active per token (not a mixture of
 * experts), so 6 x params x tokens estimates the training FLOPs. */
typedef struct {
    ScaleEffect effect;
    int seen;
    const char *who;   /* "the paper (Qiu et al. 2025)", "Marin", ... */
    const char *model; /* the model in words: "15A2B MoE", "9 layers, vocab 1024" */
    double params, tokens, flops;
    int dense;
    const char *result; /* what it saw, its numbers as the source gives them */
    const char *source; /* the original: a table of the paper, a repository, a PR */
    const char *doc;    /* the project's copy: a section of docs/paper-tables.md */
} ScaleSource;

/* The i-th source; NULL past the end. */
const ScaleSource *scale_source(int i);
/* The effect in words: "the gate lowers the loss (perplexity)". */
const char *scale_effect_name(ScaleEffect e);
/* The source's training FLOPs: its stated number, else 6 x params x tokens
 * for a dense model with both stated (*estimated = 1), else NAN. */
double scale_flops(const ScaleSource *s, int *estimated);

#endif
