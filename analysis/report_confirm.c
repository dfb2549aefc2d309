/* report_confirm.c: the confirmatory part of REPORT.md, from the protocol a
 * sweep declared before its runs (protocol.h, DIR/protocol.ini).
 *
 * Each (comparison, metric) of the primary family is one test with an id
 * P1, P2, ...: for a metric with a mean, Welch's t-test and the exact
 * Mann-Whitney test, whose larger p is the test's p; for sink_formed,
 * Fisher's exact test on the seeds' sink counts. Holm's correction runs
 * across the whole family, and a difference is claimed only when the
 * Holm-adjusted p is below ALPHA. Equivalence ("as well as") is claimed
 * only by TOST within the protocol's margin, ids E1, E2, ..., with Holm's
 * correction across those. Every sentence of the headline is generated
 * from these rows and cites one. */
#include "report_confirm.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "metric_table.h"
#include "metrics.h"
#include "report_priv.h"
#include "stats.h"

#define ALPHA 0.05
#define MAX_SEEDS 256
#define MAX_TESTS (PROTO_MAX * PM_COUNT)

/* One primary test. */
typedef struct {
    int compare;
    ProtoMetric metric;
    int na, nb, tested;
    double mean_a, sd_a, mean_b, sd_b; /* for sink_formed: proportions */
    int ka, kb;                        /* sink_formed: seeds with a sink */
    StatsWelch w;
    StatsMannWhitney mw;
    StatsCI ci;
    double p, holm; /* the test's p and its Holm-adjusted p (NaN: untested) */
} PTest;

/* One equivalence test. */
typedef struct {
    int compare;
    ProtoMetric metric;
    int tested;
    StatsTost t;
    double holm;
} ETest;

static const char *const METRIC_LABEL[PM_COUNT] = {"F-Attn", "share of seeds with a sink", "M-Act",
                                                   "val loss"};

/* Start row of the group named `run`, or -1. */
static int group_of(const Row *rows, int n, const char *run) {
    for (int a = 0; a < n && rows[a].ok; a = group_end(rows, n, a))
        if (!strcmp(rows[a].run, run)) return a;
    return -1;
}

static double row_value(const Row *w, ProtoMetric m) {
    const MetricCol *c = metric_find(proto_metric_name(m));
    return c ? metric_value(w, c) : NAN;
}

/* The finite values of metric m over group a's seeds. */
static int group_values(const Row *rows, int n, int a, ProtoMetric m, double *v) {
    int k = 0;
    for (int i = a; a >= 0 && i < n && k < MAX_SEEDS && same_group(&rows[a], &rows[i]); i++) {
        double x = row_value(&rows[i], m);
        if (isfinite(x)) v[k++] = x;
    }
    return k;
}

/* Each side's summary: mean and sd, or for sink_formed the count. */
static void summarise(PTest *t, const double *a, const double *b) {
    if (t->metric == PM_SINK_FORMED) {
        for (int i = 0; i < t->na; i++) t->ka += a[i] > 0.5;
        for (int i = 0; i < t->nb; i++) t->kb += b[i] > 0.5;
        t->mean_a = t->na ? (double)t->ka / t->na : NAN;
        t->mean_b = t->nb ? (double)t->kb / t->nb : NAN;
        return;
    }
    if (t->na) mean_std(a, t->na, &t->mean_a, &t->sd_a);
    if (t->nb) mean_std(b, t->nb, &t->mean_b, &t->sd_b);
}

static void sink_test(PTest *t) {
    char err[256];
    t->tested = stats_fisher_exact(&t->p, t->ka, t->na, t->kb, t->nb, err, sizeof err) == 0;
}

static void mean_test(PTest *t, const double *a, const double *b) {
    char err[256];
    if (t->na < 2 || t->nb < 2) return;
    t->tested = stats_welch(&t->w, a, t->na, b, t->nb, err, sizeof err) == 0 &&
                stats_mann_whitney(&t->mw, a, t->na, b, t->nb, err, sizeof err) == 0 &&
                stats_bootstrap_diff_ci(&t->ci, a, t->na, b, t->nb, STATS_BOOT_RESAMPLES,
                                        STATS_BOOT_SEED, 0.95, err, sizeof err) == 0;
    if (t->tested) t->p = t->w.p > t->mw.p ? t->w.p : t->mw.p;
}

static PTest run_test(const Row *rows, int n, const Protocol *pr, int c, ProtoMetric m) {
    PTest t = {.compare = c, .metric = m, .p = NAN, .holm = NAN};
    double a[MAX_SEEDS], b[MAX_SEEDS];
    t.na = group_values(rows, n, group_of(rows, n, pr->compares[c].arm), m, a);
    t.nb = group_values(rows, n, group_of(rows, n, pr->compares[c].ref), m, b);
    summarise(&t, a, b);
    if (t.na < 1 || t.nb < 1) return t;
    if (m == PM_SINK_FORMED) sink_test(&t);
    else mean_test(&t, a, b);
    return t;
}

static int primary_tests(const Row *rows, int n, const Protocol *pr, PTest *t) {
    int k = 0;
    double p[MAX_TESTS] = {0}, adj[MAX_TESTS];
    for (int c = 0; c < pr->n_compares; c++)
        for (int j = 0; j < pr->n_metrics; j++) {
            t[k] = run_test(rows, n, pr, c, pr->metrics[j]);
            p[k] = t[k].tested ? t[k].p : NAN;
            k++;
        }
    adjust_family(adj, p, k, 0);
    for (int i = 0; i < k; i++) t[i].holm = adj[i];
    return k;
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
            int na = group_values(rows, n, group_of(rows, n, pr->compares[c].arm), m, a);
            int nb = group_values(rows, n, group_of(rows, n, pr->compares[c].ref), m, b);
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

static int significant(const PTest *t) { return t->tested && t->holm < ALPHA; }

static void put_arm_cell(FILE *f, const PTest *t, int a_side) {
    int n = a_side ? t->na : t->nb, k = a_side ? t->ka : t->kb;
    double m = a_side ? t->mean_a : t->mean_b, s = a_side ? t->sd_a : t->sd_b;
    if (n < 1) fputs(" no runs |", f);
    else if (t->metric == PM_SINK_FORMED) fprintf(f, " %d of %d |", k, n);
    else fprintf(f, " %.5g ± %.2g (%d) |", m, s, n);
}

static void ptable_row(FILE *f, const Protocol *pr, const PTest *t, int id) {
    const ProtoCompare *c = &pr->compares[t->compare];
    fprintf(f, "| P%d | %s | %s | %s |", id, c->arm, c->ref, proto_metric_name(t->metric));
    put_arm_cell(f, t, 1);
    put_arm_cell(f, t, 0);
    if (!t->tested) {
        fputs(" – | – | – | – | – | untested (too few seeds) |\n", f);
        return;
    }
    if (t->metric == PM_SINK_FORMED) {
        fprintf(f, " %+.2f | – | – | Fisher ", t->mean_a - t->mean_b);
    } else {
        fprintf(f, " %+.4g [%+.4g, %+.4g] | ", t->ci.diff, t->ci.lo, t->ci.hi);
        put_p(f, t->w.p);
        fputs(" | ", f);
        put_p(f, t->mw.p);
        fputs(" | ", f);
    }
    put_p(f, t->p);
    fputs(" | ", f);
    put_p(f, t->holm);
    fprintf(f, " | %s |\n",
            !significant(t)         ? "no difference shown"
            : t->mean_a < t->mean_b ? "**lower**"
                                    : "**higher**");
}

static void md_primary_table(FILE *f, const Protocol *pr, const PTest *t, int k) {
    fprintf(f, "\n### Primary tests\n\n"
               "| id | arm | reference | metric | arm | reference | difference (arm − "
               "reference) [95%% CI] | Welch p | Mann–Whitney p | test p | Holm p | result "
               "(Holm p < 0.05) |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < k; i++) ptable_row(f, pr, &t[i], i + 1);
}

/* Seeds with a sink per arm, with a Clopper-Pearson interval. */
static void md_sink_counts(FILE *f, const Row *rows, int n, const Protocol *pr) {
    fprintf(f,
            "\n### Sink formation per arm\n\nA seed *formed a sink* when its F-Attn exceeds "
            "%g× the share of uniform causal attention at the probe length "
            "([definition](#def-sink-formed)). Fisher's exact tests of these counts are the "
            "`sink_formed` rows above.\n\n| arm | seeds with a sink | share | 95%% "
            "Clopper–Pearson interval |\n|---|---|---|---|\n",
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
            int m = group_values(rows, n, group_of(rows, n, arm), PM_SINK_FORMED, v), k = 0;
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

static const PTest *find_test(const PTest *t, int k, int compare, ProtoMetric m, int *id) {
    for (int i = 0; i < k; i++)
        if (t[i].compare == compare && t[i].metric == m) {
            *id = i + 1;
            return &t[i];
        }
    return NULL;
}

static void claim_sentence(FILE *f, const Protocol *pr, const ProtoClaim *cl, const PTest *t,
                           int id) {
    const ProtoCompare *c = &pr->compares[cl->compare];
    const char *label = METRIC_LABEL[cl->metric];
    fprintf(f, "- The paper: `%s` has %s %s than `%s`. ", c->arm,
            cl->lower ? "a lower" : "a higher", label, c->ref);
    if (!t->tested) {
        fprintf(f, "**Untested** here: too few seeds (P%d).\n", id);
        return;
    }
    int lower = t->mean_a < t->mean_b;
    if (significant(t) && lower == cl->lower) fputs("**Confirmed** here: ", f);
    else if (significant(t))
        fputs("**Contradicted** here, we disagree with the paper: the difference goes the other "
              "way, ",
              f);
    else fputs("**Not shown** here (no significant difference): ", f);
    if (t->metric == PM_SINK_FORMED)
        fprintf(f, "%d of %d seeds against %d of %d", t->ka, t->na, t->kb, t->nb);
    else fprintf(f, "%.5g against %.5g", t->mean_a, t->mean_b);
    fputs(", Holm p ", f);
    put_p_rel(f, t->holm);
    fprintf(f, " (P%d).\n", id);
}

/* Significant primary results that no claim covers. */
static void other_results(FILE *f, const Protocol *pr, const PTest *t, int k) {
    int shown = 0;
    for (int i = 0; i < k; i++) {
        int claimed = 0;
        for (int j = 0; j < pr->n_claims; j++)
            claimed |= pr->claims[j].compare == t[i].compare && pr->claims[j].metric == t[i].metric;
        if (claimed || !significant(&t[i])) continue;
        const ProtoCompare *c = &pr->compares[t[i].compare];
        if (!shown++)
            fputs("\nOther differences the primary family shows (no claim of the paper "
                  "names them):\n\n",
                  f);
        fprintf(f, "- `%s` has %s %s than `%s`: ", c->arm,
                t[i].mean_a < t[i].mean_b ? "a lower" : "a higher", METRIC_LABEL[t[i].metric],
                c->ref);
        if (t[i].metric == PM_SINK_FORMED)
            fprintf(f, "%d of %d seeds against %d of %d", t[i].ka, t[i].na, t[i].kb, t[i].nb);
        else fprintf(f, "%.5g against %.5g", t[i].mean_a, t[i].mean_b);
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

static void md_headline(FILE *f, const Protocol *pr, const PTest *t, int k, const ETest *e,
                        int ke) {
    int seeds = 0;
    for (int i = 0; i < k; i++) {
        seeds = t[i].na > seeds ? t[i].na : seeds;
        seeds = t[i].nb > seeds ? t[i].nb : seeds;
    }
    fprintf(f,
            "\n## Headline (confirmatory)\n\nThe protocol of this directory (`%s`, declared "
            "before the runs) has %d primary test%s (%d comparison%s × %d metric%s), up to %d "
            "seeds an arm. Holm's correction runs across all %d; a difference is claimed only "
            "when the Holm-adjusted p is below %.2f, p being the larger of Welch's and the "
            "exact Mann–Whitney p (Fisher's exact test for seeds with a sink). Every other "
            "comparison in this report is exploratory.\n\n",
            PROTO_FILE, k, k == 1 ? "" : "s", pr->n_compares, pr->n_compares == 1 ? "" : "s",
            pr->n_metrics, pr->n_metrics == 1 ? "" : "s", seeds, k, ALPHA);
    for (int j = 0; j < pr->n_claims; j++) {
        int id = 0;
        const PTest *t1 = find_test(t, k, pr->claims[j].compare, pr->claims[j].metric, &id);
        if (t1) claim_sentence(f, pr, &pr->claims[j], t1, id);
    }
    other_results(f, pr, t, k);
    if (ke) {
        fputs("\nEquivalence, claimed only by TOST within the protocol's margin:\n\n", f);
        equivalence_sentences(f, pr, e, ke);
    }
}

void report_confirm(FILE *f, const Row *rows, int n, const Protocol *pr) {
    PTest t[MAX_TESTS];
    ETest e[MAX_TESTS];
    int k = primary_tests(rows, n, pr, t), ke = equivalence_tests(rows, n, pr, e);
    md_headline(f, pr, t, k, e, ke);
    md_primary_table(f, pr, t, k);
    md_sink_counts(f, rows, n, pr);
    md_equivalence_table(f, pr, e, ke);
}
