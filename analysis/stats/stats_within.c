/* stats_within.c: the within-group rank correlation of stats.h and its
 * permutation test (exact enumeration or Monte Carlo). Definitions are in
 * the header. GSL supplies the generator and the shuffle. */
#include "stats.h"
#include "stats_internal.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The observations in group order: the group-centred ranks of x and y,
 * group k spanning [off[k], off[k + 1]). */
typedef struct {
    int n, groups;
    double *ex, *ey;
    int *off; /* groups + 1 offsets */
} Grouped;

static void grouped_free(Grouped *g) {
    free(g->ex);
    free(g->ey);
    free(g->off);
}

static int check_groups(const int *group, int n, char *err, size_t errlen) {
    if (!group) return seterr(err, errlen, "group labels are NULL");
    for (int i = 0; i < n; i++)
        if (group[i] < 0 || group[i] >= n)
            return seterr(err, errlen, "group label %d is %d (not in [0, %d))", i, group[i], n);
    return 0;
}

/* Subtract from each group's values their mean. */
static void centre(double *v, const int *off, int groups) {
    for (int k = 0; k < groups; k++) {
        double s = 0.0;
        for (int i = off[k]; i < off[k + 1]; i++) s += v[i];
        s /= off[k + 1] - off[k];
        for (int i = off[k]; i < off[k + 1]; i++) v[i] -= s;
    }
}

/* Group offsets (off, groups) from the labels, and each observation's
 * place in group order (pos[i]); start[n + 1] is scratch. */
static void group_order(Grouped *g, int *pos, int *start, const int *group, int n) {
    memset(start, 0, (size_t)(n + 1) * sizeof *start);
    for (int i = 0; i < n; i++) start[group[i] + 1]++;
    g->groups = 0;
    for (int id = 0; id < n; id++) {
        if (start[id + 1] > 0) g->off[g->groups++] = start[id];
        start[id + 1] += start[id];
    }
    g->off[g->groups] = n;
    for (int i = 0; i < n; i++) pos[i] = start[group[i]]++;
}

/* Ranks of x and y over all n observations, placed in group order and
 * centred within their group. */
static int build(Grouped *g, const double *x, const double *y, const int *group, int n, char *err,
                 size_t errlen) {
    g->n = n;
    g->ex = malloc((size_t)n * sizeof *g->ex), g->ey = malloc((size_t)n * sizeof *g->ey);
    g->off = malloc((size_t)(n + 1) * sizeof *g->off);
    double *r = malloc(2 * (size_t)n * sizeof *r);
    int *pos = malloc(2 * ((size_t)n + 1) * sizeof *pos);
    int rc = !g->ex || !g->ey || !g->off || !r || !pos
                 ? seterr(err, errlen, "out of memory for %d observations", n)
                 : stats_midranks(r, x, n, err, errlen);
    if (rc == 0) rc = stats_midranks(r + n, y, n, err, errlen);
    if (rc == 0) {
        group_order(g, pos, pos + n, group, n);
        for (int i = 0; i < n; i++) g->ex[pos[i]] = r[i], g->ey[pos[i]] = r[n + i];
        centre(g->ex, g->off, g->groups);
        centre(g->ey, g->off, g->groups);
    }
    free(r);
    free(pos);
    return rc;
}

/* 1 when v varies within at least one group. */
static int varies_within(const double *v, const Grouped *g) {
    for (int k = 0; k < g->groups; k++)
        if (!stats_is_constant(v + g->off[k], g->off[k + 1] - g->off[k])) return 1;
    return 0;
}

static double dot(const double *a, const double *b, int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* prod over groups of size!, stopping once it passes `cap`. */
static double permutations(const Grouped *g, double cap) {
    double total = 1.0;
    for (int k = 0; k < g->groups && total <= cap; k++)
        for (int j = 2; j <= g->off[k + 1] - g->off[k]; j++) total *= j;
    return total;
}

/* ------------------------------------------------------------ exact */

/* Within the exact limit every group has at most 8 members (9! > limit). */
_Static_assert(STATS_WITHIN_EXACT_MAX < 362880, "a group of 9 would need c[9]");

/* The statistic's values over every within-group permutation: sums[total],
 * built group by group as all sums of an earlier value and one of the
 * group's k! values of dot(ex, ey). Groups of one add nothing. ey ends
 * permuted. */
static void enumerate(double *sums, double *part, const Grouped *g, double *ey) {
    long len = 1;
    sums[0] = 0.0;
    for (int k = 0; k < g->groups; k++) {
        int o = g->off[k], size = g->off[k + 1] - o, c[8] = {0}, nv = 0;
        if (size < 2) continue;
        for (int i, j;;) {
            part[nv++] = dot(g->ex + o, ey + o, size);
            if (!stats_heap_swap(c, size, &i, &j)) break;
            double t = ey[o + i];
            ey[o + i] = ey[o + j], ey[o + j] = t;
        }
        for (long a = len - 1; a >= 0; a--) /* in place: slot a * nv + v from slot a */
            for (int v = nv - 1; v >= 0; v--) sums[a * nv + v] = sums[a] + part[v];
        len *= nv;
    }
}

/* Exact p: the share of all `total` permutations with |S*| >= |S| - tol. */
static int exact_p(double *p, const Grouped *g, long total, double s, double tol, char *err,
                   size_t errlen) {
    double *sums = malloc((size_t)total * sizeof *sums),
           *part = malloc((size_t)total * sizeof *part);
    double *ey = malloc((size_t)g->n * sizeof *ey);
    if (!sums || !part || !ey) {
        free(sums), free(part), free(ey);
        return seterr(err, errlen, "out of memory enumerating %ld permutations", total);
    }
    memcpy(ey, g->ey, (size_t)g->n * sizeof *ey);
    enumerate(sums, part, g, ey);
    long hits = 0;
    for (long i = 0; i < total; i++) hits += fabs(sums[i]) >= fabs(s) - tol;
    *p = (double)hits / (double)total;
    free(sums), free(part), free(ey);
    return 0;
}

/* ----------------------------------------------------------- Monte Carlo */

/* Monte Carlo p: (1 + hits) / (1 + resamples) over `resamples` within-group
 * shuffles of ey drawn from mt19937 seeded with `seed`. */
static int monte_carlo_p(double *p, const Grouped *g, int resamples, unsigned long seed, double s,
                         double tol, char *err, size_t errlen) {
    double *ey = malloc((size_t)g->n * sizeof *ey);
    gsl_rng *r = ey ? gsl_rng_alloc(gsl_rng_mt19937) : NULL;
    if (!r) {
        free(ey);
        return seterr(err, errlen, "out of memory for %d permutations", resamples);
    }
    memcpy(ey, g->ey, (size_t)g->n * sizeof *ey);
    gsl_rng_set(r, seed);
    long hits = 0;
    for (int b = 0; b < resamples; b++) {
        for (int k = 0; k < g->groups; k++)
            gsl_ran_shuffle(r, ey + g->off[k], (size_t)(g->off[k + 1] - g->off[k]), sizeof *ey);
        hits += fabs(dot(g->ex, ey, g->n)) >= fabs(s) - tol;
    }
    *p = (1.0 + (double)hits) / (1.0 + resamples);
    gsl_rng_free(r);
    free(ey);
    return 0;
}

/* ------------------------------------------------------------------ entry */

/* r, the exact or Monte Carlo p and the group count, from g. */
static int within_test(StatsWithin *out, const Grouped *g, int resamples, unsigned long seed,
                       char *err, size_t errlen) {
    if (!varies_within(g->ex, g) || !varies_within(g->ey, g))
        return seterr(err, errlen,
                      "within-group correlation is undefined: %s is constant within "
                      "every group",
                      varies_within(g->ex, g) ? "y" : "x");
    double s = dot(g->ex, g->ey, g->n);
    double scale = sqrt(dot(g->ex, g->ex, g->n) * dot(g->ey, g->ey, g->n));
    double total = permutations(g, STATS_WITHIN_EXACT_MAX), tol = 1e-10 * scale;
    StatsWithin w = {.r = s / scale, .exact = total <= STATS_WITHIN_EXACT_MAX, .groups = g->groups};
    int rc = w.exact ? exact_p(&w.p, g, (long)total, s, tol, err, errlen)
                     : monte_carlo_p(&w.p, g, resamples, seed, s, tol, err, errlen);
    if (rc == 0) *out = w;
    return rc;
}

int stats_within_group_corr(StatsWithin *out, const double *x, const double *y, const int *group,
                            int n, int resamples, unsigned long seed, char *err, size_t errlen) {
    if (stats_check_sample(x, n, 2, "x", err, errlen) ||
        stats_check_sample(y, n, 2, "y", err, errlen) || check_groups(group, n, err, errlen))
        return -1;
    if (resamples < 1) return seterr(err, errlen, "permutation resamples %d < 1", resamples);
    Grouped g = {0};
    int rc = build(&g, x, y, group, n, err, errlen);
    if (rc == 0) rc = within_test(out, &g, resamples, seed, err, errlen);
    grouped_free(&g);
    return rc;
}
