/* head_probe_print.c: the head probes as text and --json
 * (head_probe_print.h); every number is metrics.h's. Each layer lists its
 * own heads (runread_layer_heads). */
#include "head_probe_print.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "metrics.h"
#include "runstats.h"

/* The per-position profile of head h of layer l in arr [L, H, T]. */
static const float *profile(const ProbeRecord *p, const float *arr, int l, int h) {
    return arr + ((size_t)l * p->H + h) * p->T;
}

/* v[0] / mean over t >= 1 of v[t] of that profile (NaN when undefined). */
static void head_first_rest(const ProbeRecord *p, const float *arr, int l, int h, double *first,
                            double *rest, double *ratio) {
    first_rest(profile(p, arr, l, h), p->T, first, rest);
    *ratio = *rest > 0.0 ? *first / *rest : NAN;
}

static const char *dormant_word(int d) { return d < 0 ? "n/a" : d ? "dormant" : "active"; }

static void print_kv(const ProbeRecord *p) {
    printf("\nKey and value norms (||k_t||, ||v_t|| of the KV head each query head "
           "reads, as attention reads them; mean over probe sequences): position 0 "
           "against the mean over t >= 1\n");
    if (!p->key_norm || !p->value_norm) {
        printf("  not stored in this run file\n");
        return;
    }
    printf("  %5s %5s %9s %9s %9s %9s %9s %9s\n", "layer", "head", "|k_0|", "|k_rest|", "ratio",
           "|v_0|", "|v_rest|", "ratio");
    for (int l = 0; l < p->L; l++)
        for (int h = 0; h < runread_layer_heads(p, l); h++) {
            double k0, kr, kq, v0, vr, vq;
            head_first_rest(p, p->key_norm, l, h, &k0, &kr, &kq);
            head_first_rest(p, p->value_norm, l, h, &v0, &vr, &vq);
            printf("  %5d %5d %9.4g %9.4g %9.4g %9.4g %9.4g %9.4g\n", l, h, k0, kr, kq, v0, vr, vq);
        }
}

static void print_dormant(const ProbeRecord *p) {
    printf("\nDormant heads (declared rules, docs/metrics.md): score = mean over "
           "positions of ||o_t|| over the layer's mean of the same; by norm: dormant "
           "when score < %g (Sandoval-Segura et al.'s output-norm criterion); by sink: "
           "when besides first-token share > %g\n",
           DORMANT_NORM_THR, DORMANT_SHARE_THR);
    if (!p->head_out_norm) {
        printf("  not stored in this run file\n");
        return;
    }
    int n_norm = 0, n_sink = 0;
    printf("  %5s %5s %9s %9s %8s %8s\n", "layer", "head", "score", "share", "by norm", "by sink");
    for (int l = 0; l < p->L; l++)
        for (int h = 0; h < runread_layer_heads(p, l); h++) {
            double score;
            int dn = rs_head_dormant(p, l, h, DORMANT_BY_NORM, &score);
            int ds = rs_head_dormant(p, l, h, DORMANT_BY_SINK, &score);
            n_norm += dn == 1, n_sink += ds == 1;
            printf("  %5d %5d %9.4f %9.4f %8s %8s\n", l, h, score, rs_head_share(p, l, h),
                   dormant_word(dn), dormant_word(ds));
        }
    printf("  dormant: %d of %d heads by norm, %d by sink\n", n_norm, runread_heads_in(p, 0, p->L),
           n_sink);
}

void hp_sinks_text(const ProbeRecord *p) {
    print_kv(p);
    print_dormant(p);
}

/* [first, rest] of head h's profile, or null without the array. */
static json_t *fr_json(const ProbeRecord *p, const float *arr, int l, int h) {
    if (!arr) return json_null();
    double f, r, q;
    head_first_rest(p, arr, l, h, &f, &r, &q);
    json_t *o = json_object();
    cj_set(o, "first", cj_num(f));
    cj_set(o, "rest", cj_num(r));
    cj_set(o, "ratio", cj_num(q));
    return o;
}

void hp_sinks_json(json_t *o, const ProbeRecord *p) {
    json_t *heads = json_array(), *rule = json_object();
    cj_set(rule, "norm_thr", cj_num(DORMANT_NORM_THR));
    cj_set(rule, "share_thr", cj_num(DORMANT_SHARE_THR));
    cj_set(o, "dormant_rule", rule);
    for (int l = 0; l < p->L; l++) {
        for (int h = 0; h < runread_layer_heads(p, l); h++) {
            json_t *e = json_object();
            double score;
            int d = rs_head_dormant(p, l, h, DORMANT_BY_SINK, &score);
            int dn = rs_head_dormant(p, l, h, DORMANT_BY_NORM, &score);
            cj_set(e, "layer", json_integer(l));
            cj_set(e, "head", json_integer(h));
            cj_set(e, "key_norm", fr_json(p, p->key_norm, l, h));
            cj_set(e, "value_norm", fr_json(p, p->value_norm, l, h));
            cj_set(e, "dormant_score", cj_num(score));
            cj_set(e, "dormant", d < 0 ? json_null() : json_boolean(d));
            cj_set(e, "dormant_norm", dn < 0 ? json_null() : json_boolean(dn));
            json_array_append_new(heads, e);
        }
    }
    cj_set(o, "head_probes", heads);
}

void hp_acts_text(const ProbeRecord *p) {
    printf("\nPer head: ||o_t|| = norm of the head's output as W_o reads it (mean "
           "over probe sequences) at position 0 and over t >= 1; erank = effective "
           "rank of W_V W_O (Roy & Vetterli 2007: exp of the entropy of the "
           "normalised singular values; at most head_dim)\n");
    if (!p->head_out_norm && !p->ov_erank) {
        printf("  not stored in this run file\n");
        return;
    }
    printf("  %5s %5s %9s %9s %9s\n", "layer", "head", "|o_0|", "|o_rest|", "erank");
    for (int l = 0; l < p->L; l++)
        for (int h = 0; h < runread_layer_heads(p, l); h++) {
            double f = NAN, r = NAN, q;
            if (p->head_out_norm) head_first_rest(p, p->head_out_norm, l, h, &f, &r, &q);
            double e = p->ov_erank ? p->ov_erank[(size_t)l * p->H + h] : NAN;
            printf("  %5d %5d %9.4g %9.4g %9.4g\n", l, h, f, r, e);
        }
    if (!p->head_out_norm) printf("  (head output norms not stored in this run file)\n");
    if (!p->ov_erank) printf("  (W_V W_O ranks not stored in this run file)\n");
}

void hp_acts_json(json_t *o, const ProbeRecord *p) {
    json_t *heads = json_array();
    for (int l = 0; l < p->L; l++)
        for (int h = 0; h < runread_layer_heads(p, l); h++) {
            json_t *e = json_object();
            cj_set(e, "layer", json_integer(l));
            cj_set(e, "head", json_integer(h));
            cj_set(e, "head_out_norm", fr_json(p, p->head_out_norm, l, h));
            cj_set(e, "ov_erank",
                   p->ov_erank ? cj_num(p->ov_erank[(size_t)l * p->H + h]) : json_null());
            json_array_append_new(heads, e);
        }
    cj_set(o, "heads", heads);
}

void hp_gates_text(const ProbeRecord *p) {
    printf("\nGate score at position 0 against the rest (mean over channels and "
           "probe sequences; positions t >= 1 for the rest):\n");
    if (!p->gate_first || !p->gate_rest) {
        printf("  not stored in this run file\n");
        return;
    }
    printf("  %-7s %9s %9s\n", "layer", "pos 0", "t >= 1");
    for (int l = 0; l < p->L; l++)
        printf("  %-7d %9.4f %9.4f\n", l, p->gate_first[l], p->gate_rest[l]);
}

/* arr[L] as a JSON array, or null without it. */
static json_t *layer_json(const ProbeRecord *p, const double *arr) {
    if (!arr) return json_null();
    json_t *a = json_array();
    for (int l = 0; l < p->L; l++) json_array_append_new(a, cj_num(arr[l]));
    return a;
}

void hp_gates_json(json_t *o, const ProbeRecord *p) {
    cj_set(o, "gate_first", layer_json(p, p->gate_first));
    cj_set(o, "gate_rest", layer_json(p, p->gate_rest));
}
