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
    int tested;
    StatsTost t;
    double holm;
} ETest;

static const char *const METRIC_LABEL[PM_COUNT] = {
    [PM_F_ATTN] = "F-Attn",
    [PM_SINK_FORMED] = "share of seeds with a sink",
    [PM_M_ACT] = "M-Act",
    [PM_VAL_LOSS] = "val loss",
    [PM_LC_2X_PLAIN] = "val-loss degradation at 2× T (plain RoPE)",
    [PM_LC_4X_PLAIN] = "val-loss degradation at 4× T (plain RoPE)",
    [PM_LC_8X_PLAIN] = "val-loss degradation at 8× T (plain RoPE)",
    [PM_LC_2X_YARN] = "val-loss degradation at 2× T (YaRN)",
    [PM_LC_4X_YARN] = "val-loss degradation at 4× T (YaRN)",
    [PM_LC_8X_YARN] = "val-loss degradation at 8× T (YaRN)",
    [PM_Q_W8A8] = "val-loss increase under W8A8 (min-max)",
    [PM_Q_W8A8_PCT] = "val-loss increase under W8A8 (percentile)",
    [PM_Q_W4A4] = "val-loss increase under W4A4",
    [PM_GOOD_REGIME] = "share of seeds in the good regime"};

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
    for (int c = 0; c < pr->n_compares; c++)
        for (int j = 0; j < pr->n_metrics; j++) {
            ProtoMetric m = pr->metrics[j];
            if (!(pr->margin[m] > 0)) continue;
            double a[MAX_SEEDS], b[MAX_SEEDS];
            int na = group_values(rows, n, group_of(rows, n, pr->compares[c].arm), pr, m, a);
            int nb = group_values(rows, n, group_of(rows, n, pr->compares[c].ref), pr, m, b);
            e[k] = (ETest){.compare = c, .metric = m, .holm = NAN};
            e[k].tested =
                na >= 2 && nb >= 2 &&
                stats_tost_welch(&e[k].t, a, na, b, nb, pr->margin[m], err, sizeof err) == 0;
            p[k] = e[k].tested ? e[k].t.p : NAN;
            k++;
        }
    adjust_family(adj, p, k, 0);
    for (int i = 0; i < k; i++) e[i].holm = adj[i];
    return k;
}

/* ---- the tables ---- */

static int significant(const PTest *t) { return t->tested && !t->untestable && t->holm < ALPHA; }

static void put_arm_cell(FILE *f, const PTest *t, int a_side) {
    int n = a_side ? t->na : t->nb, k = a_side ? t->ka : t->kb;
    double m = a_side ? t->mean_a : t->mean_b, s = a_side ? t->sd_a : t->sd_b;
    if (n < 1) fputs(" no runs |", f);
    else if (t->metric == PM_GOOD_REGIME) fprintf(f, " %d of %d |", k, n);
    else fprintf(f, " %.5g ± %.2g (%d) |", m, s, n);
}

/* "wilcoxon (paired, 20 seeds)", "welch, one-sided", ... */
static void put_test_name(FILE *f, const PTest *t) {
    fputs(proto_test_name(t->test), f);
    if (proto_test_paired(t->test)) {
        fprintf(f, " (paired, %d seed%s", t->pairs, t->pairs == 1 ? "" : "s");
        if (t->unpaired) fprintf(f, "; %d without a partner left out", t->unpaired);
        fputc(')', f);
    }
    if (t->one_sided) fputs(", one-sided", f);
}

static void ptable_row(FILE *f, const Protocol *pr, const PTest *t, int id) {
    const ProtoCompare *c = &pr->compares[t->compare];
    fprintf(f, "| P%d | %s | %s | %s |", id, c->arm, c->ref, proto_metric_name(t->metric));
    put_arm_cell(f, t, 1);
    put_arm_cell(f, t, 0);
    if (t->metric == PM_GOOD_REGIME) fprintf(f, " %+.2f | ", t->mean_a - t->mean_b);
    else if (t->na >= 1 && t->nb >= 1)
        fprintf(f, " %+.4g [%+.4g, %+.4g] | ", t->ci.diff, t->ci.lo, t->ci.hi);
    else fputs(" – | ", f);
    put_test_name(f, t);
    fputs(" | ", f);
    if (!t->tested) {
        fputs("– | – | – | untested (too few seeds) |\n", f);
        return;
    }
    if (t->floor_p > 0) fprintf(f, "%.3g", t->floor_p);
    else fputs("–", f);
    fputs(" | ", f);
    put_p(f, t->p);
    fputs(" | ", f);
    put_p(f, t->holm);
    fprintf(f, " | %s |\n",
            t->untestable           ? "untestable here"
            : !significant(t)       ? "no difference shown"
            : t->mean_a < t->mean_b ? "**lower**"
                                    : "**higher**");
}

static void md_primary_table(FILE *f, const Protocol *pr, const PTest *t, int k) {
    fprintf(f, "\n### Primary tests\n\n"
               "| id | arm | reference | metric | arm | reference | difference (arm − "
               "reference) [95%% CI] | declared test | smallest attainable p | p | Holm p | "
               "result (Holm p < 0.05) |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < k; i++) ptable_row(f, pr, &t[i], i + 1);
    int said = 0;
    for (int i = 0; i < k; i++) {
        if (!t[i].untestable) continue;
        if (!said++) fputs("\nUntestable here, and why:\n\n", f);
        fprintf(f, "- P%d: %s.\n", i + 1, t[i].why);
    }
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
    for (int c = 0; c < pr->n_compares; c++)
        for (int side = 0; side < 2; side++) {
            const char *arm = side ? pr->compares[c].ref : pr->compares[c].arm;
            int dup = 0;
            for (int i = 0; i < ns; i++) dup |= !strcmp(seen[i], arm);
            if (dup) continue;
            seen[ns++] = arm;
            double v[MAX_SEEDS], lo, hi;
            char err[256];
            int m = group_values(rows, n, group_of(rows, n, arm), pr, PM_SINK_FORMED, v), k = 0;
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
            "\n### Equivalence tests (TOST)\n\nTwo one-sided Welch tests against the margins "
            "the protocol declares; equivalence is claimed only when the Holm-adjusted TOST "
            "p (across these %d tests) is below %.2f.\n\n| id | arm | reference | metric | "
            "margin | difference | TOST p | Holm p | result |\n"
            "|---|---|---|---|---|---|---|---|---|\n",
            k, ALPHA);
    for (int i = 0; i < k; i++) {
        const ProtoCompare *c = &pr->compares[e[i].compare];
        fprintf(f, "| E%d | %s | %s | %s | ±%g |", i + 1, c->arm, c->ref,
                proto_metric_name(e[i].metric), pr->margin[e[i].metric]);
        if (!e[i].tested) {
            fputs(" – | – | – | untested |\n", f);
            continue;
        }
        fprintf(f, " %+.4g | ", e[i].t.diff);
        put_p(f, e[i].t.p);
        fputs(" | ", f);
        put_p(f, e[i].holm);
        fprintf(f, " | %s |\n", e[i].holm < ALPHA ? "**equivalent**" : "equivalence not shown");
    }
}

/* ---- the headline: one generated sentence per claim ---- */

static void put_values(FILE *f, const PTest *t) {
    if (t->metric == PM_GOOD_REGIME)
        fprintf(f, "%d of %d seeds against %d of %d", t->ka, t->na, t->kb, t->nb);
    else fprintf(f, "%.5g against %.5g", t->mean_a, t->mean_b);
    if (t->metric == PM_VAL_LOSS && isfinite(t->task_floor))
        fprintf(f, " (task floor %.4f)", t->task_floor);
}

static void claim_sentence(FILE *f, const Protocol *pr, const ProtoClaim *cl, const PTest *t,
                           int id) {
    const ProtoCompare *c = &pr->compares[cl->compare];
    fprintf(f, "- The paper: `%s` has %s %s than `%s`%s. ", c->arm,
            cl->lower ? "a lower" : "a higher", METRIC_LABEL[cl->metric], c->ref,
            cl->one_sided ? " (tested one-sided)" : "");
    if (!t->tested) {
        fprintf(f, "**Untested** here: too few seeds (P%d).\n", id);
        return;
    }
    if (t->untestable) {
        fprintf(f, "**Untestable here**: %s; ", t->why);
        put_values(f, t);
        fprintf(f, " (P%d).\n", id);
        return;
    }
    int lower = t->mean_a < t->mean_b;
    if (significant(t) && lower == cl->lower) fputs("**Confirmed** here: ", f);
    else if (significant(t))
        fputs("**Contradicted** here, we disagree with the paper: the difference goes the other "
              "way, ",
              f);
    else fputs("**Not shown** here (no significant difference): ", f);
    put_values(f, t);
    fputs(", Holm p ", f);
    put_p_rel(f, t->holm);
    fprintf(f, " (P%d).\n", id);
}

/* The paper's value of metric m for a run group's variant (NaN: none). */
static double paper_value(const Row *rows, int n, const char *run, ProtoMetric m) {
    int g = group_of(rows, n, run);
    const PaperRow *r = g >= 0 ? paper_row(rows[g].variant) : NULL;
    if (!r) return NAN;
    return m == PM_F_ATTN ? r->f_attn : m == PM_M_ACT ? r->m_act : m == PM_VAL_LOSS ? r->ppl : NAN;
}

/* 1 when the paper's tables (paper_tables.c) give arm and ref values of
 * t's metric that differ in the direction t found. */
static int paper_names(const Row *rows, int n, const Protocol *pr, const PTest *t) {
    const ProtoCompare *c = &pr->compares[t->compare];
    double a = paper_value(rows, n, c->arm, t->metric), b = paper_value(rows, n, c->ref, t->metric);
    return isfinite(a) && isfinite(b) && a != b && (a < b) == (t->mean_a < t->mean_b);
}

/* Significant primary results that no declared claim covers, said apart
 * by whether the paper's own tables show them (named == 1) or not. */
static void other_results(FILE *f, const Row *rows, int n, const Protocol *pr, const PTest *t,
                          int k, int named) {
    int shown = 0;
    for (int i = 0; i < k; i++) {
        if (t[i].claim >= 0 || !significant(&t[i]) || paper_names(rows, n, pr, &t[i]) != named)
            continue;
        const ProtoCompare *c = &pr->compares[t[i].compare];
        if (!shown++)
            fputs(named ? "\nOther differences the primary family shows, which the paper's tables "
                          "also show (docs/paper-tables.md) though the protocol declares no claim "
                          "on them:\n\n"
                        : "\nOther differences the primary family shows (no claim of the paper "
                          "names them):\n\n",
                  f);
        fprintf(f, "- `%s` has %s %s than `%s`: ", c->arm,
                t[i].mean_a < t[i].mean_b ? "a lower" : "a higher", METRIC_LABEL[t[i].metric],
                c->ref);
        put_values(f, &t[i]);
        fputs(", Holm p ", f);
        put_p_rel(f, t[i].holm);
        fprintf(f, " (P%d).\n", i + 1);
    }
}

static void equivalence_sentences(FILE *f, const Protocol *pr, const ETest *e, int k) {
    for (int i = 0; i < k; i++) {
        if (!e[i].tested) continue;
        const ProtoCompare *c = &pr->compares[e[i].compare];
        fprintf(f, "- `%s` and `%s`: %s within ±%g ", c->arm, c->ref, METRIC_LABEL[e[i].metric],
                pr->margin[e[i].metric]);
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
 * of protocol_check.h holds), or why not. */
static void put_declared(FILE *f, const Row *rows, int n, const Protocol *pr) {
    int none = list_mismatch(NULL, rows, n, pr, 0), other = list_mismatch(NULL, rows, n, pr, 1);
    int pinned = protocol_status(NULL, pr->path, rows, n);
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
    fprintf(f, "\n## Headline (confirmatory)\n\nThe protocol of this directory (`%s`, %s, ",
            PROTO_FILE, pr->hash);
    put_declared(f, rows, n, pr);
    fprintf(f,
            ") has %d primary test%s (%d comparison%s × %d metric%s), up to %d seeds an arm, "
            "each by the one test the protocol declares for its metric:",
            k, k == 1 ? "" : "s", pr->n_compares, pr->n_compares == 1 ? "" : "s", pr->n_metrics,
            pr->n_metrics == 1 ? "" : "s", seeds);
    for (int j = 0; j < pr->n_metrics; j++)
        fprintf(f, "%s %s by %s", j ? "," : "", proto_metric_name(pr->metrics[j]),
                proto_test_name(pr->test[pr->metrics[j]]));
    if (pr->good_below > 0)
        fprintf(f, " (good_regime: final val loss below %g nats)", pr->good_below);
    fprintf(f,
            ". Holm's correction runs across all %d; a difference is claimed only when the "
            "Holm-adjusted p is below %.2f, and a test that cannot reject by construction is "
            "untestable here. Every other comparison in this report is exploratory.\n\n",
            k, ALPHA);
    fputs("Pre-registration (docs/sweeps.md, \"Confirmatory sweeps\"):\n\n", f);
    protocol_status(f, pr->path, rows, n);
    fputc('\n', f);
    put_task_floor(f, rows, n);
    for (int j = 0; j < pr->n_claims; j++)
        for (int i = 0; i < k; i++)
            if (t[i].claim == j) claim_sentence(f, pr, &pr->claims[j], &t[i], i + 1);
    other_results(f, rows, n, pr, t, k, 1);
    other_results(f, rows, n, pr, t, k, 0);
    if (ke) {
        fputs("\nEquivalence, claimed only by TOST within the protocol's margin:\n\n", f);
        equivalence_sentences(f, pr, e, ke);
    }
}

void report_confirm(FILE *f, const Row *rows, int n, const Protocol *pr) {
    PTest t[MAX_TESTS];
    ETest e[MAX_TESTS];
    int k = confirm_tests(rows, n, pr, t), ke = equivalence_tests(rows, n, pr, e);
    md_headline(f, rows, n, pr, t, k, e, ke);
    md_primary_table(f, pr, t, k);
    md_sink_counts(f, rows, n, pr);
    md_equivalence_table(f, pr, e, ke);
}
