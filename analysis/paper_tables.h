/* paper_tables.h: the paper's figures (Qiu et al. 2025) as data. */
#ifndef GATELAB_PAPER_TABLES_H
#define GATELAB_PAPER_TABLES_H

/* Table 1 / 3 PPL and Table 4 gate mean, M-Act, F-Attn of one variant
 * (NAN = not reported). */
typedef struct {
    const char *id, *source;
    double ppl, gate_mean, m_act, f_attn;
} PaperRow;

/* The paper's row for a catalog id, NULL when the paper has none. */
const PaperRow *paper_row(const char *variant);

/* Table 5: RULER accuracy % after YaRN extension at 4k..128k, baseline
 * and G1 gate. */
extern const char *const PAPER_LEN[6];
extern const double PAPER_BASE[6], PAPER_G1[6];

/* The compute at which public work first sees an effect (docs/paper-tables.md
 * "Scales at which each effect is seen", which cites each source): the
 * effect, the setting in words, and its training FLOPs. */
typedef struct {
    const char *effect, *setting;
    double flops;
} EffectScale;

/* The i-th reference scale; NULL past the end. */
const EffectScale *effect_scale(int i);

#endif
