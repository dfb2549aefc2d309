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

/* One claim the paper states, in the terms a protocol's `paper =` line
 * uses (protocol.h): the metric (a protocol metric name), the arm's and the
 * reference's catalog ids and the relation: '<' and '>' (the arm's value is
 * lower or higher), '~' (comparable: tested for equivalence within a
 * declared margin) or 's' (sink-free: the arm's F-Attn at or below the
 * uniform share within a declared margin; ref is ""). table and values say
 * where the paper shows it, sentence what it states there. */
typedef struct PaperClaim {
    const char *metric, *arm;
    char rel;
    const char *ref, *table, *values, *sentence;
    int quoted; /* 1: sentence is the paper's own words; 0: our reading of its table */
} PaperClaim;

/* The i-th claim of the table; NULL past the end. */
const PaperClaim *paper_claim_at(int i);
/* The claim on metric with arm rel ref (catalog ids), NULL when the paper
 * states no such claim. */
const PaperClaim *paper_claim_find(const char *metric, const char *arm, char rel, const char *ref);

/* Table 5: RULER accuracy % after YaRN extension at 4k..128k, baseline
 * and G1 gate. */
extern const char *const PAPER_LEN[6];
extern const double PAPER_BASE[6], PAPER_G1[6];

#endif
