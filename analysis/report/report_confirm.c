/* report_confirm.c: the confirmatory part of REPORT.md, from the protocol a
 * sweep declared before its runs (protocol.h, DIR/protocol.ini).
 *
 * Each (comparison, metric) of the primary family is one test with an id
 * P1, P2, ...: the one test the protocol declares for the metric
 * (confirm_tests.c), paired by seed for paired-t and wilcoxon, one-sided
 * where the claim says so. Holm's correction runs across the whole family,
 * and a difference is claimed only when the Holm-adjusted p is below
 * ALPHA; a test that cannot reject by construction is "untestable here",
 * with the reason. Equivalence ("as well as") is claimed only by TOST
 * within the protocol's margin, ids E1, E2, ..., with Holm's correction
 * across those. Whether the protocol was declared before the runs is read
 * from each run file's /protocol hash. Every sentence of the headline is
 * generated from these rows and cites one. */
#include "report_confirm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confirm_tests.h"
#include "metric_table.h"
#include "metrics.h"
#include "paper_tables.h"
#include "protocol_check.h"
#include "report_priv.h"
#include "stats.h"

#define ALPHA CONFIRM_ALPHA
#define MAX_SEEDS CONFIRM_MAX_SEEDS
#define MAX_TESTS CONFIRM_MAX_TESTS
#define LIST_MAX 8 /* runs named before "and N more" */

/* One equivalence test. */
typedef struct {
    int compare;
    ProtoMetric metric;
    int paired; /* paired TOST over the seeds both arms have (the metric's test pairs) */
    int pairs;
    int tested;
    StatsTost t;
    double holm;
} ETest;

#define group_of confirm_group

/* The finite values of metric m over group a's seeds. */
static int group_values(const Row *rows, int n, int a, const Protocol *pr, ProtoMetric m,
                        double *v) {
    return confirm_values(rows, n, a, pr, m, v, NULL);
}

static int equivalence_tests(const Row *rows, int n, const Protocol *pr, ETest *e) {
    int k = 0;
    double p[MAX_TESTS] = {0}, adj[MAX_TESTS];
    char err[256];
    for (int j = 0; j < pr->n_claims; j++) {
        const ProtoClaim *cl = &pr->claims[j];
        if (cl->rel != PR_EQUIV) continue;
        ProtoMetric m = cl->metric;
        double a[MAX_SEEDS], b[MAX_SEEDS];
        long long sa[MAX_SEEDS], sb[MAX_SEEDS];
        int ga = group_of(rows, n, pr->compares[cl->compare].arm);
        int na = confirm_values(rows, n, ga, pr, m, a, sa);
        int nb =
            confirm_values(rows, n, group_of(rows, n, pr->compares[cl->compare].ref), pr, m, b, sb);
        e[k] = (ETest){.compare = cl->compare, .metric = m, .holm = NAN};
        e[k].paired = proto_test_paired(pr->test[m]);
        if (e[k].paired) na = nb = e[k].pairs = confirm_pairs(a, sa, na, b, sb, nb);
        e[k].tested =
            na >= 2 && nb >= 2 &&
            (e[k].paired
                 ? stats_tost_paired(&e[k].t, a, b, na, pr->margin[m], err, sizeof err)
                 : stats_tost_welch(&e[k].t, a, na, b, nb, pr->margin[m], err, sizeof err)) == 0;
        p[k] = e[k].tested ? e[k].t.p : NAN;
        k++;
    }
    adjust_family(adj, p, k, 0);
    for (int i = 0; i < k; i++) e[i].holm = adj[i];
    return k;
}

/* ---- the tables ---- */

static int significant(const PTest *t) {
    return t->tested && !t->untestable && !t->left_out && t->holm < ALPHA;
}

static void put_arm_cell(FILE *f, const PTest *t, int a_side) {
    int n = a_side ? t->na : t->nb, k = a_side ? t->ka : t->kb;
    double m = a_side ? t->mean_a : t->mean_b, s = a_side ? t->sd_a : t->sd_b;
    if (n < 1) fputs(" no runs |", f);
    else if (t->metric == PROTO_GOOD_REGIME_M) fprintf(f, " %d of %d |", k, n);
    else if (t->inter >= 0 && !a_side) fprintf(f, " %+.4g (bound) |", m);
    else if (t->compare < 0 && !a_side) fprintf(f, " %.4g (1 + margin) |", m);
    else fprintf(f, " %.5g ± %.2g (%d) |", m, s, n);
}

/* "Hodges–Lehmann", ...: what the estimate column holds for t's test. */
static const char *estimate_name(const PTest *t) {
    switch (t->test) {
    case PT_WILCOXON: return "Hodges–Lehmann, exact interval";
    case PT_PAIRED_T: return "mean paired difference, t interval";
    case PT_FISHER: return "difference of shares";
    default: return "mean difference, bootstrap interval";
    }
}

/* "wilcoxon (paired, 20 seeds)", "welch, one-sided", ... */
static void put_test_name(FILE *f, const PTest *t) {
    fputs(proto_test_name(t->test), f);
    if (t->inter >= 0) {
        fprintf(f, " (one sample of differences in differences, %d seed%s", t->na,
                t->na == 1 ? "" : "s");
        if (t->unpaired) fprintf(f, "; %d without all four arms left out", t->unpaired);
        fputc(')', f);
    } else if (t->compare < 0) fprintf(f, " (one sample, %d seed%s)", t->na, t->na == 1 ? "" : "s");
    else if (proto_test_paired(t->test)) {
        fprintf(f, " (paired, %d seed%s", t->pairs, t->pairs == 1 ? "" : "s");
        if (t->unpaired) fprintf(f, "; %d without a partner left out", t->unpaired);
        fputc(')', f);
    }
    if (t->one_sided) fputs(", one-sided", f);
}

/* "g1 < base", "g1 sink-free": the claim a test is of. */
static void put_claim(FILE *f, const Protocol *pr, const PTest *t) {
    const ProtoClaim *cl = &pr->claims[t->claim];
    if (cl->rel == PR_INTERACT) {
        const ProtoInteraction *x = &pr->inter[cl->inter];
        fprintf(f, "(%s − %s) − (%s − %s)", x->arm2, x->ref2, x->arm1, x->ref1);
        if (x->side) fprintf(f, " %c %+g", x->side < 0 ? '<' : '>', x->bound);
    } else if (pr->secondary)
        fprintf(f, "%s vs %s", pr->compares[t->compare].arm, pr->compares[t->compare].ref);
    else if (t->compare < 0) fprintf(f, "%s sink-free", cl->arm);
    else
        fprintf(f, "%s %c %s", pr->compares[t->compare].arm, proto_rel_char(cl->rel),
                pr->compares[t->compare].ref);
}

/* "-0.012 [-0.020, -0.004]" */
static void put_estimate_short(FILE *f, const PTest *t) {
    fprintf(f, "%+.4g", t->est);
    if (!isnan(t->lo)) fprintf(f, " [%+.4g, %+.4g]", t->lo, t->hi);
}

static void put_estimate(FILE *f, const PTest *t) {
    if (!isfinite(t->est)) fputs("–", f);
    else put_estimate_short(f, t);
    fprintf(f, " (%s)", estimate_name(t));
}

static void ptable_row(FILE *f, const Protocol *pr, const PTest *t, char prefix, int id) {
    fprintf(f, "| %c%d | ", prefix, id);
    put_claim(f, pr, t);
    fprintf(f, " | %s |", proto_metric_name(t->metric));
    put_arm_cell(f, t, 1);
    put_arm_cell(f, t, 0);
    fputc(' ', f);
    put_estimate(f, t);
    fputs(" | ", f);
    put_test_name(f, t);
    fputs(" | ", f);
    if (!t->tested) {
        if (t->va == 0 || t->vb == 0) fputs("– | – | – | untestable (no values) |\n", f);
        else fprintf(f, "– | – | – | untested (%s) |\n", t->why[0] ? t->why : "too few seeds");
        return;
    }
    if (t->floor_p > 0) fprintf(f, "%.3g", t->floor_p);
    else fputs("–", f);
    fputs(" | ", f);
    put_p(f, t->p);
    fputs(" | ", f);
    if (t->left_out) fputs("–", f);
    else put_p(f, t->holm);
    fprintf(f, " | %s |\n",
            t->left_out                       ? "left out (Tarone)"
            : t->untestable                   ? "untestable here"
            : !significant(t) && t->one_sided ? "not shown"
            : !significant(t)                 ? "no difference shown"
            : t->inter >= 0 && t->one_sided
                ? (t->dir < 0 ? "**below the bound**" : "**above the bound**")
            : t->dir < 0 ? "**lower**"
                         : "**higher**");
}

/* The reasons of the untestable and left-out tests of a family. */
static void put_why(FILE *f, const PTest *t, int k, char prefix) {
    int said = 0;
    for (int i = 0; i < k; i++) {
        if (!t[i].untestable && !t[i].left_out) continue;
        if (!said++) fputs("\nUntestable here or left out of the family, and why:\n\n", f);
        fprintf(f, "- %c%d: %s.\n", prefix, i + 1, t[i].why);
    }
}

static void md_primary_table(FILE *f, const Protocol *pr, const PTest *t, int k) {
    fprintf(f, "\n### Primary tests\n\nOne test per claim. For a paired test the arm and "
               "reference columns are means over the pairs the test uses, and the estimate is the "
               "test's own; \"lower\" and \"higher\" are the direction of the test's statistic "
               "(docs/statistics.md, \"Direction\").\n\n"
               "| id | claim | metric | arm | reference | estimate (arm − reference) [95%% CI] | "
               "declared test | smallest attainable p | p | Holm p | result (Holm p < 0.05) |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < k; i++) ptable_row(f, pr, &t[i], 'P', i + 1);
    put_why(f, t, k, 'P');
}

/* Seeds with a sink per arm, with a Clopper-Pearson interval. */
static void md_sink_counts(FILE *f, const Row *rows, int n, const Protocol *pr) {
    fprintf(f,
            "\n### Sink formation per arm (exploratory)\n\nA seed *formed a sink* when its F-Attn "
            "exceeds %g× the share of uniform causal attention at the probe length "
            "([definition](#def-sink-formed)). These counts repeat F-Attn coarsely and move with "
            "their threshold, so they are not in the primary family.\n\n| arm | seeds with a "
            "sink | share | 95%% Clopper–Pearson interval |\n|---|---|---|---|\n",
            SINK_FORMED_FACTOR);
    const char *seen[2 * PROTO_MAX];
    int ns = 0;
    ProtoMetric flag = proto_metric_of(PROTO_SINK_FLAG);
    for (int c = 0; c < pr->n_compares; c++)
        for (int side = 0; side < 2; side++) {
            const char *arm = side ? pr->compares[c].ref : pr->compares[c].arm;
            int dup = 0;
            for (int i = 0; i < ns; i++) dup |= !strcmp(seen[i], arm);
            if (dup) continue;
            seen[ns++] = arm;
            double v[MAX_SEEDS], lo, hi;
            char err[256];
            int m = group_values(rows, n, group_of(rows, n, arm), pr, flag, v), k = 0;
            for (int i = 0; i < m; i++) k += v[i] > 0.5;
            if (m < 1 || stats_clopper_pearson(&lo, &hi, k, m, 0.95, err, sizeof err) != 0) {
                fprintf(f, "| %s | no runs | – | – |\n", arm);
                continue;
            }
            fprintf(f, "| %s | %d of %d | %.2f | [%.3f, %.3f] |\n", arm, k, m, (double)k / m, lo,
                    hi);
        }
}

static void md_equivalence_table(FILE *f, const Protocol *pr, const ETest *e, int k) {
    if (!k) return;
    fprintf(f,
            "\n### Equivalence tests (TOST)\n\nOne per `~` claim: two one-sided tests against the "
            "margin the protocol declares, paired t over the seeds both arms have when the "
            "metric's declared test pairs, else Welch; equivalence is claimed only when the "
            "Holm-adjusted TOST p (across these %d tests) is below %.2f.\n\n| id | arm | "
            "reference | metric | margin | difference (mean) | TOST | TOST p | Holm p | result "
            "|\n|---|---|---|---|---|---|---|---|---|---|\n",
            k, ALPHA);
    for (int i = 0; i < k; i++) {
        const ProtoCompare *c = &pr->compares[e[i].compare];
        fprintf(f, "| E%d | %s | %s | %s | ±%g |", i + 1, c->arm, c->ref,
                proto_metric_name(e[i].metric), pr->margin[e[i].metric]);
        if (!e[i].tested) {
            fputs(" – | – | – | – | untested |\n", f);
            continue;
        }
        fprintf(f, " %+.4g | ", e[i].t.diff);
        if (e[i].paired) fprintf(f, "paired t, %d pairs | ", e[i].pairs);
        else fputs("Welch | ", f);
        put_p(f, e[i].t.p);
        fputs(" | ", f);
        put_p(f, e[i].holm);
        fprintf(f, " | %s |\n", e[i].holm < ALPHA ? "**equivalent**" : "equivalence not shown");
    }
}

/* ---- the headline: one generated sentence per claim ---- */

static void put_values(FILE *f, const PTest *t) {
    if (t->metric == PROTO_GOOD_REGIME_M)
        fprintf(f, "%d of %d seeds against %d of %d", t->ka, t->na, t->kb, t->nb);
    else if (proto_test_paired(t->test) && isfinite(t->est)) {
        fprintf(f, "%s ", t->test == PT_WILCOXON ? "Hodges–Lehmann estimate" : "mean difference");
        put_estimate_short(f, t);
        fprintf(f, " over %d pair%s (%.5g against %.5g)", t->pairs, t->pairs == 1 ? "" : "s",
                t->mean_a, t->mean_b);
    } else fprintf(f, "%.5g against %.5g", t->mean_a, t->mean_b);
    if (t->metric == proto_metric_of(PROTO_LOSS_METRIC) && isfinite(t->task_floor))
        fprintf(f, " (task floor %.4f)", t->task_floor);
}

typedef struct {
    const Row *rows;
    int n;
} RowSet;

/* The variant of run name among the rows (ProtoVariantFn). */
static const char *row_variant(void *user, const char *name) {
    const RowSet *rs = user;
    int g = group_of(rs->rows, rs->n, name);
    return g >= 0 ? rs->rows[g].variant : NULL;
}

/* "(Table 4: F-Attn 0.048 against 0.467; our reading: the gate removes
 * ...)", or the paper's words in quotes where the claims table has them. */
static void put_source(FILE *f, const Row *rows, int n, const Protocol *pr, int j) {
    RowSet rs = {rows, n};
    const PaperClaim *c = protocol_claim_row(pr, j, row_variant, &rs);
    if (c && c->quoted) fprintf(f, " (%s: %s; \"%s\")", c->table, c->values, c->sentence);
    else if (c) fprintf(f, " (%s: %s; our reading: %s)", c->table, c->values, c->sentence);
    else fputs(" (no row of the paper's claims table matches these arms' variants)", f);
}

/* The verdict of a tested claim: only a significant test whose statistic
 * goes the claim's way confirms it; a significant two-sided test the
 * other way contradicts it; a one-sided test cannot. */
static void put_verdict(FILE *f, const ProtoClaim *cl, const PTest *t) {
    int goes = cl->lower ? t->dir < 0 : t->dir > 0;
    if (significant(t) && goes) fputs("**Confirmed** here: ", f);
    else if (significant(t) && !cl->one_sided && cl->rel != PR_SINK_FREE)
        fputs("**Contradicted** here, we disagree with the paper: the test's statistic goes the "
              "other way, ",
              f);
    else fputs("**Not shown** here: ", f);
}

static void claim_sentence(FILE *f, const Row *rows, int n, const Protocol *pr, int j,
                           const PTest *t, int id) {
    const ProtoClaim *cl = &pr->claims[j];
    if (cl->rel == PR_SINK_FREE)
        fprintf(f,
                "- The paper: `%s` is attention-sink-free (tested as F-Attn at most %g× the run's "
                "uniform share, one-sided)",
                cl->arm, 1 + pr->sink_margin);
    else
        fprintf(f, "- The paper: `%s` has %s %s than `%s`%s", pr->compares[cl->compare].arm,
                cl->lower ? "a lower" : "a higher", proto_metric_label(cl->metric),
                pr->compares[cl->compare].ref, cl->one_sided ? " (tested one-sided)" : "");
    put_source(f, rows, n, pr, j);
    fputs(". ", f);
    int none = t->va == 0 || (cl->rel != PR_SINK_FREE && t->vb == 0);
    if (!t->tested && none) {
        fprintf(f,
                "**Untestable here**: no run of `%s` has a %s (not evaluated, or not defined "
                "for these runs: results.csv leaves it blank) (P%d).\n",
                t->va == 0 ? (cl->rel == PR_SINK_FREE ? cl->arm : pr->compares[cl->compare].arm)
                           : pr->compares[cl->compare].ref,
                proto_metric_label(cl->metric), id);
        return;
    }
    if (!t->tested) {
        fprintf(f, "**Untested** here: %s (P%d).\n", t->why[0] ? t->why : "too few seeds", id);
        return;
    }
    if (t->untestable || t->left_out) {
        fprintf(f, "**Untestable here**: %s; ", t->why);
        put_values(f, t);
        fprintf(f, " (P%d).\n", id);
        return;
    }
    put_verdict(f, cl, t);
    put_values(f, t);
    fputs(", Holm p ", f);
    put_p_rel(f, t->holm);
    fprintf(f, " (P%d).\n", id);
}

static void equivalence_sentences(FILE *f, const Protocol *pr, const ETest *e, int k) {
    for (int i = 0; i < k; i++) {
        if (!e[i].tested) continue;
        const ProtoCompare *c = &pr->compares[e[i].compare];
        fprintf(f, "- `%s` and `%s`: %s within ±%g ", c->arm, c->ref,
                proto_metric_label(e[i].metric), pr->margin[e[i].metric]);
        fputs(e[i].holm < ALPHA ? "is **equivalent** (" : "is **not shown equivalent** (", f);
        fputs("Holm TOST p ", f);
        put_p_rel(f, e[i].holm);
        fprintf(f, ", E%d).\n", i + 1);
    }
}

/* The runs (readable rows) whose /protocol hash is not pr's: none
 * recorded (kind 0) or another (kind 1), named up to LIST_MAX. Returns how
 * many. */
static int list_mismatch(FILE *f, const Row *rows, int n, const Protocol *pr, int kind) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!rows[i].ok || !strcmp(rows[i].protocol_hash, pr->hash)) continue;
        if ((rows[i].protocol_hash[0] != '\0') != kind) continue;
        if (f && k < LIST_MAX) fprintf(f, "%s`%s`", k ? ", " : "", rows[i].file);
        k++;
    }
    if (f && k > LIST_MAX) fprintf(f, " and %d more", k - LIST_MAX);
    return k;
}

/* "declared before the runs" (every run records its hash and every check
 * of protocol_check.h holds: pinned), or why not. */
static void put_declared(FILE *f, const Row *rows, int n, const Protocol *pr, int pinned) {
    int none = list_mismatch(NULL, rows, n, pr, 0), other = list_mismatch(NULL, rows, n, pr, 1);
    if (!none && !other) {
        fputs(pinned ? "declared before the runs: every run file records its hash, as far as the "
                       "checks below go"
                     : "**not shown declared before the runs**: every run file records its "
                       "hash, but a check below fails",
              f);
        return;
    }
    fputs("**not declared before every run**: ", f);
    if (none) {
        fprintf(f, "%d run%s recorded no protocol (made before it or without it: ", none,
                none == 1 ? "" : "s");
        list_mismatch(f, rows, n, pr, 0);
        fputs(")", f);
    }
    if (other) {
        fprintf(f, "%s%d run%s recorded another protocol (", none ? "; " : "", other,
                other == 1 ? "" : "s");
        list_mismatch(f, rows, n, pr, 1);
        fputs(")", f);
    }
}

/* The task floor beside val loss: the range over the runs that record one
 * (bigram-backcopy), or nothing. */
static void put_task_floor(FILE *f, const Row *rows, int n) {
    double lo = INFINITY, hi = -INFINITY;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (rows[i].ok && isfinite(rows[i].task_floor)) {
            lo = fmin(lo, rows[i].task_floor), hi = fmax(hi, rows[i].task_floor);
            k++;
        }
    if (!k) return;
    fprintf(f,
            "The task's floor, the Bayes-optimal val loss on the runs' val batches "
            "(docs/metrics.md, task floor), is %.4f nats",
            lo);
    if (hi > lo) fprintf(f, " to %.4f", hi);
    fprintf(f, " (%d run%s record it): no arm's val loss can go below it.\n\n", k,
            k == 1 ? "" : "s");
}

static void md_headline(FILE *f, const Row *rows, int n, const Protocol *pr, const PTest *t, int k,
                        const ETest *e, int ke) {
    int seeds = 0;
    for (int i = 0; i < k; i++) {
        seeds = t[i].na > seeds ? t[i].na : seeds;
        seeds = t[i].nb > seeds ? t[i].nb : seeds;
    }
    /* the pre-registration checks run git: once, their lines kept for below */
    char *status = NULL;
    size_t slen = 0;
    FILE *sf = open_memstream(&status, &slen);
    int pinned = sf ? protocol_status(sf, pr->path, rows, n) : 0;
    if (sf) fclose(sf);
    fprintf(f, "\n## Headline (confirmatory)\n\nThe protocol of this directory (`%s`, %s, ",
            PROTO_FILE, pr->hash);
    put_declared(f, rows, n, pr, pinned);
    fprintf(f,
            ") has %d primary test%s, one per claim of the paper it declares, up to %d seeds an "
            "arm, each by the one test the protocol declares for its metric:",
            k, k == 1 ? "" : "s", seeds);
    for (int j = 0; j < pr->n_metrics; j++)
        fprintf(f, "%s %s by %s", j ? "," : "", proto_metric_name(pr->metrics[j]),
                proto_test_name(pr->test[pr->metrics[j]]));
    if (pr->good_below > 0)
        fprintf(f, " (good_regime: final val loss below %g nats)", pr->good_below);
    fprintf(f,
            ". Holm's correction runs across the tests that can reach its bound (Tarone's rule "
            "leaves out the others, each said below); a claim is confirmed only when the "
            "Holm-adjusted p is below %.2f and the test's own statistic goes the claim's way, and "
            "a claim whose test cannot reject by construction is untestable here. Every other "
            "comparison in this report is exploratory.\n\n",
            ALPHA);
    fputs("Pre-registration (docs/sweeps.md, \"Confirmatory sweeps\"):\n\n", f);
    if (status) fputs(status, f);
    else protocol_status(f, pr->path, rows, n);
    free(status);
    fputc('\n', f);
    put_task_floor(f, rows, n);
    md_scale(f, rows, n, pr); /* report_compute.c */
    for (int i = 0; i < k; i++) claim_sentence(f, rows, n, pr, t[i].claim, &t[i], i + 1);
    if (ke) {
        fputs("\nEquivalence, claimed only by TOST within the protocol's margin:\n\n", f);
        equivalence_sentences(f, pr, e, ke);
    }
    put_other_arch(f, confirm_other_arch(rows, n, pr), "run",
                   " of these tests: the paper's claims are about its architecture; the "
                   "exploratory comparisons below include it.",
                   " of these tests: the paper's claims are about its architecture; the "
                   "exploratory comparisons below include them.");
}

/* One interaction's sentence: the question it asks, its H1, and what the
 * test shows, citing its S id. Never "The paper": no claim of it. */
static void interaction_sentence(FILE *f, const Protocol *q, const PTest *t, int id) {
    const ProtoInteraction *x = &q->inter[q->claims[t->claim].inter];
    fprintf(f,
            "- Question (not a claim of the paper): does the %s difference `%s` − `%s` change "
            "from `%s` − `%s` on the same seeds? Per seed d = (%s − %s) − (%s − %s); ",
            proto_metric_label(x->metric), x->arm2, x->ref2, x->arm1, x->ref1, x->arm2, x->ref2,
            x->arm1, x->ref1);
    if (x->side) fprintf(f, "H1: d %s %+g, one-sided. ", x->side < 0 ? "below" : "above", x->bound);
    else fputs("H1: d is not 0, two-sided. ", f);
    if (!t->tested) {
        fprintf(f, "**Untested** here: too few seeds with all four arms (S%d).\n", id);
        return;
    }
    if (t->left_out) {
        fprintf(f, "**Untestable here**: %s (S%d).\n", t->why, id);
        return;
    }
    int goes = x->side ? (x->side < 0 ? t->dir < 0 : t->dir > 0) : t->dir != 0;
    if (significant(t) && goes && x->side)
        fprintf(f, "**Shown**: d is %s %+g: ", x->side < 0 ? "below" : "above", x->bound);
    else if (significant(t) && goes)
        fprintf(f, "**Changed**: d is %s 0: ", t->dir < 0 ? "below" : "above");
    else if (x->side)
        fprintf(f, "**Not shown**: d %s %+g is not ruled out: ",
                x->side < 0 ? "at or above" : "at or below", x->bound);
    else fputs("**No change shown**: ", f);
    fprintf(f, "%s ", t->test == PT_WILCOXON ? "Hodges–Lehmann estimate" : "mean");
    put_estimate_short(f, t);
    fprintf(f, " over %d seed%s, Holm p ", t->pairs, t->pairs == 1 ? "" : "s");
    put_p_rel(f, t->holm);
    fprintf(f, " (S%d).\n", id);
}

/* The [secondary] family: every compare crossed with every metric, each
 * a two-sided question, as claims of a copy of sec for confirm_tests. */
static void md_secondary(FILE *f, const Row *rows, int n, const Protocol *sec) {
    Protocol q = *sec;
    PTest t[MAX_TESTS];
    q.n_claims = 0;
    for (int c = 0; c < q.n_compares; c++)
        for (int j = 0; j < q.n_metrics && q.n_claims < PROTO_MAX; j++)
            q.claims[q.n_claims++] =
                (ProtoClaim){.metric = q.metrics[j], .compare = c, .lower = 1, .rel = PR_LOWER};
    for (int i = 0; i < q.n_inter && q.n_claims < PROTO_MAX; i++)
        q.claims[q.n_claims++] = (ProtoClaim){.metric = q.inter[i].metric,
                                              .compare = -1,
                                              .lower = q.inter[i].side < 0,
                                              .one_sided = q.inter[i].side != 0,
                                              .rel = PR_INTERACT,
                                              .inter = i};
    int k = confirm_tests(rows, n, &q, t), kc = q.n_compares * q.n_metrics;
    fprintf(f,
            "\n### Secondary family (questions, not claims)\n\nThe protocol's [secondary] "
            "section: %d test%s of what the paper states no claim on (%d comparison%s × %d "
            "metric%s, two-sided, and %d interaction%s), Holm's correction across these alone "
            "(Tarone's rule as in the primary family). A difference here is a finding of this "
            "study, not a test of the paper.\n\n| id | question | metric | arm (interaction: "
            "d) | reference | estimate (arm − reference; interaction: d) [95%% CI] | declared "
            "test | smallest attainable p | p | Holm p | result (Holm p < 0.05) "
            "|\n|---|---|---|---|---|---|---|---|---|---|---|\n",
            k, k == 1 ? "" : "s", q.n_compares, q.n_compares == 1 ? "" : "s", q.n_metrics,
            q.n_metrics == 1 ? "" : "s", q.n_inter, q.n_inter == 1 ? "" : "s");
    for (int i = 0; i < k; i++) ptable_row(f, &q, &t[i], 'S', i + 1);
    put_why(f, t, k, 'S');
    if (k > kc) fputs("\n", f);
    for (int i = kc; i < k; i++)
        if (q.claims[t[i].claim].rel == PR_INTERACT) interaction_sentence(f, &q, &t[i], i + 1);
}

/* The headline of a study whose declared runs are not all here: the
 * pre-registration checks (naming the missing runs) and no test. */
static void md_interim(FILE *f, const Row *rows, int n, const Protocol *pr, int missing) {
    fprintf(f,
            "\n## Headline (confirmatory)\n\n**Interim: no test yet.** %d of the runs the "
            "protocol of this directory (`%s`, %s) declares %s not here. Its tests run, and its "
            "claims get verdicts, only over every declared run, so this report states none; a "
            "study run in pieces (`gatelab sweep --seeds`, docs/sweeps.md) gets them in the "
            "report of its last piece. Every table below is exploratory.\n\n"
            "Pre-registration (docs/sweeps.md, \"Confirmatory sweeps\"):\n\n",
            missing, PROTO_FILE, pr->hash, missing == 1 ? "is" : "are");
    protocol_status(f, pr->path, rows, n);
}

void report_confirm(FILE *f, const Row *rows, int n, const Protocol *pr, const Protocol *sec) {
    int missing = protocol_runs_missing(pr->path, rows, n);
    if (missing > 0) {
        md_interim(f, rows, n, pr, missing);
        return;
    }
    PTest t[MAX_TESTS];
    ETest e[MAX_TESTS];
    int k = confirm_tests(rows, n, pr, t), ke = equivalence_tests(rows, n, pr, e);
    md_headline(f, rows, n, pr, t, k, e, ke);
    if (sec)
        fputs("\nThe protocol's [secondary] family, the questions the paper states no claim on, is "
              "tested apart with its own Holm correction ([below](#secondary-family-questions-not-"
              "claims)).\n",
              f);
    md_primary_table(f, pr, t, k);
    if (sec) md_secondary(f, rows, n, sec);
    md_sink_counts(f, rows, n, pr);
    md_equivalence_table(f, pr, e, ke);
}
