/* confirm_tests.c: see confirm_tests.h. Definitions: docs/statistics.md
 * ("Confirmatory tests", "Untestable here"). */
#include "confirm_tests.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "metric_table.h"
#include "metrics.h"
#include "paper_tables.h"

int confirm_group(const Row *rows, int n, const char *run) {
    for (int a = 0; a < n && rows[a].ok; a = group_end(rows, n, a))
        if (!strcmp(rows[a].run, run)) return a;
    return -1;
}

/* Metric m of one run: good_regime is val_loss below the threshold. */
static double run_value(const Row *w, const Protocol *pr, ProtoMetric m) {
    if (m == PM_GOOD_REGIME) return isfinite(w->val_loss) ? (w->val_loss < pr->good_below) : NAN;
    const MetricCol *c = metric_find(proto_metric_name(m));
    return c ? metric_value(w, c) : NAN;
}

int confirm_values(const Row *rows, int n, int a, const Protocol *pr, ProtoMetric m, double *v,
                   long long *seeds) {
    int k = 0;
    for (int i = a; a >= 0 && i < n && k < CONFIRM_MAX_SEEDS && same_group(&rows[a], &rows[i]);
         i++) {
        double x = run_value(&rows[i], pr, m);
        if (!isfinite(x)) continue;
        if (seeds) seeds[k] = rows[i].seed;
        v[k++] = x;
    }
    return k;
}

/* The pairs by seed of a and b into pa, pb; *unpaired gets the seeds of
 * one side only. Returns the pairs. */
static int pair_by_seed(const double *a, const long long *sa, int na, const double *b,
                        const long long *sb, int nb, double *pa, double *pb, int *unpaired) {
    int k = 0;
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++)
            if (sa[i] == sb[j]) {
                pa[k] = a[i], pb[k] = b[j], k++;
                break;
            }
    *unpaired = na + nb - 2 * k;
    return k;
}

/* A two-sided p made one-sided in the claim's direction: exact for the t
 * tests (from the sign of the statistic), and for the exact rank tests
 * whose null distributions are symmetric, half the two-sided p when the
 * data go the claimed way, else 1 minus that half. */
static double one_sided(double p2, double stat, int lower) {
    int goes = lower ? stat < 0 : stat > 0;
    return goes ? p2 / 2 : 1 - p2 / 2;
}

/* ln C(n, k). */
static double log_choose(int n, int k) {
    return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0);
}

/* The declared test of t on the arm's values a and the reference's b
 * (pa, pb: the pairs). Sets p and the floor; 0 when a p came out. */
static int run_declared(PTest *t, const double *a, const double *b, const double *pa,
                        const double *pb, int lower) {
    char err[256];
    int k = t->one_sided ? 1 : 2;
    switch (t->test) {
    case PT_WELCH: {
        StatsWelch w;
        if (t->na < 2 || t->nb < 2 || stats_welch(&w, a, t->na, b, t->nb, err, sizeof err))
            return -1;
        t->p = t->one_sided ? one_sided(w.p, w.t, lower) : w.p;
        return 0;
    }
    case PT_MANN_WHITNEY: {
        StatsMannWhitney m;
        if (stats_mann_whitney(&m, a, t->na, b, t->nb, err, sizeof err)) return -1;
        t->p = t->one_sided ? one_sided(m.p, m.u - 0.5 * t->na * t->nb, lower) : m.p;
        t->floor_p = fmin(1.0, k * exp(-log_choose(t->na + t->nb, t->na)));
        return 0;
    }
    case PT_PAIRED_T: {
        StatsPaired s;
        if (t->pairs < 2 || stats_paired_t(&s, pa, pb, t->pairs, err, sizeof err)) return -1;
        t->p = t->one_sided ? one_sided(s.p, s.mean_diff, lower) : s.p;
        return 0;
    }
    case PT_WILCOXON: {
        StatsWilcoxon w;
        if (t->pairs < 1 || stats_wilcoxon(&w, pa, pb, t->pairs, err, sizeof err)) return -1;
        t->p = t->one_sided ? one_sided(w.p, w.w_plus - 0.25 * w.m * (w.m + 1), lower) : w.p;
        t->floor_p = fmin(1.0, k * pow(0.5, t->pairs));
        return 0;
    }
    case PT_FISHER:
        return t->one_sided
                   ? stats_fisher_one_sided(&t->p, t->ka, t->na, t->kb, t->nb, lower, err,
                                            sizeof err)
                   : stats_fisher_exact(&t->p, t->ka, t->na, t->kb, t->nb, err, sizeof err);
    case PT_NONE: break;
    }
    return -1;
}

/* Each side's summary: mean and sd, or for good_regime the counts. */
static void summarise(PTest *t, const double *a, const double *b) {
    if (t->metric == PM_GOOD_REGIME) {
        for (int i = 0; i < t->na; i++) t->ka += a[i] > 0.5;
        for (int i = 0; i < t->nb; i++) t->kb += b[i] > 0.5;
        t->mean_a = t->na ? (double)t->ka / t->na : NAN;
        t->mean_b = t->nb ? (double)t->kb / t->nb : NAN;
        return;
    }
    if (t->na) mean_std(a, t->na, &t->mean_a, &t->sd_a);
    if (t->nb) mean_std(b, t->nb, &t->mean_b, &t->sd_b);
    char err[256];
    if (t->na >= 1 && t->nb >= 1)
        stats_bootstrap_diff_ci(&t->ci, a, t->na, b, t->nb, STATS_BOOT_RESAMPLES, STATS_BOOT_SEED,
                                0.95, err, sizeof err);
}

/* The mean task floor of the runs of groups ga and gb (NaN when a run
 * lacks it: natural text, or a run file older than it). */
static double task_floor_of(const Row *rows, int n, int ga, int gb) {
    double sum = 0;
    int k = 0;
    for (int g = 0; g < 2; g++) {
        int a = g ? gb : ga;
        for (int i = a; a >= 0 && i < n && same_group(&rows[a], &rows[i]); i++) {
            if (!isfinite(rows[i].task_floor)) return NAN;
            sum += rows[i].task_floor, k++;
        }
    }
    return k ? sum / k : NAN;
}

/* A val_loss test whose arms are closer to the task's floor than the
 * paper's effect (its PPL gain in nats, Tables 1/3) cannot show it. */
static void check_headroom(PTest *t, const Row *rows, int n, int ga, int gb) {
    t->task_floor = task_floor_of(rows, n, ga, gb);
    if (t->metric != PM_VAL_LOSS || !isfinite(t->task_floor) || ga < 0 || gb < 0) return;
    const PaperRow *pa = paper_row(rows[ga].variant), *pb = paper_row(rows[gb].variant);
    if (!pa || !pb || !isfinite(pa->ppl) || !isfinite(pb->ppl)) return;
    double effect = fabs(log(pb->ppl) - log(pa->ppl));
    double room = fmax(t->mean_a, t->mean_b) - t->task_floor;
    if (!(room < effect)) return;
    t->untestable = 1;
    snprintf(t->why, sizeof t->why,
             "the task's floor is %.4f nats and the arms average %.4f and %.4f, so no arm can gain "
             "more than %.4f nats, less than the paper's effect (%.4f nats, PPL %.3f against %.3f)",
             t->task_floor, t->mean_a, t->mean_b, room, effect, pa->ppl, pb->ppl);
}

/* Fisher's test with no event, or only events, in both arms. */
static void check_events(PTest *t) {
    if (t->test != PT_FISHER || !(t->ka + t->kb == 0 || t->ka + t->kb == t->na + t->nb)) return;
    t->untestable = 1;
    snprintf(t->why, sizeof t->why,
             "%s is in the good regime (%d of %d against %d of %d), so Fisher's test cannot "
             "reject",
             t->ka + t->kb ? "every run of both arms" : "no run of either arm", t->ka, t->na, t->kb,
             t->nb);
}

static int claim_of(const Protocol *pr, int c, ProtoMetric m) {
    for (int j = 0; j < pr->n_claims; j++)
        if (pr->claims[j].compare == c && pr->claims[j].metric == m) return j;
    return -1;
}

static PTest run_test(const Row *rows, int n, const Protocol *pr, int c, ProtoMetric m) {
    PTest t = {.compare = c, .metric = m, .test = pr->test[m], .p = NAN, .holm = NAN};
    t.claim = claim_of(pr, c, m);
    t.one_sided = t.claim >= 0 && pr->claims[t.claim].one_sided;
    int lower = t.claim >= 0 ? pr->claims[t.claim].lower : 1;
    double a[CONFIRM_MAX_SEEDS], b[CONFIRM_MAX_SEEDS], pa[CONFIRM_MAX_SEEDS], pb[CONFIRM_MAX_SEEDS];
    long long sa[CONFIRM_MAX_SEEDS], sb[CONFIRM_MAX_SEEDS];
    int ga = confirm_group(rows, n, pr->compares[c].arm);
    int gb = confirm_group(rows, n, pr->compares[c].ref);
    t.na = confirm_values(rows, n, ga, pr, m, a, sa);
    t.nb = confirm_values(rows, n, gb, pr, m, b, sb);
    t.pairs = pair_by_seed(a, sa, t.na, b, sb, t.nb, pa, pb, &t.unpaired);
    summarise(&t, a, b);
    if (t.na < 1 || t.nb < 1) return t;
    t.tested = run_declared(&t, a, b, pa, pb, lower) == 0;
    check_events(&t);
    if (!t.untestable) check_headroom(&t, rows, n, ga, gb);
    return t;
}

/* A test whose smallest attainable p would still not pass Holm in this
 * family (the others' p as observed) cannot reject by construction. */
static void check_floors(PTest *t, int k, const double *p) {
    double q[CONFIRM_MAX_TESTS], adj[CONFIRM_MAX_TESTS];
    for (int i = 0; i < k; i++) {
        if (!t[i].tested || t[i].untestable || !(t[i].floor_p > 0)) continue;
        memcpy(q, p, (size_t)k * sizeof *q);
        q[i] = t[i].floor_p;
        adjust_family(adj, q, k, 0);
        if (!(adj[i] >= CONFIRM_ALPHA)) continue;
        t[i].untestable = 1;
        snprintf(t[i].why, sizeof t[i].why,
                 "the smallest p %s can reach with these seeds (%.3g) cannot pass Holm's "
                 "correction in this family (it would give %.3g, not below %.2f)",
                 proto_test_name(t[i].test), t[i].floor_p, adj[i], CONFIRM_ALPHA);
    }
}

int confirm_tests(const Row *rows, int n, const Protocol *pr, PTest *t) {
    int k = 0;
    double p[CONFIRM_MAX_TESTS] = {0}, adj[CONFIRM_MAX_TESTS];
    for (int c = 0; c < pr->n_compares; c++)
        for (int j = 0; j < pr->n_metrics && k < CONFIRM_MAX_TESTS; j++) {
            t[k] = run_test(rows, n, pr, c, pr->metrics[j]);
            p[k] = t[k].tested ? t[k].p : NAN;
            k++;
        }
    adjust_family(adj, p, k, 0);
    for (int i = 0; i < k; i++) t[i].holm = adj[i];
    check_floors(t, k, p);
    return k;
}
