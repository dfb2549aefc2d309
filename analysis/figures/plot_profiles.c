/* plot_profiles.c: the key-share and distance figures (plot_profiles.h). */
#include "plot_profiles.h"

#include <stdlib.h>

#include "sinkstats.h"
#include "util.h"

/* One run's profiles: x = 0..M-1 and the chosen curves of its last probe. */
typedef struct {
    double *x, *a, *b; /* [M]: positions, first and second curve */
    size_t n;          /* M, or 0 when the run has no probe */
} Curves;

static void curves_free(Curves *c, int n) {
    for (int i = 0; c && i < n; i++) free(c[i].x), free(c[i].a), free(c[i].b);
    free(c);
}

/* Run i's last probe into c: alpha_k (dist = 0) or w(d), m(d) (dist = 1),
 * the mean over layers. 0 (c->n = 0 without a probe), -1 with err. */
static int run_curves(RunSet *rs, int i, int dist, Curves *c, char *err, size_t errlen) {
    ProbeRecord p;
    int have = 0;
    if (plot_last_probe(rs->r[i], &p, &have, err, errlen)) return -1;
    if (!have) return 0;
    const size_t M = (size_t)p.M;
    c->x = malloc((M + 1) * sizeof(double)), c->a = malloc((M + 1) * sizeof(double));
    c->b = malloc((M + 1) * sizeof(double));
    int rc = c->x && c->a && c->b ? 0 : -1;
    if (rc == 0) rc = dist ? ss_distance(&p, -1, c->a, c->b) : ss_key_profile(&p, -1, c->a);
    for (size_t k = 0; rc == 0 && k < M; k++) c->x[k] = (double)k;
    if (rc == 0) c->n = M;
    runread_probe_free(&p);
    return rc == 0 ? 0 : seterr(err, errlen, "plot: out of memory");
}

/* Read every run's curves and draw them, one line per run (two stacked
 * panels for the distance figure). */
static int draw(RunSet *rs, int dist, const char *png, const PlotAxes *ax, char *err,
                size_t errlen) {
    const int n = rs->n, per = dist ? 2 : 1;
    Curves *c = calloc((size_t)n + 1, sizeof *c);
    PlotSeries *s = calloc((size_t)n * per + 1, sizeof *s);
    int rc = c && s ? 0 : seterr(err, errlen, "plot: out of memory");
    size_t any = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        rc = run_curves(rs, i, dist, &c[i], err, errlen);
        any += c[i].n;
        s[per * i] = (PlotSeries){rs->label[i], c[i].x, c[i].a, c[i].n, PLOT_LINES, i + 1, 0};
        if (dist)
            s[per * i + 1] =
                (PlotSeries){rs->label[i], c[i].x, c[i].b, c[i].n, PLOT_LINES, i + 1, 1};
    }
    if (rc == 0 && !any) rc = 1, seterr(err, errlen, "%s: no run has a probe yet", png);
    if (rc == 0) rc = plot_lines(png, ax, s, n * per, err, errlen);
    curves_free(c, n);
    free(s);
    return rc;
}

int plot_key_share(RunSet *rs, const char *png, char *err, size_t errlen) {
    PlotAxes ax = {"Attention share of every key position (last probe, mean over layers and heads)",
                   "key position k",
                   {"alpha_k = mean over queries t >= k of A[t,k]", NULL},
                   1,
                   NULL,
                   0,
                   1};
    return draw(rs, 0, png, &ax, err, errlen);
}

int plot_distance(RunSet *rs, const char *png, char *err, size_t errlen) {
    PlotAxes ax = {"Attention by query-key distance (last probe, mean over layers and heads)",
                   "distance d = t - j",
                   {"w(d): mean weight at distance d", "m(d): share of mass at distance d"},
                   2,
                   NULL,
                   0,
                   1};
    return draw(rs, 1, png, &ax, err, errlen);
}
