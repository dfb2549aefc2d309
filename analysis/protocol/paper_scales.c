/* paper_scales.c: the scales at which the paper and other public work saw
 * each effect (paper_scales.h). Every number is the source's own, as
 * docs/paper-tables.md copies it: its Tables 1, 2, 4 and 5 (Qiu et al.
 * 2025, arXiv 2505.06708), "The paper's models", "Small-scale
 * reproductions by others" and "Smallest-scale evidence" (the field
 * survey's smallest positive and null results, each with its original
 * source). A number the source does not state is NAN; the one product
 * taken here is a source's own (5M tokens × 3 epochs: 15M tokens), and
 * scale_flops's 6 N D estimate is flagged as one wherever it is printed. */
#include "paper_scales.h"

#include <math.h>
#include <stddef.h>

#define DOC_T1 "docs/paper-tables.md, Table 1 and \"The paper's models\""
#define DOC_T2 "docs/paper-tables.md, Table 2"
#define DOC_T4 "docs/paper-tables.md, Table 4 and \"The paper's models\""
#define DOC_T5 "docs/paper-tables.md, Table 5 and \"The paper's models\""
#define DOC_REPRO "docs/paper-tables.md, \"Small-scale reproductions by others\""
#define DOC_FIELD "docs/paper-tables.md, \"Smallest-scale evidence\""
#define PAPER "the paper (Qiu et al. 2025)"
#define MOE "its 15A2B MoE"
#define KALYANI "a reimplementation (kalyani-25)"
#define KALYANI_SRC "github.package-json.cn/kalyani-25/reimplementation-gated-attention"

static const ScaleSource SOURCES[] = {
    {SE_SINK_FORMS, 1, "Gu et al. 2024", "a LLaMA-style model", 60e6, 5e9, NAN, 1,
     "sink rate 18% at ε = 0.3; under 1% with 50–100M unique tokens",
     "Gu et al., \"When Attention Sink Emerges in Language Models: An Empirical View\" (ICLR "
     "2025, arXiv 2410.10781)",
     DOC_REPRO},
    {SE_SINK_REMOVAL, 1, PAPER, MOE, 15e9, 400e9, NAN, 0, "F-Attn 0.048 (g1-elem) against 0.467",
     "Qiu et al. 2025, Table 4 (the models of Table 1)", DOC_T4},
    {SE_SINK_REMOVAL, 1, "the paper's released checkpoints", "its 1B models, probed at 512 tokens",
     1e9, NAN, NAN, 0, "F-Attn 0.019 (g1-elem) and 0.053 (g1-head) against 0.427",
     "qiuzh20/gated_attention (HF weights QwQZh/gated_attention)", DOC_REPRO},
    {SE_SINK_REMOVAL, 1, "modded-nanogpt", "its speedrun model", 124e6, NAN, NAN, 0,
     "a sparse gate \"reduces the need for bos_token to function as an attention sink\"",
     "github.com/KellerJordan/modded-nanogpt/pull/117", DOC_FIELD},
    {SE_SINK_REMOVAL, 0, KALYANI, "its model, trained on 5M tokens × 3 epochs", 50.9e6, 15e6, NAN,
     0, "sink 14.0% against 13.6%", KALYANI_SRC, DOC_FIELD},
    {SE_MASSIVE, 1, PAPER, MOE, 15e9, 400e9, NAN, 0, "M-Act 94 (g1-elem) against 1053",
     "Qiu et al. 2025, Table 4 (the models of Table 1)", DOC_T4},
    {SE_MASSIVE, 0, KALYANI, "its model, trained on 5M tokens × 3 epochs", 50.9e6, 15e6, NAN, 0,
     "max activation 15.3 against 15.8", KALYANI_SRC, DOC_FIELD},
    {SE_LOSS, 1, PAPER, MOE, 15e9, 400e9, NAN, 0, "PPL 5.761 (g1-elem) against 6.026",
     "Qiu et al. 2025, Table 1", DOC_T1},
    {SE_LOSS, 1, PAPER, "its 1.7B dense model, 28 layers", 1.7e9, 400e9, NAN, 1,
     "PPL 7.404 (g1-elem) against 7.499", "Qiu et al. 2025, Table 2", DOC_T2},
    {SE_LOSS, 1, "modded-nanogpt", "its speedrun model", 124e6, NAN, NAN, 0,
     "a sparse gate reading 12 residual dims is worth about 50–55 of 1750 steps (about 3%)",
     "github.com/KellerJordan/modded-nanogpt/pull/117", DOC_FIELD},
    {SE_LOSS, 1, "parameter-golf PR #413", "9 layers, vocab 1024, a 13.2 MB artifact", NAN, 131e6,
     NAN, 0, "a per-head gate −0.0032 bits per byte (1.4697 to 1.4665), apparently one run",
     "parameter-golf PR #413", DOC_FIELD},
    {SE_LOSS, 1, "parameter-golf PR #2005", "a parameter-golf model of unstated size", NAN, NAN,
     NAN, 0, "a head-wise gate −0.0005 bits per byte over 3 seeds, std 0.0012 on the final number",
     "parameter-golf PR #2005", DOC_FIELD},
    {SE_LOSS, 0, "Marin's MoE ablation ladder", "its d512 rung", NAN, NAN, 2.19e17, 0,
     "no gate 3.8034 beat the full gate 3.8104 (Paloma macro loss)",
     "github.com/marin-community/marin/issues/4716, /4038, /5726 and /7411", DOC_FIELD},
    {SE_LOSS, 1, "Marin's MoE ablation ladder", "its d1024 rung", NAN, NAN, 9e18, 0,
     "the no-gate arm \"fails\" (and at d1280, 2.83e19 FLOPs)",
     "github.com/marin-community/marin/issues/4716, /4038, /5726 and /7411", DOC_FIELD},
    {SE_STABILITY, 1, PAPER, "its 1.7B dense model, 48 layers", 1.7e9, 1e12, NAN, 1,
     "at lr 8e-3 the baseline diverged and g1-elem reached PPL 7.078 (at 400B tokens the "
     "baseline at 8e-3 already degraded, PPL 9.195)",
     "Qiu et al. 2025, Table 2", DOC_T2},
    {SE_STABILITY, -1, "no public small-scale evidence found", "", NAN, NAN, NAN, 0, "",
     "the field survey (reference/field-2026.md, section 4)", DOC_FIELD},
    {SE_LONGCTX, 1, PAPER,
     "a model of unstated size (the paper's models: a 15B MoE and a 1.7B dense, on up to 3.5T "
     "tokens)",
     NAN, NAN, NAN, 0, "RULER after YaRN 72.88 (g1-elem) against 37.94 at 32k",
     "Qiu et al. 2025, Table 5", DOC_T5},
    {SE_LONGCTX, -1, "no public small-scale evidence found", "", NAN, NAN, NAN, 0, "",
     "the field survey (reference/field-2026.md, section 4)", DOC_FIELD},
};
#define N_SOURCES (sizeof SOURCES / sizeof SOURCES[0])

static const char *const EFFECT_NAME[SE_COUNT] = {
    [SE_SINK_FORMS] = "a first-token attention sink forms",
    [SE_SINK_REMOVAL] = "the gate removes the sink (F-Attn)",
    [SE_MASSIVE] = "the gate lowers massive activations (M-Act)",
    [SE_LOSS] = "the gate lowers the loss (perplexity)",
    [SE_STABILITY] = "the gate keeps training stable at a high learning rate",
    [SE_LONGCTX] = "the gate helps long-context extension",
};

const ScaleSource *scale_source(int i) { return i >= 0 && i < (int)N_SOURCES ? &SOURCES[i] : NULL; }

const char *scale_effect_name(ScaleEffect e) {
    return e >= 0 && e < SE_COUNT ? EFFECT_NAME[e] : "?";
}

double scale_flops(const ScaleSource *s, int *estimated) {
    *estimated = 0;
    if (isfinite(s->flops)) return s->flops;
    if (!s->dense || !isfinite(s->params) || !isfinite(s->tokens)) return NAN;
    *estimated = 1;
    return 6.0 * s->params * s->tokens;
}
