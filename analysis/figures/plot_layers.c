/* plot_layers.c: the per-layer figures of the last probe of each run (one
 * bar per run group and layer, the mean over its seeds with min..max
 * bars): first-token share, M-Act and position 0's key and value norm
 * ratios, for `gatelab plot` and the report. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_layers.h"
#include "runfile_read.h"
#include "runstats.h"
#include "sinkstats.h"
#include "util.h"

/* Per-layer value of one probe into out[L]. */
typedef void (*LayerFn)(const ProbeRecord *p, double *out);

static void layer_first_share(const ProbeRecord *p, double *out) {
    for (int l = 0; l < p->L; l++) /* over the layer's own heads */
        out[l] = p->attention && p->H > 0 ? rs_share(p, l) : NAN;
}

static void layer_mact(const ProbeRecord *p, double *out) {
    for (int l = 0; l < p->L; l++) out[l] = p->h_max ? p->h_max[l] : NAN;
}

static void layer_key_norm(const ProbeRecord *p, double *out) {
    for (int l = 0; l < p->L; l++) out[l] = ss_lh_first_over_median(p, p->key_norm, l);
}

static void layer_value_norm(const ProbeRecord *p, double *out) {
    for (int l = 0; l < p->L; l++) out[l] = ss_lh_first_over_median(p, p->value_norm, l);
}

/* Per-group mean, min and max over member runs of per-run per-layer
 * values vals[i][L[i]] into [ng, maxL]; *spread = 1 when some group has
 * two or more runs with data (error bars worth drawing). */
static void group_layers(const RunSet *rs, double *const *vals, const int *L, int maxL, double *v,
                         double *lo, double *hi, int *spread) {
    *spread = 0;
    for (int g = 0; g < rs->ng; g++)
        for (int l = 0; l < maxL; l++) {
            double sum = 0, mn = INFINITY, mx = -INFINITY;
            int c = 0;
            for (int i = 0; i < rs->n; i++) {
                if (rs->grp[i] != g || !vals[i] || l >= L[i] || !isfinite(vals[i][l])) continue;
                double x = vals[i][l];
                sum += x, c++;
                if (x < mn) mn = x;
                if (x > mx) mx = x;
            }
            size_t k = (size_t)g * (size_t)maxL + (size_t)l;
            v[k] = c ? sum / c : NAN;
            lo[k] = c ? mn : NAN;
            hi[k] = c ? mx : NAN;
            if (c >= 2) *spread = 1;
        }
}

/* Draw the [ng, maxL] layer values: layers on x with a bar per group, or,
 * with many groups, groups on x (rotated names) with a bar per layer and
 * the groups without data left out. */
static int layers_draw(const RunSet *rs, const char *png, const char *title, const char *ylabel,
                       int maxL, const double *v, const double *lo, const double *hi, int nref,
                       const double *ref, const char *const *refp, char *err, size_t errlen) {
    int ng = rs->ng, rc = -1;
    const char **glab = calloc((size_t)ng, sizeof *glab);
    char(*lname)[32] = calloc((size_t)maxL, sizeof *lname);
    const char **llab = calloc((size_t)maxL, sizeof *llab);
    size_t cells = (size_t)ng * (size_t)maxL;
    double *t = malloc(3 * cells * sizeof(double) + 1);
    if (!glab || !lname || !llab || !t) {
        seterr(err, errlen, "plot: out of memory");
        goto done;
    }
    for (int g = 0; g < ng; g++) glab[g] = rs->glabel[g];
    if (ng <= MAX_SERIES) {
        BarSpec bs = {
            {title, "layer", ylabel, maxL, ng, glab, v, nref, ref, refp}, lo, hi, NULL, 0};
        rc = plot_bars_spec(png, &bs, err, errlen);
        goto done;
    }
    int nc = 0; /* transpose: t[l, c] for the groups with any data */
    for (int g = 0; g < ng; g++) {
        int have = 0;
        for (int l = 0; l < maxL; l++) have |= isfinite(v[(size_t)g * (size_t)maxL + (size_t)l]);
        if (!have) continue;
        glab[nc] = rs->glabel[g];
        for (int l = 0; l < maxL; l++) {
            size_t from = (size_t)g * (size_t)maxL + (size_t)l;
            size_t to = (size_t)l * (size_t)ng + (size_t)nc;
            t[to] = v[from];
            if (lo) t[cells + to] = lo[from], t[2 * cells + to] = hi[from];
        }
        nc++;
    }
    /* rows of t are ng apart; squeeze them to nc */
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < maxL; l++)
            memmove(t + (size_t)k * cells + (size_t)l * (size_t)nc,
                    t + (size_t)k * cells + (size_t)l * (size_t)ng, (size_t)nc * sizeof(double));
    for (int l = 0; l < maxL; l++) {
        snprintf(lname[l], sizeof lname[l], "layer %d", l);
        llab[l] = lname[l];
    }
    BarSpec bs = {{title, "run", ylabel, nc, maxL, llab, t, nref, ref, refp},
                  lo ? t + cells : NULL,
                  lo ? t + 2 * cells : NULL,
                  glab,
                  1};
    rc = plot_bars_spec(png, &bs, err, errlen);
done:
    free(glab), free(lname), free(llab), free(t);
    return rc;
}

/* ", k sink slot(s)" of probe p's uniform reference, with " on m/L" where
 * only m of its L layers have them (a checkpoint's sinks on some layers);
 * "" without slots. */
static void slots_label(RunReader *r, const ProbeRecord *p, char *out, size_t n) {
    int ns = 0, on = 0;
    for (int l = 0; l < p->L; l++) {
        const int k = rs_uniform_slots(r, p, l);
        if (k > 0) on++, ns = k;
    }
    out[0] = 0;
    if (!on) return;
    int w = snprintf(out, n, ", %d sink slot%s", ns, ns > 1 ? "s" : "");
    if (on < p->L && w > 0 && (size_t)w < n)
        snprintf(out + w, n - (size_t)w, " on %d/%d", on, p->L);
}

/* (b) and (d): per-layer values from each run's last probe, one bar per
 * (layer, group); a group's bar is the mean over its runs, with min..max
 * error bars when a group has several. With with_uniform, a dashed
 * uniform-attention reference per distinct share (rs_uniform_share: T and
 * the run's layers' windows). */
static int fig_layers(RunSet *rs, const char *png, LayerFn fn, int with_uniform, const char *title,
                      const char *ylabel, char *err, size_t errlen) {
    int n = rs->n, rc = -1, maxL = 0, nref = 0, any = 0;
    double **vals = calloc((size_t)n, sizeof *vals);
    int *L = calloc((size_t)n, sizeof *L);
    double ref[8];
    char reflab[8][96];
    const char *refp[8];
    double *v = NULL;
    if (!vals || !L) {
        seterr(err, errlen, "plot: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        ProbeRecord p;
        int have;
        if (plot_last_probe(rs->r[i], &p, &have, err, errlen)) goto done;
        if (!have) continue;
        vals[i] = malloc(((size_t)p.L + 1) * sizeof(double));
        if (!vals[i]) {
            runread_probe_free(&p);
            seterr(err, errlen, "plot: out of memory");
            goto done;
        }
        fn(&p, vals[i]);
        for (int l = 0; l < p.L; l++) any |= isfinite(vals[i][l]);
        L[i] = p.L;
        if (p.L > maxL) maxL = p.L;
        Config cfg; /* the run's own attention pattern: its window, if any */
        rs_arch_config(rs->r[i], &cfg);
        double u = rs_uniform_share(rs->r[i], &cfg, &p, -1);
        int seen = 0;
        for (int r = 0; r < nref; r++)
            if (ref[r] == u) seen = 1;
        if (with_uniform && !seen && nref < 8) {
            ref[nref] = u;
            char v[RS_N_ARCH][RS_ARCH_LEN], e[RS_N_ARCH][RS_ARCH_LEN];
            rs_arch_values(rs->r[i], v); /* a checkpoint's per-layer windows included */
            rs_arch_effective((const char(*)[RS_ARCH_LEN])v, p.T, e);
            char slot[48];
            slots_label(rs->r[i], &p, slot, sizeof slot);
            if (strcmp(e[RS_ARCH_WINDOW], "0"))
                snprintf(reflab[nref], sizeof reflab[nref], "uniform %.3f (T=%d, window %s%s%s)", u,
                         p.T, e[RS_ARCH_WINDOW],
                         strcmp(e[RS_ARCH_WINDOW_LAYERS], "alternate") ? "" : " alternate", slot);
            else snprintf(reflab[nref], sizeof reflab[nref], "uniform %.3f (T=%d%s)", u, p.T, slot);
            refp[nref] = reflab[nref];
            nref++;
        }
        runread_probe_free(&p);
    }
    if (maxL == 0 || !any) {
        rc = 1;
        seterr(err, errlen,
               maxL ? "%s: no run's probe stores the %s" : "%s: no run has a probe yet", png,
               ylabel);
        goto done;
    }
    size_t cells = (size_t)rs->ng * (size_t)maxL;
    v = malloc(3 * cells * sizeof(double));
    if (!v) {
        seterr(err, errlen, "plot: out of memory");
        goto done;
    }
    int spread;
    group_layers(rs, vals, L, maxL, v, v + cells, v + 2 * cells, &spread);
    char full[300];
    snprintf(full, sizeof full, "%s%s", title,
             spread    ? "; mean over seeds, error bars min..max"
             : rs->agg ? "; mean over seeds"
                       : "");
    rc = layers_draw(rs, png, full, ylabel, maxL, v, spread ? v + cells : NULL,
                     spread ? v + 2 * cells : NULL, nref, ref, refp, err, errlen);
done:
    for (int i = 0; vals && i < n; i++) free(vals[i]);
    free(vals), free(L), free(v);
    return rc;
}

/* ---- the figures (plot_layers.h) ---- */

int plot_first_share(RunSet *rs, const char *png, char *err, size_t errlen) {
    return fig_layers(rs, png, layer_first_share, 1,
                      "First-token attention share per layer (last probe)", "first-token share",
                      err, errlen);
}

int plot_mact(RunSet *rs, const char *png, char *err, size_t errlen) {
    return fig_layers(rs, png, layer_mact, 0, "Massive activations per layer (last probe)",
                      "max |h| of block output", err, errlen);
}

int plot_key_norm(RunSet *rs, const char *png, char *err, size_t errlen) {
    return fig_layers(rs, png, layer_key_norm, 0,
                      "Key norm at position 0 over the median key norm, per layer (last probe)",
                      "BOS key norm / median", err, errlen);
}

int plot_value_norm(RunSet *rs, const char *png, char *err, size_t errlen) {
    return fig_layers(rs, png, layer_value_norm, 0,
                      "Value norm at position 0 over the median value norm, per layer (last probe)",
                      "BOS value norm / median", err, errlen);
}
