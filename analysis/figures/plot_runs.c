/* plot_runs.c: the run set of plot.c's figures (plot_runs.h) and the
 * series rules the report shares (plot.h): key runs, mean over seeds. */
#include "plot_runs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h" /* variant_key */
#include "runname.h"
#include "util.h"

void plot_runs_close(RunSet *rs) {
    for (int i = 0; i < rs->n; i++)
        if (rs->r[i]) runread_close(rs->r[i]);
    free(rs->r);
    free(rs->label);
    free(rs->grp);
    free(rs->glabel);
    free(rs->gkey);
    memset(rs, 0, sizeof *rs);
}

/* The name a run is known by in figures: its variant, or its run name
 * (runname.h) when another run of the same variant has a different run
 * name (baseline on bigram and baseline-brown on Brown). */
void plot_runs_base(const RunSet *rs, int i, char *out, size_t n) {
    const RunMeta *m = runread_meta(rs->r[i]);
    char ri[300], rj[300];
    run_name(ri, sizeof ri, m->path);
    for (int j = 0; j < rs->n; j++) {
        const RunMeta *mj = runread_meta(rs->r[j]);
        if (j == i || strcmp(mj->variant, m->variant)) continue;
        run_name(rj, sizeof rj, mj->path);
        if (strcmp(ri, rj)) {
            snprintf(out, n, "%s", ri);
            return;
        }
    }
    snprintf(out, n, "%s", m->variant[0] ? m->variant : ri);
}

/* Label each run by plot_runs_base; add the seed when that repeats. */
static void runs_label(RunSet *rs) {
    char bi[300], bj[300];
    for (int i = 0; i < rs->n; i++) {
        const RunMeta *m = runread_meta(rs->r[i]);
        plot_runs_base(rs, i, bi, sizeof bi);
        const char *v = bi;
        int dup = 0;
        for (int j = 0; j < rs->n && !dup; j++) {
            if (j == i) continue;
            plot_runs_base(rs, j, bj, sizeof bj);
            dup = !strcmp(bi, bj);
        }
        if (dup) snprintf(rs->label[i], sizeof rs->label[i], "%.250s seed %lld", v, m->seed);
        else snprintf(rs->label[i], sizeof rs->label[i], "%.290s", v);
    }
}

/* The paper's headline comparison (the catalog's key runs, config.h):
 * what a line figure keeps when there are too many runs to tell apart. */
int plot_key_run(const char *variant, const char *status) {
    if (variant_key(variant) != VARIANT_KEY_NONE) return 1;
    return !strcmp(status, RS_STATUS_DIVERGED); /* a failure is worth seeing */
}

int plot_key_series(int ng, unsigned char *key) {
    if (ng <= MAX_SERIES) return 0;
    int nkey = 0;
    for (int g = 0; g < ng; g++) nkey += key[g];
    for (int g = 0; !nkey && g < MAX_SERIES; g++)
        key[g] = 1; /* no key variant at all: the first few */
    return 1;
}

/* Group runs: by run name (agg) or one group per file. */
static void runs_group(RunSet *rs, int agg) {
    rs->agg = agg;
    rs->ng = 0;
    for (int i = 0; i < rs->n; i++) {
        const RunMeta *m = runread_meta(rs->r[i]);
        char name[300];
        if (agg) run_name(name, sizeof name, m->path);
        else snprintf(name, sizeof name, "%s", rs->label[i]);
        int g = -1;
        for (int j = 0; agg && j < rs->ng && g < 0; j++)
            if (!strcmp(rs->glabel[j], name)) g = j;
        if (g < 0) {
            g = rs->ng++;
            memcpy(rs->glabel[g], name, sizeof name);
            rs->gkey[g] = 0;
        }
        rs->grp[i] = g;
        if (plot_key_run(m->variant, m->status)) rs->gkey[g] = 1;
    }
    rs->subset = agg && plot_key_series(rs->ng, rs->gkey);
}

/* Whether group g is drawn in a line figure. */
int plot_group_shown(const RunSet *rs, int g) { return !rs->subset || rs->gkey[g]; }

/* Runs of group g into idx; returns how many. */
int plot_group_members(const RunSet *rs, int g, int *idx) {
    int m = 0;
    for (int i = 0; i < rs->n; i++)
        if (rs->grp[i] == g) idx[m++] = i;
    return m;
}

int plot_runs_open(RunSet *rs, char **paths, int n, int agg, char *err, size_t errlen) {
    memset(rs, 0, sizeof *rs);
    if (n < 1) return seterr(err, errlen, "plot: no run files given");
    rs->r = calloc((size_t)n, sizeof *rs->r);
    rs->label = calloc((size_t)n, sizeof *rs->label);
    rs->grp = calloc((size_t)n, sizeof *rs->grp);
    rs->glabel = calloc((size_t)n, sizeof *rs->glabel);
    rs->gkey = calloc((size_t)n, sizeof *rs->gkey);
    if (!rs->r || !rs->label || !rs->grp || !rs->glabel || !rs->gkey) {
        plot_runs_close(rs);
        return seterr(err, errlen, "plot: out of memory");
    }
    for (int i = 0; i < n; i++) {
        rs->r[i] = runread_open(paths[i], err, errlen);
        rs->n = i + 1;
        if (!rs->r[i]) {
            plot_runs_close(rs);
            return -1;
        }
    }
    runs_label(rs);
    runs_group(rs, agg);
    return 0;
}

/* The last probe of a run; *have = 0 (and 0 returned) when it has none. */
int plot_last_probe(RunReader *r, ProbeRecord *p, int *have, char *err, size_t errlen) {
    long long *steps = NULL;
    int ns = 0;
    *have = 0;
    memset(p, 0, sizeof *p);
    if (runread_probe_steps(r, &steps, &ns, err, errlen)) return -1;
    free(steps);
    if (ns == 0) return 0;
    if (runread_probe(r, -1, p, err, errlen)) return -1;
    *have = 1;
    return 0;
}

/* Mean over m step series: x takes the steps of the longest; at each index
 * the series logging that same step are averaged (seeds of one run log the
 * same steps, and a shorter one is still running). Non-finite values are
 * left out; NaN where none is left. Returns the length. */
size_t plot_mean_aligned(const long long *const *st, const double *const *v, const size_t *len,
                         int m, double *x, double *y) {
    int lg = 0;
    for (int j = 1; j < m; j++)
        if (len[j] > len[lg]) lg = j;
    for (size_t k = 0; k < len[lg]; k++) {
        double sum = 0;
        int c = 0;
        for (int j = 0; j < m; j++)
            if (k < len[j] && st[j][k] == st[lg][k] && isfinite(v[j][k])) sum += v[j][k], c++;
        x[k] = (double)st[lg][k];
        y[k] = c ? sum / c : NAN;
    }
    return len[lg];
}
