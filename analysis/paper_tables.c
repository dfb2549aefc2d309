/* paper_tables.c: the paper's own figures as data (docs/paper-tables.md),
 * set beside ours in the report as clearly labelled reference data. */
#include <math.h>
#include <string.h>

#include "paper_tables.h"

/* ---- the paper's figures (reference data, not our results) ----
 * Qiu et al. 2025, arXiv 2505.06708: Table 1 (MoE 15A2B, 400B tokens) PPL,
 * Table 3 PPL, Table 4 gate mean / M-Act / F-Attn. NAN = not reported. */

static const PaperRow PAPER[] = {
    {"baseline", "T1, T4", 6.026, NAN, 1053, 0.467},
    {"more-kv-heads", "T1 (k=8)", 5.979, NAN, NAN, NAN},
    {"more-q-heads", "T1 (q=48)", 5.953, NAN, NAN, NAN},
    {"wider-ffn", "T1 (+4 experts)", 5.964, NAN, NAN, NAN},
    {"g1-elem", "T1, T4", 5.761, 0.116, 94, 0.048},
    {"g2-elem", "T1, T4", 5.820, 0.221, 125, 0.297},
    {"g3-elem", "T1", 6.016, NAN, NAN, NAN},
    {"g4-elem", "T1", 5.981, NAN, NAN, NAN},
    {"g5-elem", "T1", 6.017, NAN, NAN, NAN},
    {"g1-head", "T1, T4", 5.792, 0.172, 98, 0.073},
    {"g2-head", "T1", 5.808, NAN, NAN, NAN},
    {"g1-shared", "T1, T4", 5.801, 0.271, 286, 0.301},
    {"g2-shared", "T1", 5.867, NAN, NAN, NAN},
    {"g1-add-silu", "T1", 5.821, NAN, NAN, NAN},
    {"g1-mult-silu", "T1", 5.822, NAN, NAN, NAN},
    {"sdpa-rmsnorm", "T3", 5.847, NAN, NAN, NAN},
    {"sdpa-silu", "T3", 5.975, NAN, NAN, NAN},
    {"g1-add-id", "T3", 5.882, NAN, NAN, NAN},
    {"g1-const", "T4", 5.917, 0.335, 471, 0.364},
    {"g1-ns", "T4", 5.9, 0.653, 892, 0.451},
};
#define N_PAPER (sizeof PAPER / sizeof PAPER[0])

const PaperRow *paper_row(const char *variant) {
    for (size_t i = 0; i < N_PAPER; i++)
        if (!strcmp(PAPER[i].id, variant)) return &PAPER[i];
    return NULL;
}

/* Qiu et al. 2025, Table 5 (docs/paper-tables.md): RULER
 * accuracy after YaRN extension, at 4k..128k. Reference data, not ours. */
const char *const PAPER_LEN[6] = {"4k", "8k", "16k", "32k", "64k", "128k"};
const double PAPER_BASE[6] = {82.90, 71.52, 61.23, 37.94, 37.51, 31.65};
const double PAPER_G1[6] = {88.13, 80.01, 76.74, 72.88, 66.60, 58.82};

/* ---- the scales at which public work sees each effect ----
 * Training FLOPs as 6 x parameters x tokens where the source gives those. */
static const EffectScale SCALES[] = {
    {"a first-token attention sink forms",
     "Gu et al. 2024: 60M-parameter LLaMA-style model, 5B tokens (6 x 6e7 x 5e9)", 1.8e18},
    {"the gate lowers the loss",
     "about 1e18 FLOPs and above; Marin's gate ladder found no gain at d512 (2.2e17 FLOPs)", 1e18},
    {"the gate stabilises training at a high learning rate",
     "the paper's smallest stability setting: 1.7B dense, 400B tokens (6 x 1.7e9 x 4e11)", 4.08e21},
    {"the gate helps long-context extension",
     "nothing shown below the paper's 1.7B models at 400B tokens (6 x 1.7e9 x 4e11)", 4.08e21},
};

const EffectScale *effect_scale(int i) {
    return i >= 0 && i < (int)(sizeof SCALES / sizeof SCALES[0]) ? &SCALES[i] : NULL;
}
