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

/* See confirm_tests.h. */
int confirm_counts(const Row *w, const Protocol *pr) { return pr->secondary || row_paper_arch(w); }

/* See confirm_tests.h: each arm once, in the order of the claims. */
int confirm_other_arch(const Row *rows, int n, const Protocol *pr) {
    const char *seen[2 * PROTO_MAX];
    int ns = 0, other = 0;
    for (int j = 0; j < pr->n_claims; j++) {
        const ProtoClaim *cl = &pr->claims[j];
        if (cl->rel == PR_INTERACT) continue;
        for (int side = 0; side < (cl->rel == PR_SINK_FREE ? 1 : 2); side++) {
            const char *arm = cl->rel == PR_SINK_FREE ? cl->arm
                              : side                  ? pr->compares[cl->compare].ref
                                                      : pr->compares[cl->compare].arm;
            int dup = 0;
            for (int i = 0; i < ns; i++) dup |= !strcmp(seen[i], arm);
            if (dup || ns == 2 * PROTO_MAX) continue;
            seen[ns++] = arm;
            int a = confirm_group(rows, n, arm);
            for (int i = a; a >= 0 && i < n && same_group(&rows[a], &rows[i]); i++)
                other += !confirm_counts(&rows[i], pr);
        }
    }
    return other;
}

/* Metric m of one run: good_regime is val_loss below the threshold. */
static double run_value(const Row *w, const Protocol *pr, ProtoMetric m) {
    if (m == PROTO_GOOD_REGIME_M)
        return isfinite(w->val_loss) ? (w->val_loss < pr->good_below) : NAN;
    const MetricCol *c = metric_declared(m);
    return c ? metric_value(w, c) : NAN;
}

int confirm_values(const Row *rows, int n, int a, const Protocol *pr, ProtoMetric m, double *v,
                   long long *seeds) {
    int k = 0;
    for (int i = a; a >= 0 && i < n && k < CONFIRM_MAX_SEEDS && same_group(&rows[a], &rows[i]);
         i++) {
        double x = confirm_counts(&rows[i], pr) ? run_value(&rows[i], pr, m) : NAN;
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

int confirm_pairs(double *a, const long long *sa, int na, double *b, const long long *sb, int nb) {
    double pa[CONFIRM_MAX_SEEDS], pb[CONFIRM_MAX_SEEDS];
    int unpaired, k = pair_by_seed(a, sa, na, b, sb, nb, pa, pb, &unpaired);
    memcpy(a, pa, (size_t)k * sizeof *a);
    memcpy(b, pb, (size_t)k * sizeof *b);
    return k;
}

/* A two-sided p made one-sided in the claim's direction: half the
 * two-sided p when the data go the claimed way, else 1 minus that half.
 * Exact for the t tests, and for the exact rank tests (symmetric null
 * distributions) when the data go the claimed way; the other way it is
 * above 0.5 and below the exact one-sided p by the null probability of
 * the observed statistic (docs/statistics.md), which no verdict reads. */
static double one_sided(double p2, double stat, int lower) {
    int goes = lower ? stat < 0 : stat > 0;
    return goes ? p2 / 2 : 1 - p2 / 2;
}

/* ln C(n, k). */
static double log_choose(int n, int k) {
    return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0);
}

static int sign_of(double x) { return (x > 0) - (x < 0); }

/* The declared test of t on the arm's values a and the reference's b
 * (pa, pb: the pairs). Sets p, the floor, the direction of the test's
 * statistic and, for the paired tests, the estimate; 0 when a p came
 * out, else -1 with t->why the test's refusal (empty where too few values
 * stopped it before the test). */
static int run_declared(PTest *t, const double *a, const double *b, const double *pa,
                        const double *pb, int lower) {
    char *err = t->why; /* a test that refuses says why here */
    size_t errlen = sizeof t->why;
    int k = t->one_sided ? 1 : 2;
    switch (t->test) {
    case PT_WELCH: {
        StatsWelch w;
        if (t->na < 2 || t->nb < 2 || stats_welch(&w, a, t->na, b, t->nb, err, errlen)) return -1;
        t->dir = sign_of(w.t);
        t->p = t->one_sided ? one_sided(w.p, w.t, lower) : w.p;
        return 0;
    }
    case PT_MANN_WHITNEY: {
        StatsMannWhitney m;
        if (stats_mann_whitney(&m, a, t->na, b, t->nb, err, errlen)) return -1;
        t->dir = sign_of(m.u - 0.5 * t->na * t->nb);
        t->p = t->one_sided ? one_sided(m.p, m.u - 0.5 * t->na * t->nb, lower) : m.p;
        t->floor_p = fmin(1.0, k * exp(-log_choose(t->na + t->nb, t->na)));
        return 0;
    }
    case PT_PAIRED_T: {
        StatsPaired s;
        if (t->pairs < 2 || stats_paired_t(&s, pa, pb, t->pairs, err, errlen)) return -1;
        t->dir = sign_of(s.mean_diff);
        t->est = s.mean_diff, t->lo = s.lo, t->hi = s.hi;
        t->p = t->one_sided ? one_sided(s.p, s.mean_diff, lower) : s.p;
        return 0;
    }
    case PT_WILCOXON: {
        StatsWilcoxon w;
        StatsShift h;
        if (t->pairs < 1 || stats_wilcoxon(&w, pa, pb, t->pairs, err, errlen) ||
            stats_hodges_lehmann(&h, pa, pb, t->pairs, 0.95, err, errlen))
            return -1;
        double centre = w.w_plus - 0.25 * w.m * (w.m + 1);
        t->dir = sign_of(centre);
        t->est = h.est, t->lo = h.lo, t->hi = h.hi;
        t->p = t->one_sided ? one_sided(w.p, centre, lower) : w.p;
        t->floor_p = fmin(1.0, k * pow(0.5, w.m)); /* zero differences carry no sign */
        return 0;
    }
    case PT_FISHER:
        t->dir = sign_of(t->mean_a - t->mean_b);
        t->est = t->mean_a - t->mean_b, t->lo = t->hi = NAN;
        return t->one_sided
                   ? stats_fisher_one_sided(&t->p, t->ka, t->na, t->kb, t->nb, lower, err, errlen)
                   : stats_fisher_exact(&t->p, t->ka, t->na, t->kb, t->nb, err, errlen);
    case PT_NONE: break;
    }
    return -1;
}

/* Each side's summary: mean and sd (over the pairs for a paired test),
 * or for good_regime the counts; the bootstrap estimate of the unpaired
 * tests. */
static void summarise(PTest *t, const double *a, const double *b) {
    if (t->metric == PROTO_GOOD_REGIME_M) {
        for (int i = 0; i < t->na; i++) t->ka += a[i] > 0.5;
        for (int i = 0; i < t->nb; i++) t->kb += b[i] > 0.5;
        t->mean_a = t->na ? (double)t->ka / t->na : NAN;
        t->mean_b = t->nb ? (double)t->kb / t->nb : NAN;
        return;
    }
    if (t->na) mean_std(a, t->na, &t->mean_a, &t->sd_a);
    if (t->nb) mean_std(b, t->nb, &t->mean_b, &t->sd_b);
    char err[256];
    StatsCI ci;
    if (proto_test_paired(t->test) || t->na < 1 || t->nb < 1) return;
    if (stats_bootstrap_diff_ci(&ci, a, t->na, b, t->nb, STATS_BOOT_RESAMPLES, STATS_BOOT_SEED,
                                0.95, err, sizeof err) == 0)
        t->est = ci.diff, t->lo = ci.lo, t->hi = ci.hi;
}

/* The mean task floor of the runs of groups ga and gb that count for pr
 * (confirm_counts; NaN when one lacks it: natural text, or a run file
 * older than it). */
static double task_floor_of(const Row *rows, int n, const Protocol *pr, int ga, int gb) {
    double sum = 0;
    int k = 0;
    for (int g = 0; g < 2; g++) {
        int a = g ? gb : ga;
        for (int i = a; a >= 0 && i < n && same_group(&rows[a], &rows[i]); i++) {
            if (!confirm_counts(&rows[i], pr)) continue;
            if (!isfinite(rows[i].task_floor)) return NAN;
            sum += rows[i].task_floor, k++;
        }
    }
    return k ? sum / k : NAN;
}

/* A val_loss test whose arms are closer to the task's floor than the
 * paper's effect (its PPL gain in nats, Tables 1/3) cannot show it. */
static void check_headroom(PTest *t, const Row *rows, int n, const Protocol *pr, int ga, int gb) {
    t->task_floor = task_floor_of(rows, n, pr, ga, gb);
    if (t->metric != proto_metric_of(PROTO_LOSS_METRIC) || !isfinite(t->task_floor) || ga < 0 ||
        gb < 0)
        return;
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

/* A sink or M-Act claim where the baseline (the arm's matching baseline
 * group, report_rows.c `base`, else the reference when it is a baseline)
 * does not show the phenomenon: fewer than half of its seeds that count
 * for pr (confirm_counts) formed a sink
 * (f_attn), or none is massive by Sun et al.'s criterion (m_act). */
static void check_construct(PTest *t, const Row *rows, int n, const Protocol *pr, int ga, int gb) {
    int sink = t->metric == proto_metric_of(PROTO_SINK_METRIC);
    if ((!sink && t->metric != proto_metric_of(PROTO_MASSIVE_METRIC)) || ga < 0) return;
    int b = rows[ga].base >= 0                                 ? rows[ga].base
            : gb >= 0 && !strcmp(rows[gb].variant, "baseline") ? gb
                                                               : -1;
    if (b < 0) return;
    int k = 0, m = 0;
    for (int i = b; i < n && same_group(&rows[b], &rows[i]); i++) {
        if (!confirm_counts(&rows[i], pr)) continue;
        int v = sink ? rows[i].sink_formed : rows[i].massive_sun;
        if (v >= 0) m++, k += v == 1;
    }
    if (!m) return;
    if (sink ? 2 * k >= m : k > 0) return;
    t->untestable = 1;
    if (sink)
        snprintf(t->why, sizeof t->why,
                 "the baseline `%.96s` shows no sink to remove: %d of its %d seeds formed one "
                 "(F-Attn above %g× the uniform share), fewer than half",
                 rows[b].run, k, m, SINK_FORMED_FACTOR);
    else
        snprintf(
            t->why, sizeof t->why,
            "the baseline `%.96s` has no massive activation to remove: none of its %d seeds is "
            "massive by Sun et al.'s criterion (above %g and %g× the median)",
            rows[b].run, m, MACT_ABS_MIN, MACT_MEDIAN_RATIO);
}

/* F-Attn over the run's own uniform share, run by run of group a's runs
 * that count for pr (confirm_counts). */
static int sink_ratios(const Row *rows, int n, const Protocol *pr, int a, double *v,
                       long long *seeds) {
    int k = 0;
    for (int i = a; a >= 0 && i < n && k < CONFIRM_MAX_SEEDS && same_group(&rows[a], &rows[i]);
         i++) {
        double x = confirm_counts(&rows[i], pr) ? rows[i].f_attn / rows[i].f_attn_uniform : NAN;
        if (!isfinite(x)) continue;
        seeds[k] = rows[i].seed;
        v[k++] = x;
    }
    return k;
}

/* The index of seed in s[0..m), or -1. */
static int find_seed(const long long *s, int m, long long seed) {
    for (int j = 0; j < m; j++)
        if (s[j] == seed) return j;
    return -1;
}

/* Interaction x per seed over the seeds all four of its arms have: d =
 * (arm2 - ref2) - (arm1 - ref1) into d; *missing gets the seeds some arm
 * has and another lacks. Returns how many. */
static int interaction_diffs(const Row *rows, int n, const Protocol *pr, const ProtoInteraction *x,
                             double *d, int *missing) {
    const char *arm[4] = {x->arm2, x->ref2, x->arm1, x->ref1};
    double v[4][CONFIRM_MAX_SEEDS];
    long long s[4][CONFIRM_MAX_SEEDS];
    int m[4], k = 0;
    for (int g = 0; g < 4; g++)
        m[g] = confirm_values(rows, n, confirm_group(rows, n, arm[g]), pr, x->metric, v[g], s[g]);
    *missing = 0;
    for (int g = 0; g < 4; g++)
        for (int i = 0; i < m[g]; i++) {
            int at[4], all = 1, seen = 0;
            for (int h = 0; h < 4; h++) {
                at[h] = find_seed(s[h], m[h], s[g][i]);
                all &= at[h] >= 0;
                seen |= h < g && at[h] >= 0;
            }
            if (seen) continue; /* counted at the first arm that has it */
            if (!all) (*missing)++;
            else d[k++] = (v[0][at[0]] - v[1][at[1]]) - (v[2][at[2]] - v[3][at[3]]);
        }
    return k;
}

/* An interaction claim: one sample, d against the bound, by the metric's
 * declared paired test; the estimate and its interval on d's scale. */
static void run_interaction(PTest *t, const Row *rows, int n, const Protocol *pr,
                            const ProtoClaim *cl) {
    const ProtoInteraction *x = &pr->inter[cl->inter];
    double d[CONFIRM_MAX_SEEDS], b[CONFIRM_MAX_SEEDS];
    t->na = t->nb = t->pairs = interaction_diffs(rows, n, pr, x, d, &t->unpaired);
    for (int i = 0; i < t->na; i++) b[i] = x->bound;
    summarise(t, d, b);
    if (t->na < 1) return;
    t->tested = run_declared(t, d, b, d, b, x->side < 0) == 0;
    t->est += x->bound, t->lo += x->bound, t->hi += x->bound;
}

static PTest run_test(const Row *rows, int n, const Protocol *pr, int j) {
    const ProtoClaim *cl = &pr->claims[j];
    PTest t = {.compare = cl->compare,
               .va = -1, /* counted below; an interaction does not count them */
               .vb = -1,
               .metric = cl->metric,
               .test = pr->test[cl->metric],
               .claim = j,
               .inter = cl->rel == PR_INTERACT ? cl->inter : -1,
               .one_sided = cl->one_sided,
               .p = NAN,
               .holm = NAN,
               .est = NAN,
               .lo = NAN,
               .hi = NAN};
    if (cl->rel == PR_INTERACT) {
        run_interaction(&t, rows, n, pr, cl);
        return t;
    }
    double a[CONFIRM_MAX_SEEDS], b[CONFIRM_MAX_SEEDS], pa[CONFIRM_MAX_SEEDS], pb[CONFIRM_MAX_SEEDS];
    long long sa[CONFIRM_MAX_SEEDS], sb[CONFIRM_MAX_SEEDS];
    int free_arm = cl->rel == PR_SINK_FREE;
    int ga = confirm_group(rows, n, free_arm ? cl->arm : pr->compares[cl->compare].arm);
    int gb = free_arm ? -1 : confirm_group(rows, n, pr->compares[cl->compare].ref);
    if (free_arm) { /* one sample against the constant 1 + margin */
        t.na = t.nb = sink_ratios(rows, n, pr, ga, a, sa);
        for (int i = 0; i < t.na; i++) b[i] = 1 + pr->sink_margin, sb[i] = sa[i];
    } else {
        t.na = confirm_values(rows, n, ga, pr, cl->metric, a, sa);
        t.nb = confirm_values(rows, n, gb, pr, cl->metric, b, sb);
    }
    t.va = t.na, t.vb = t.nb;
    t.pairs = pair_by_seed(a, sa, t.na, b, sb, t.nb, pa, pb, &t.unpaired);
    int paired = proto_test_paired(t.test);
    if (paired) t.na = t.nb = t.pairs;
    summarise(&t, paired ? pa : a, paired ? pb : b);
    if (t.na < 1 || t.nb < 1) return t;
    t.tested = run_declared(&t, paired ? pa : a, paired ? pb : b, pa, pb, cl->lower) == 0;
    if (!t.tested) return t; /* why: the test's refusal, if any */
    check_events(&t);
    if (!t.untestable) check_construct(&t, rows, n, pr, ga, gb);
    if (!t.untestable && !free_arm) check_headroom(&t, rows, n, pr, ga, gb);
    return t;
}

/* Tarone's rule: the smallest K with at most K tests whose smallest
 * attainable p is at or below alpha / K; the tests above it cannot reject
 * at any bound the family gives, so they are left out of it. */
static void tarone(PTest *t, int k) {
    for (int K = 1; K <= k; K++) {
        int m = 0;
        for (int i = 0; i < k; i++) m += t[i].tested && t[i].floor_p <= CONFIRM_ALPHA / K;
        if (m > K) continue;
        for (int i = 0; i < k; i++) {
            if (!t[i].tested || t[i].floor_p <= CONFIRM_ALPHA / K) continue;
            t[i].left_out = 1;
            if (t[i].untestable) continue; /* keep the reason it was already untestable */
            snprintf(t[i].why, sizeof t[i].why,
                     "left out of the family (Tarone's rule): the smallest p %s can reach with "
                     "%d seed%s, %.3g, is above %.2f / %d = %.3g, the bound where the rule "
                     "settles (at most %d of the family's tests can reach it)",
                     proto_test_name(t[i].test), t[i].pairs ? t[i].pairs : t[i].na + t[i].nb,
                     (t[i].pairs ? t[i].pairs : 2) == 1 ? "" : "s", t[i].floor_p, CONFIRM_ALPHA, K,
                     CONFIRM_ALPHA / K, K);
        }
        return;
    }
}

int confirm_tests(const Row *rows, int n, const Protocol *pr, PTest *t) {
    int k = 0;
    double p[CONFIRM_MAX_TESTS] = {0}, adj[CONFIRM_MAX_TESTS];
    for (int j = 0; j < pr->n_claims && k < CONFIRM_MAX_TESTS; j++)
        if (pr->claims[j].rel != PR_EQUIV) t[k++] = run_test(rows, n, pr, j);
    tarone(t, k);
    for (int i = 0; i < k; i++) p[i] = t[i].tested && !t[i].left_out ? t[i].p : NAN;
    adjust_family(adj, p, k, 0);
    for (int i = 0; i < k; i++) t[i].holm = adj[i];
    return k;
}
