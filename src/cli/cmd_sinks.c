/* cmd_sinks.c: `gatelab sinks RUN.h5`: first-token share (F-Attn) and sink
 * rate of one probe, each number printed with its definition and settings
 * (probe length, eps, proxy), per layer and per head; then the measures
 * beyond position 0 (sinks_field.c). */
#include "cliopts.h"
#include "cmdutil.h"
#include "config_derive.h"
#include "commands.h"
#include "head_probe_print.h"
#include "metrics.h"
#include "runstats.h"
#include "sinks_field.h"

#include <stdio.h>
#include <stdlib.h>

static const double EPS[3] = {SINK_EPS_LOW, SINK_EPS_MID, SINK_EPS};

const OptTable sinks_options = {
    .cmd = "sinks",
    .operands = "RUN.h5 [options]",
    .about = "First-token share and sink rate of one probe (default: the last).\n",
    .rows = cu_probe_rows,
    OPT_DEFAULTS(cu_probe_defaults),
};

/* 1 when some layer of probe p sees fewer than len keys (rs_layer_window
 * of run r). */
static int windowed(RunReader *r, const Config *cfg, const ProbeRecord *p, int len) {
    for (int l = 0; l < p->L; l++) {
        const int W = rs_layer_window(r, cfg, l);
        if (W > 0 && W < len) return 1;
    }
    return 0;
}

/* 1 when the layers of probe p count different slots (rs_uniform_slots). */
static int slots_vary(RunReader *r, const ProbeRecord *p) {
    for (int l = 1; l < p->L; l++)
        if (rs_uniform_slots(r, p, l) != rs_uniform_slots(r, p, 0)) return 1;
    return 0;
}

/* Layer l's F-Attn line, with its uniform reference when its window or,
 * where the layers' slots differ (vary), its slots make it its own. */
static void print_layer_share(RunReader *r, const ProbeRecord *p, const Config *cfg, int l,
                              int vary) {
    const int W = rs_layer_window(r, cfg, l), s = rs_uniform_slots(r, p, l);
    char what[64] = "";
    const int n = W > 0 && W < p->T ? snprintf(what, sizeof what, "window %d", W) : 0;
    if (vary)
        snprintf(what + n, sizeof what - n, "%s%d slot%s", n ? ", " : "", s, s == 1 ? "" : "s");
    printf("  layer %-3d %.4f", l, rs_share(p, l));
    if (*what) printf("   (%s: uniform reference = %.4f)", what, rs_uniform_share(r, cfg, p, l));
    printf("\n");
}

typedef struct {
    const ProbeRecord *p;
    int train_len; /* config seq_len clamped to the probe length */
    int len64;     /* Gu et al. probe length clamped likewise */
} Ctx;

static void print_text(RunReader *r, const Ctx *c) {
    const ProbeRecord *p = c->p;
    const RunMeta *m = runread_meta(r);
    int T = p->T;
    printf("run %s: variant %s, seed %lld, status %s\n", m->path, m->variant, m->seed, m->status);
    printf("probe: step %lld, %d sequences of length T=%d, normaliser %s, "
           "%s\n\n",
           p->step, p->N, T, p->normaliser,
           p->proxy ? "proxy used: A = |a|/sum|a| (Gu et al.)"
                    : "no proxy: A is the post-softmax attention");
    printf("First-token share (F-Attn) = mean over layers, heads, probe "
           "sequences and queries t=1..T-1 of A[t,0]  (T=%d)\n",
           T);
    Config cfg; /* the run's own attention pattern (docs/metrics.md) */
    rs_arch_config(r, &cfg);
    const double u = rs_uniform_share(r, &cfg, p, -1);
    const int slots = rs_uniform_slots(r, p, -1), vary = slots_vary(r, p);
    if (slots)
        printf("  uniform reference over the keys and the %d sink slot%s%s (A[t,0] = 1/(t+%d)"
               "%s): %.4f\n",
               slots, slots > 1 ? "s" : "", vary ? " of the layers that have them" : "", slots + 1,
               windowed(r, &cfg, p, T) ? " within each layer's window" : "", u);
    else if (u != uniform_first_share(T))
        printf("  uniform reference under the run's windows, mean over layers: %.4f\n", u);
    else printf("  uniform causal reference (H_T-1)/(T-1) at T=%d: %.4f\n", T, u);
    printf("  overall   %.4f\n", rs_share(p, -1));
    for (int l = 0; l < p->L; l++) print_layer_share(r, p, &cfg, l, vary);
    double empty, f_ne;
    rs_mass(p, &empty, &f_ne);
    printf("  empty rows (no mass on the real tokens, queries t=1..T-1): %.4f; "
           "F-Attn over the non-empty rows: %.4f%s\n",
           empty, f_ne, p->row_empty ? "" : "  (not stored: from the mean map's row mass)");
    if (p->attention_slot) {
        printf("Sink slot's own share = mean over heads and queries t=0..T-1 "
               "of the weight given to the slot (attention_slot):\n  overall   %.4f\n",
               rs_slot_share(p, -1));
        for (int l = 0; l < p->L; l++) printf("  layer %-3d %.4f\n", l, rs_slot_share(p, l));
    }
    printf("\nSink rate = fraction of (layer, head) pairs with alpha_0 > eps,"
           " alpha_0 = mean over queries t=0..len-1 of A[t,0];\n"
           "  indicator per probe sequence, averaged over %d sequences%s\n",
           p->N, p->proxy ? " (proxy map)" : "");
    int lens[2] = {c->len64, c->train_len};
    const char *what[2] = {"probe length (Gu et al.)", "training length"};
    for (int i = 0; i < 2; i++) {
        printf("  %-25s len=%-5d", what[i], lens[i]);
        for (int e = 0; e < 3; e++)
            printf("  eps=%.1f: %.4f", EPS[e], rs_sink_rate(p, EPS[e], lens[i]));
        const double u = rs_uniform_alpha0(r, &cfg, p, lens[i], -1);
        const int win = windowed(r, &cfg, p, lens[i]);
        char f[96];
        if (slots) /* query t gives token 0 the weight 1/(t+1+s) */
            snprintf(f, sizeof f, "(H_(%s+%d)-H_%d)/len%s", win ? "min(W,len)" : "len", slots,
                     slots, vary ? " on the layers with slots, mean over layers" : "");
        else snprintf(f, sizeof f, "%s", win ? "H_min(W,len)/len" : "H_len/len");
        printf("   (uniform attention: alpha_0 = %s = %.4f)\n", f, u);
    }
    if (c->len64 < SINK_LEN)
        printf("  note: the probe is shorter than 64 tokens, so the Gu et al. "
               "rate uses all %d queries\n",
               c->len64);
    printf("\nPer head (T=%d): alpha_0 = mean over queries t>=0 of A[t,0] "
           "(mean over sequences); entropy = mean over t=1..T-1 of the row "
           "entropy of the sequence-mean map (nats); share = first-token "
           "share\n",
           T);
    if (p->M < T)
        printf("  (maps stored for the first %d positions only: entropy is over "
               "those rows)\n",
               p->M);
    printf("  %5s %5s %9s %9s %9s\n", "layer", "head", "alpha_0", "entropy", "share");
    for (int l = 0; l < p->L; l++) /* a layer's heads only (runread_layer_heads) */
        for (int h = 0; h < runread_layer_heads(p, l); h++) {
            const float *A = p->attention + ((size_t)l * p->H + h) * p->M * p->M;
            printf("  %5d %5d %9.4f %9.4f %9.4f\n", l, h, rs_head_alpha0(p, l, h, T),
                   attention_entropy(A, p->M), rs_head_share(p, l, h));
        }
    sf_sinks_text(p);
    hp_sinks_text(p);
}

static int print_json(RunReader *r, const Ctx *c) {
    const ProbeRecord *p = c->p;
    int T = p->T;
    json_t *o = cu_json_head(r, p), *fl = json_array(), *sr = json_object(), *heads = json_array();
    cj_set(o, "probe_len", json_integer(T));
    cj_set(o, "probe_n", json_integer(p->N));
    cj_set(o, "proxy", json_integer(p->proxy));
    cj_set(o, "normaliser", cj_str(p->normaliser));
    cj_set(o, "f_attn", cj_num(rs_share(p, -1)));
    Config cfg; /* the uniform reference of the run's window (docs/metrics.md) */
    rs_arch_config(r, &cfg);
    cj_set(o, "f_attn_uniform", cj_num(rs_uniform_share(r, &cfg, p, -1)));
    for (int l = 0; l < p->L; l++) json_array_append_new(fl, cj_num(rs_share(p, l)));
    cj_set(o, "f_attn_layer", fl);
    json_t *ul = json_array();
    for (int l = 0; l < p->L; l++)
        json_array_append_new(ul, cj_num(rs_uniform_share(r, &cfg, p, l)));
    cj_set(o, "f_attn_uniform_layer", ul);
    double empty, f_ne;
    rs_mass(p, &empty, &f_ne);
    cj_set(o, "empty_share", cj_num(empty));
    cj_set(o, "f_attn_nonempty", cj_num(f_ne)); /* null when every row is empty */
    cj_set(o, "slot_share", p->attention_slot ? cj_num(rs_slot_share(p, -1)) : json_null());
    if (p->attention_slot) {
        json_t *sl = json_array();
        for (int l = 0; l < p->L; l++) json_array_append_new(sl, cj_num(rs_slot_share(p, l)));
        cj_set(o, "slot_share_layer", sl);
    }
    int lens[2] = {c->len64, c->train_len};
    const char *key[2] = {"probe64", "train_len"};
    for (int i = 0; i < 2; i++) {
        json_t *e = json_object();
        cj_set(e, "len", json_integer(lens[i]));
        for (int k = 0; k < 3; k++) {
            char eps[16];
            snprintf(eps, sizeof eps, "%.1f", EPS[k]);
            cj_set(e, eps, cj_num(rs_sink_rate(p, EPS[k], lens[i])));
        }
        cj_set(sr, key[i], e);
    }
    cj_set(o, "sink_rate", sr);
    /* per head: alpha0 is Gu et al.'s (queries t >= 0, self term included),
     * share the first-token share (t >= 1); docs/metrics.md */
    cj_set(o, "alpha0_queries", cj_str("t >= 0"));
    cj_set(o, "share_queries", cj_str("t >= 1"));
    for (int l = 0; l < p->L; l++)
        for (int h = 0; h < runread_layer_heads(p, l); h++) {
            const float *A = p->attention + ((size_t)l * p->H + h) * p->M * p->M;
            json_t *e = json_object();
            cj_set(e, "layer", json_integer(l));
            cj_set(e, "head", json_integer(h));
            cj_set(e, "alpha0", cj_num(rs_head_alpha0(p, l, h, T)));
            cj_set(e, "entropy", cj_num(attention_entropy(A, p->M)));
            cj_set(e, "share", cj_num(rs_head_share(p, l, h)));
            json_array_append_new(heads, e);
        }
    cj_set(o, "heads", heads);
    if (sf_sinks_json(o, p) != 0) {
        json_decref(o);
        fprintf(stderr, "gatelab sinks: out of memory\n");
        return 1;
    }
    hp_sinks_json(o, p);
    return cj_print("sinks", o) ? 1 : 0;
}

/* The sink rate is read at two lengths: the training length (config
 * seq_len) and Gu et al.'s probe length, each clamped to the probe. */
static int report(RunReader *r, const ProbeRecord *p, int json) {
    double seq_len = p->T;
    runread_config_double(r, RS_CFG_SEQ_LEN, &seq_len, NULL, 0);
    Ctx ctx = {p, seq_len < p->T ? (int)seq_len : p->T, SINK_LEN < p->T ? SINK_LEN : p->T};
    if (json) return print_json(r, &ctx);
    print_text(r, &ctx);
    return 0;
}

int cmd_sinks(int argc, char **argv) { return cu_probe_cmd(&sinks_options, argc, argv, report); }
