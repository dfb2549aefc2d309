/* sinks_field.c: key shares, distance profile, secondary, cosine and
 * residual-sink sections of `gatelab sinks` / `gatelab acts`
 * (sinks_field.h). */
#include "sinks_field.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli_json.h"
#include "sinkstats.h"

#define TOP_KEYS 5   /* keys the text shows per layer (--json has all) */
#define TEXT_DIST 8  /* distances the text shows per layer */
#define MAX_SINKS 64 /* secondary sinks the text lists per sequence */

/* The indices of the TOP_KEYS largest of v[n] into idx, descending
 * (the smaller index first on ties); returns how many (min(n, TOP_KEYS)). */
static int top_keys(const double *v, int n, int *idx) {
    int m = n < TOP_KEYS ? n : TOP_KEYS;
    for (int i = 0; i < m; i++) {
        int best = -1;
        for (int k = 0; k < n; k++) {
            int taken = 0;
            for (int j = 0; j < i; j++) taken |= idx[j] == k;
            if (!taken && (best < 0 || v[k] > v[best])) best = k;
        }
        idx[i] = best;
    }
    return m;
}

/* Per layer the TOP_KEYS largest head-mean alpha_k (v[M] is scratch). */
static void text_keys(const ProbeRecord *p, double *v) {
    printf("\nAttention share of every key: alpha_k = mean over queries t=k..P-1 of A[t,k], "
           "mean over heads (stored maps, P=%d); the %d largest per layer\n",
           p->M, TOP_KEYS);
    for (int l = 0; l < p->L; l++) {
        int idx[TOP_KEYS];
        if (ss_key_profile(p, l, v) != 0) return;
        int m = top_keys(v, p->M, idx);
        printf("  layer %-3d", l);
        for (int i = 0; i < m; i++) printf("  k=%d %.4f", idx[i], v[idx[i]]);
        printf("\n");
    }
}

/* Per layer w(d) and m(d) for the first TEXT_DIST distances (w, m [M]
 * are scratch). */
static void text_distance(const ProbeRecord *p, double *w, double *m) {
    int n = p->M < TEXT_DIST ? p->M : TEXT_DIST;
    printf("\nAttention by distance d = t - j: w(d) = mean over heads and queries t=d..P-1 "
           "of A[t,t-d]; m(d) = share of the map's mass at distance d (d < %d shown)\n",
           n);
    for (int l = 0; l < p->L; l++) {
        if (ss_distance(p, l, w, m) != 0) return;
        printf("  layer %-3d w", l);
        for (int d = 0; d < n; d++) printf(" %.4f", w[d]);
        printf("\n            m");
        for (int d = 0; d < n; d++) printf(" %.4f", m[d]);
        printf("\n");
    }
}

/* The definition, then every secondary sink of every sequence with its
 * token and cosine to position 0 at its formation layer; "absent" when
 * the run file has no key_alpha. */
static void text_secondary(const ProbeRecord *p) {
    printf("\nSecondary sinks (Wong et al. 2025): on one sequence, a key k >= 1 seen by at "
           "least %d queries (k <= P-%d) whose mean over heads of alpha_k exceeds eps=%g; "
           "formed at the first layer of a run of consecutive such layers, living its length\n",
           SECSINK_MIN_QUERIES, SECSINK_MIN_QUERIES, SECSINK_EPS);
    if (!p->key_alpha) {
        printf("  absent: this run file has no per-sequence key alphas (key_alpha)\n");
        return;
    }
    printf("  %5s %5s %6s %6s %8s %8s %10s\n", "seq", "pos", "token", "layer", "lifetime", "peak",
           "cos_to_0");
    int total = 0;
    for (int n = 0; n < p->N; n++) {
        SecSink s[MAX_SINKS];
        int k = ss_secondary(p, n, s, MAX_SINKS);
        for (int i = 0; i < k && i < MAX_SINKS; i++) {
            const float *cs = p->bos_cosine;
            double c = cs ? cs[((size_t)n * p->L + s[i].layer) * p->T + s[i].pos] : NAN;
            printf("  %5d %5d %6d %6d %8d %8.4f %10.4f\n", n, s[i].pos,
                   p->tokens[(size_t)n * p->T + s[i].pos], s[i].layer, s[i].lifetime, s[i].peak, c);
        }
        if (k > MAX_SINKS) printf("  (%d more on sequence %d)\n", k - MAX_SINKS, n);
        total += k > 0 ? k : 0;
    }
    printf("  %d secondary sink(s) over %d sequences\n", total, p->N);
}

/* Per layer the mean over t >= 1 of cos(h_t, h_0) and its largest t;
 * "absent" when the run file has no bos_cosine. */
static void text_cosine(const ProbeRecord *p) {
    printf("\nCosine of each position's block output to position 0's, cos(h_t, h_0), mean over "
           "sequences: per layer the mean over t >= 1 and the largest t >= 1\n");
    if (!p->bos_cosine) {
        printf("  absent: this run file has no bos_cosine\n");
        return;
    }
    for (int l = 0; l < p->L; l++) {
        double sum = 0.0, best = -INFINITY;
        int arg = -1;
        for (int t = 1; t < p->T; t++) {
            double c = ss_bos_cos(p, l, t);
            sum += c;
            if (c > best) best = c, arg = t;
        }
        printf("  layer %-3d mean %.4f  max %.4f at t=%d\n", l, p->T > 1 ? sum / (p->T - 1) : NAN,
               best, arg);
    }
}

void sf_sinks_text(const ProbeRecord *p) {
    double *v = malloc(2 * ((size_t)p->M + 1) * sizeof *v);
    if (!v) return;
    text_keys(p, v);
    text_distance(p, v, v + p->M + 1);
    free(v);
    text_secondary(p);
    text_cosine(p);
}

/* A JSON array of v[n]. */
static json_t *jarr(const double *v, int n) {
    json_t *a = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(a, cj_num(v[i]));
    return a;
}

/* alpha_k of every head of layer l: [H_l][M], its own heads
 * (runread_layer_heads; w[M] is scratch); NULL when out of memory. */
static json_t *json_heads(const ProbeRecord *p, int l, double *w) {
    json_t *a = json_array();
    for (int h = 0; h < runread_layer_heads(p, l); h++) {
        if (ss_key_head(p, l, h, w) != 0) {
            json_decref(a);
            return NULL;
        }
        json_array_append_new(a, jarr(w, p->M));
    }
    return a;
}

/* "alpha_k" (per layer, and per layer and head) and "distance" (per
 * layer), from the stored maps. */
static int json_profiles(json_t *o, const ProbeRecord *p, double *w, double *m) {
    json_t *ka = json_array(), *kh = json_array(), *dw = json_array(), *dm = json_array();
    int rc = 0;
    for (int l = 0; rc == 0 && l < p->L; l++) {
        json_t *heads = json_heads(p, l, w);
        rc = heads ? 0 : -1;
        if (rc == 0) json_array_append_new(kh, heads);
        if (rc == 0) rc = ss_key_profile(p, l, w);
        if (rc == 0) json_array_append_new(ka, jarr(w, p->M));
        if (rc == 0) rc = ss_distance(p, l, w, m);
        if (rc == 0) json_array_append_new(dw, jarr(w, p->M));
        if (rc == 0) json_array_append_new(dm, jarr(m, p->M));
    }
    json_t *k = json_object(), *d = json_object();
    cj_set(k, "queries", cj_str("t >= k")), cj_set(k, "len", json_integer(p->M));
    cj_set(k, "layers", ka), cj_set(k, "heads", kh);
    cj_set(d, "len", json_integer(p->M)), cj_set(d, "weight", dw), cj_set(d, "mass", dm);
    cj_set(o, "alpha_k", k), cj_set(o, "distance", d);
    return rc;
}

/* {eps, min_queries, sinks: [{seq, pos, token, layer, lifetime, peak}]},
 * or null when the run file has no key_alpha. */
static json_t *json_secondary(const ProbeRecord *p) {
    if (!p->key_alpha) return json_null();
    json_t *o = json_object(), *list = json_array();
    cj_set(o, "eps", cj_num(SECSINK_EPS));
    cj_set(o, "min_queries", json_integer(SECSINK_MIN_QUERIES));
    for (int n = 0; n < p->N; n++) {
        int k = ss_secondary(p, n, NULL, 0);
        SecSink *s = k > 0 ? malloc((size_t)k * sizeof *s) : NULL;
        if (k > 0 && s) ss_secondary(p, n, s, k);
        for (int i = 0; s && i < k; i++) {
            json_t *e = json_object();
            cj_set(e, "seq", json_integer(n)), cj_set(e, "pos", json_integer(s[i].pos));
            cj_set(e, "token", json_integer(p->tokens[(size_t)n * p->T + s[i].pos]));
            cj_set(e, "layer", json_integer(s[i].layer));
            cj_set(e, "lifetime", json_integer(s[i].lifetime));
            cj_set(e, "peak", cj_num(s[i].peak));
            json_array_append_new(list, e);
        }
        free(s);
    }
    cj_set(o, "sinks", list);
    return o;
}

/* [L][T] cos(h_t, h_0), the mean over sequences, or null when absent. */
static json_t *json_cosine(const ProbeRecord *p) {
    if (!p->bos_cosine) return json_null();
    json_t *a = json_array();
    for (int l = 0; l < p->L; l++) {
        json_t *row = json_array();
        for (int t = 0; t < p->T; t++) json_array_append_new(row, cj_num(ss_bos_cos(p, l, t)));
        json_array_append_new(a, row);
    }
    return a;
}

int sf_sinks_json(json_t *o, const ProbeRecord *p) {
    double *v = malloc(2 * ((size_t)p->M + 1) * sizeof *v);
    if (!v) return -1;
    int rc = json_profiles(o, p, v, v + p->M + 1);
    free(v);
    cj_set(o, "secondary_sinks", json_secondary(p));
    cj_set(o, "bos_cosine", json_cosine(p));
    return rc;
}

void sf_acts_text(const ProbeRecord *p) {
    printf("\nResidual sinks (Qiu et al. 2026): dimensions i with |h_t[i]| > %g x the median "
           "|h| of the sequence's block output on at least %g of the tokens\n",
           RESID_SINK_FACTOR, RESID_SINK_SHARE);
    if (!p->resid_share) {
        printf("  absent: this run file has no resid_share\n");
        return;
    }
    for (int l = 0; l < p->L; l++) {
        int n = ss_resid_dims(p, l, NULL, 0);
        printf("  layer %-3d %d dim(s)", l, n);
        for (int i = 0; i < p->D; i++)
            if (p->resid_share[(size_t)l * p->D + i] >= RESID_SINK_SHARE)
                printf("  %d (%.3f)", i, p->resid_share[(size_t)l * p->D + i]);
        printf("\n");
    }
}

void sf_acts_json(json_t *o, const ProbeRecord *p) {
    if (!p->resid_share) {
        cj_set(o, "residual_sinks", json_null());
        return;
    }
    json_t *r = json_object(), *layers = json_array();
    cj_set(r, "factor", cj_num(RESID_SINK_FACTOR)), cj_set(r, "share", cj_num(RESID_SINK_SHARE));
    for (int l = 0; l < p->L; l++) {
        json_t *e = json_object(), *dims = json_array(), *sh = json_array();
        for (int i = 0; i < p->D; i++) {
            double v = p->resid_share[(size_t)l * p->D + i];
            if (v < RESID_SINK_SHARE) continue;
            json_array_append_new(dims, json_integer(i));
            json_array_append_new(sh, cj_num(v));
        }
        cj_set(e, "dims", dims), cj_set(e, "shares", sh);
        cj_set(e, "resid_share", jarr(p->resid_share + (size_t)l * p->D, p->D));
        json_array_append_new(layers, e);
    }
    cj_set(r, "layers", layers);
    cj_set(o, "residual_sinks", r);
}
