/* protocol.h: a study's confirmatory protocol, declared before its runs.
 *
 * A sweep file's [primary] section names the primary family: metrics
 * crossed with comparisons (arm against a reference arm, both run names),
 * the paper's claims that family tests (a direction per metric and pair),
 * and the equivalence margins that "as well as" sentences need:
 *
 *   [primary]
 *   metric = f_attn                      ; f_attn, m_act, val_loss, lc_deg_*,
 *                                        ; quant_*_dloss, good_regime
 *   test = f_attn wilcoxon               ; its one test (below), required
 *   threshold = val_loss_below 1.8       ; defines good_regime (optional)
 *   compare = g1-elem vs baseline        ; arm vs reference (repeatable)
 *   paper = f_attn g1-elem < baseline    ; a claim: arm < ref or arm > ref,
 *                                        ; "... one-sided" tests that way only
 *   paper = f_attn g1-elem ~ g1-head     ; comparable: TOST within the margin
 *   paper = f_attn g1-elem sink-free     ; F-Attn at or below the uniform share
 *   margin = f_attn 0.02                 ; TOST margin for that metric
 *   margin = sink_free 0.5               ; sink-free: F-Attn / uniform < 1.5
 *
 * The primary family is the claims, one test each: `<`/`>` claims by the
 * metric's declared test (P ids, Holm across them and the sink-free
 * tests), `~` claims by TOST (E ids, Holm across those). A claim must be
 * one the paper states: the sweep checks each `paper =` line, by its arms'
 * variants, against paper_tables.c's claims table and refuses one with no
 * row there. A compare or metric no claim uses is not tested in the
 * family.
 * A [secondary] section declares a second family with the same metric,
 * test, threshold and compare keys (no paper or margin): every compare
 * crossed with every metric, two-sided, Holm across that family alone
 * (ids S1, S2, ...): the questions the paper states no claim on (other
 * lengths, plain RoPE, quantization, the good regime). [secondary] alone
 * may also declare an interaction, the change of one comparison between
 * two settings on the same seeds:
 *
 *   interaction = val_loss g1-elem-2x vs baseline-2x minus g1-elem vs baseline < 0.04
 *
 * per seed d = (arm2 - ref2) - (arm1 - ref1), one sample, by the metric's
 * declared paired test (wilcoxon or paired-t) against the bound: `< B`
 * tests H1 "d below B" one-sided, `> B` "d above B", no bound two-sided
 * against 0. With B a declared margin this is a non-inferiority test.
 *
 * Tests: welch, mann-whitney (unpaired), paired-t, wilcoxon (exact signed
 * rank; both pair the runs of two arms by seed, over the seeds both have),
 * fisher (the only test of good_regime, a 0/1 per run: final val loss
 * below the threshold). sink_formed is refused as a primary metric (its
 * metric-table row's `not_primary`: it repeats F-Attn coarsely and moves
 * with its threshold; the report still counts it, exploratory). A metric
 * without a `test` is refused, naming its line: one declared test per
 * metric, never the larger of two.
 *
 * `gatelab sweep` copies the section into OUT/protocol.ini; `gatelab
 * report` reads it there and applies Holm's correction across the family
 * (docs/statistics.md). Every claim must be about a declared metric and a
 * declared comparison. */
#ifndef GATELAB_PROTOCOL_H
#define GATELAB_PROTOCOL_H

#include <stddef.h>

#define PROTO_MAX 32      /* comparisons, claims */
#define PROTO_INTER_MAX 8 /* interactions */
#define PROTO_ARM_MAX 96  /* a run name */
#define PROTO_FILE "protocol.ini"

/* A metric a protocol declares: the index of its row in the metric table
 * (metric_at, metric_table.h; a row with `proto`), or PROTO_GOOD_REGIME_M,
 * the protocol's own good_regime, past every row. metric_table.c holds
 * every row's index below PROTO_GOOD_REGIME_M (a static assert), so an
 * array indexed by a metric has PROTO_METRIC_SLOTS entries. */
typedef int ProtoMetric;
#define PROTO_METRIC_SLOTS 256
#define PROTO_GOOD_REGIME_M (PROTO_METRIC_SLOTS - 1)

/* The metrics the protocol and its report treat specially, by their
 * metric-table names (proto_metric_of): sink-free claims are on
 * PROTO_SINK_METRIC, and its claims are checked against the baseline's
 * PROTO_SINK_FLAG; PROTO_MASSIVE_METRIC's claims against the baseline's
 * massive_sun; PROTO_LOSS_METRIC's claims show the task floor beside
 * them, and good_regime is it below a threshold. test_protocol_metrics
 * holds each a declarable row. */
#define PROTO_SINK_METRIC "f_attn"
#define PROTO_SINK_FLAG "sink_formed"
#define PROTO_MASSIVE_METRIC "m_act"
#define PROTO_LOSS_METRIC "val_loss"

/* A declared test (PT_NONE: not declared). */
typedef enum { PT_NONE, PT_WELCH, PT_MANN_WHITNEY, PT_PAIRED_T, PT_WILCOXON, PT_FISHER } ProtoTest;

#define PROTO_GOOD_REGIME "good_regime"
#define PROTO_GOOD_REGIME_LABEL "share of seeds in the good regime"

typedef struct {
    char arm[PROTO_ARM_MAX], ref[PROTO_ARM_MAX];
    int line; /* its line in the file it was read from (0: not known) */
} ProtoCompare;

/* A claim's relation: the arm's value lower or higher than the
 * reference's, comparable to it (equivalence within the metric's margin),
 * or sink-free (F-Attn at or below the run's uniform share within the
 * sink_free margin; no reference). */
typedef enum { PR_LOWER, PR_HIGHER, PR_EQUIV, PR_SINK_FREE, PR_INTERACT } ProtoRel;

/* An `interaction =` line: per seed d = (arm2 - ref2) - (arm1 - ref1) on
 * metric, tested against bound (side -1: H1 d < bound, +1: d > bound, 0:
 * two-sided, bound 0). */
typedef struct {
    ProtoMetric metric;
    char arm2[PROTO_ARM_MAX], ref2[PROTO_ARM_MAX], arm1[PROTO_ARM_MAX], ref1[PROTO_ARM_MAX];
    int side;
    double bound;
    int line; /* its line in the file it was read from (0: not known) */
} ProtoInteraction;

typedef struct {
    ProtoMetric metric;
    int compare;   /* index into compares (-1: a sink-free claim, arm below) */
    int lower;     /* 1: the paper says arm < ref (and for sink-free); 0: arm > ref */
    int one_sided; /* the declared test is one-sided, in the claim's direction */
    ProtoRel rel;
    char arm[PROTO_ARM_MAX]; /* a sink-free claim's arm */
    int inter;               /* PR_INTERACT: index into the protocol's interactions */
    int line;                /* its line in the file it was read from (0: not known) */
} ProtoClaim;

typedef struct {
    int n_metrics;
    ProtoMetric metrics[PROTO_METRIC_SLOTS]; /* each once */
    int n_compares;
    ProtoCompare compares[PROTO_MAX];
    int n_claims;
    ProtoClaim claims[PROTO_MAX];
    int n_inter;
    ProtoInteraction inter[PROTO_INTER_MAX]; /* [secondary] only */
    double margin[PROTO_METRIC_SLOTS];       /* 0: none declared */
    ProtoTest test[PROTO_METRIC_SLOTS];
    int metric_line[PROTO_METRIC_SLOTS]; /* the line that declared each metric */
    double good_below;                   /* good_regime's val_loss threshold (0: none) */
    double sink_margin; /* sink-free: F-Attn / uniform share below 1 + this (0: none) */
    char hash[32];      /* protocol_hash_text of the file read (util.h) */
    char path[1024];    /* the file read ("" when built by protocol_key) */
    int secondary;      /* the [secondary] family: no paper or margin keys */
} Protocol;

/* "welch", "mann-whitney", ...: the name a `test` key gives t. */
const char *proto_test_name(ProtoTest t);
/* 1 when t pairs the runs of two arms by seed. */
int proto_test_paired(ProtoTest t);

/* The declarable metric named name: a metric-table row's CSV name when
 * the row has `proto`, or "good_regime"; -1 when none. */
ProtoMetric proto_metric_of(const char *name);
/* The name of m: its metric-table row's CSV name, or "good_regime"; NULL
 * for a bad value (not a declarable row). */
const char *proto_metric_name(ProtoMetric m);
/* What the headline calls declarable metric m (its metric-table row's
 * label); "?" for a bad m. */
const char *proto_metric_label(ProtoMetric m);

/* '<', '>', '~' or 's' (sink-free): r as a claims table row writes it
 * (paper_tables.h); 'x' for an interaction (no row). */
char proto_rel_char(ProtoRel r);

/* Applies one `key = value` of a [primary] section to p (zeroed first by
 * the caller). 0, or -1 with a one-line reason naming the value. Refused:
 * an arm outside the name rule (name_plain, util.h), a pair given twice or
 * also reversed (`A vs B` and `B vs A` would be one test twice in the Holm
 * family), a claim given twice or contradicting an earlier one (`<` and
 * `>` for one metric and pair), a second margin for one metric. */
int protocol_key(Protocol *p, const char *key, const char *value, char *err, size_t errlen);

/* 1 when p declares something to test: a metric and a compare or an
 * interaction. */
int protocol_has_tests(const Protocol *p);

/* The line of each key protocol_key just added to p (the counts before
 * it: compares nc, claims ncl, metrics nm, interactions ni). */
void protocol_set_line(Protocol *p, int nc, int ncl, int nm, int ni, int line);

/* 0 when every declared metric of p has a test that fits it (fisher for
 * good_regime and only for it); else -1 with "LINE: ..." naming the
 * metric's line and what to write. */
int protocol_check(const Protocol *p, char *err, size_t errlen);

/* Reads the [primary] section of path (other sections are ignored), with
 * each compare's line, and the hash of the file's exact bytes. 0 on
 * success, 1 when path does not exist, -1 with a one-line reason
 * ("FILE:LINE: ...") when it cannot be read, a key is bad or
 * protocol_check refuses it. */
int protocol_read(const char *path, Protocol *p, char *err, size_t errlen);
/* protocol_read of the [secondary] section when secondary is 1 (its
 * absence returns 1), of [primary] when 0. */
int protocol_read_family(const char *path, int secondary, Protocol *p, char *err, size_t errlen);

/* The variant (catalog id) a run name stands for, NULL when not known. */
typedef const char *(*ProtoVariantFn)(void *user, const char *run);

/* protocol_claims.c: the claims table's row (paper_tables.h) for claim i
 * of p, its arms mapped to variants by fn; NULL when the paper states no
 * such claim. */
struct PaperClaim;
const struct PaperClaim *protocol_claim_row(const Protocol *p, int i, ProtoVariantFn fn,
                                            void *user);

/* 0 when every claim of p has a row in the claims table; else -1 with
 * "LINE: paper = ...: the paper states no such claim ..." naming the
 * first that has none. */
int protocol_claims_known(const Protocol *p, ProtoVariantFn fn, void *user, char *err,
                          size_t errlen);

#endif
