/* cmd_gates.c: `gatelab gates RUN.h5`: gate mean (overall, per layer, per
 * head), sparsity (fractions below 0.5, 0.1, 1e-2, 1e-3) and the 50-bin
 * histogram as a text bar chart; with --vocab, layer 0's gate over the
 * whole vocabulary (gates_vocab.h). */
#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "gates_vocab.h"
#include "head_probe_print.h"
#include "runstats.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A macro's value as a string literal (the threshold in --help). */
#define GATES_STR_(x) #x
#define GATES_STR(x) GATES_STR_(x)

typedef struct {
    long long step; /* -1: the last probe */
    int json, vocab;
    const char *model;
    int threads; /* 0: the online CPUs */
} GatesOpts;
static const GatesOpts gates_defaults = {-1, 0, 0, NULL, 0};

static const OptRow gates_rows[] = {
    {'s', "step", OPT_LL, "N", 0, LLONG_MAX, "the last", "probe at training step N", 0, 0,
     &gates_defaults.step},
    {'j', "json", OPT_FLAG, NULL, 0, 0, NULL, "machine-readable output", 0, 0,
     &gates_defaults.json},
    {'V', "vocab", OPT_FLAG, NULL, 0, 0, NULL,
     "layer 0's gate over the whole vocabulary, from the final\n"
     "weights: each token as the first token of a window",
     0, 0, &gates_defaults.vocab},
    {'m', "model", OPT_STR, "DIR", 0, 0, "the one it records",
     "--vocab: checkpoint of an inspected run", 0, 0, &gates_defaults.model},
    {'t', "threads", OPT_INT, "N", 1, 64, "the online CPUs", "--vocab: threads for a checkpoint", 0,
     0, &gates_defaults.threads},
    {0}};

const OptTable gates_options = {
    .cmd = "gates",
    .operands = "RUN.h5 [options]",
    .about = "Gate mean, sparsity and score histogram of one probe (default: the last).\n"
             "With --vocab: every token id v through the model up to layer 0's gate,\n"
             "v the first token of the sequence; per token the mean of the gate's\n"
             "scores, the share of tokens below " GATES_STR(
                 RS_GATE_SPARSE) " (shut), mean, median and the ten\n"
                                 "most open and most shut tokens (docs/metrics.md).\n",
    .footer = "Exit codes: 0 ok, 1 output failed, 2 bad input, 130 interrupted (--vocab).\n",
    .rows = gates_rows,
    OPT_DEFAULTS(gates_defaults),
};

/* hist[50] = sum over layers of gate_hist */
static void total_hist(const ProbeRecord *p, double *hist, double *sum) {
    memset(hist, 0, RS_GATE_BINS * sizeof *hist);
    *sum = 0.0;
    for (int l = 0; l < p->L; l++)
        for (int b = 0; b < RS_GATE_BINS; b++) {
            hist[b] += p->gate_hist[l * RS_GATE_BINS + b];
            *sum += p->gate_hist[l * RS_GATE_BINS + b];
        }
}

static void print_hist(const ProbeRecord *p) {
    double hist[RS_GATE_BINS], sum, mx = 0.0;
    total_hist(p, hist, &sum);
    for (int b = 0; b < RS_GATE_BINS; b++)
        if (hist[b] > mx) mx = hist[b];
    if (p->gate_bounded)
        printf("\nHistogram of gate scores on [0,1], 50 bins, all layers "
               "(%.0f scores):\n",
               sum);
    else
        printf("\nHistogram of the raw act(XW) values (an unbounded gate: "
               "no [0,1] claim; 50 bins over [0,1] as the probe stored them, "
               "values outside clamped into the end bins; %.0f values):\n",
               sum);
    for (int b = 0; b < RS_GATE_BINS; b++) {
        int w = mx > 0.0 ? (int)(50.0 * hist[b] / mx + 0.5) : 0;
        printf("  [%.2f,%.2f%c %7.4f ", b / 50.0, (b + 1) / 50.0, b == RS_GATE_BINS - 1 ? ']' : ')',
               sum > 0.0 ? hist[b] / sum : 0.0);
        for (int i = 0; i < w; i++) putchar('#');
        putchar('\n');
    }
}

/* The gate's weight norm per layer and head, or a line saying it is absent
 * (probes of runs written before it, inspected checkpoints). */
static void print_weight_norms(const ProbeRecord *p) {
    if (!p->gate_w_norm) {
        printf("\ngate weight norm: absent from this probe\n");
        return;
    }
    printf("\ngate weight norm per layer (rows) and gate head (columns): Frobenius norm of the "
           "gate weights serving the head\n");
    for (int l = 0; l < p->L; l++) {
        printf("  %-7d", l);
        for (int g = 0; g < p->gate_heads; g++)
            printf(" %9.4g", p->gate_w_norm[(size_t)l * p->gate_heads + g]);
        putchar('\n');
    }
}

/* Layer l's gate weight norms over heads, or null when absent. */
static json_t *weight_norm_json(const ProbeRecord *p, int l) {
    if (!p->gate_w_norm) return json_null();
    json_t *a = json_array();
    for (int g = 0; g < p->gate_heads; g++)
        json_array_append_new(a, cj_num(p->gate_w_norm[(size_t)l * p->gate_heads + g]));
    return a;
}

static void print_text(RunReader *r, const ProbeRecord *p) {
    const RunMeta *m = runread_meta(r);
    printf("run %s: variant %s, seed %lld, probe step %lld, %d sequences of "
           "length %d\n",
           m->path, m->variant, m->seed, p->step, p->N, p->T);
    printf("gate: %d channels %s %d heads, %s\n\n", p->gate_channels,
           p->gate_shared ? "shared by all" : "in", p->gate_heads,
           p->gate_bounded ? "bounded scores in [0,1]" : "unbounded (raw act(XW))");
    printf("gate_mean = mean of every gate score on the probe set over "
           "layers, positions and channels: %.4f\n",
           rs_gate_mean(p, -1));
    if (p->gate_bounded) printf("sparsity = fraction of scores strictly below a threshold:\n");
    else
        printf("fraction of raw act(XW) values strictly below a threshold (an "
               "unbounded gate: NOT sparsity; the report shows gate<0.1 as n/a):\n");
    printf("  %-7s %8s %8s %8s %8s %9s %9s\n", "layer", "<0.5", "<0.1", "<1e-2", "<1e-3", "min",
           "max");
    for (int l = -1; l < p->L; l++) {
        char name[16];
        if (l < 0) snprintf(name, sizeof name, "all");
        else snprintf(name, sizeof name, "%d", l);
        printf("  %-7s", name);
        for (int k = 0; k < 4; k++) printf(" %8.4f", rs_gate_below(p, l, k));
        if (l >= 0 && p->gate_stats)
            printf(" %9.4g %9.4g", p->gate_stats[l * 4 + 1], p->gate_stats[l * 4 + 2]);
        putchar('\n');
    }
    printf("\ngate mean per layer (rows) and gate head (columns; mean over "
           "the head's channels, positions, sequences):\n  %-7s %8s",
           "layer", "all");
    for (int g = 0; g < p->gate_heads; g++) printf("  head %-3d", g);
    putchar('\n');
    for (int l = 0; l < p->L; l++) {
        printf("  %-7d %8.4f", l, rs_gate_mean(p, l));
        for (int g = 0; g < p->gate_heads; g++) {
            const double v = rs_gate_head_mean(p, l, g); /* NaN: a head the layer lacks */
            if (isnan(v) && g >= runread_layer_heads(p, l)) printf(" %9s", "absent");
            else printf(" %9.4f", v);
        }
        putchar('\n');
    }
    print_weight_norms(p);
    print_hist(p);
    hp_gates_text(p);
}

/* {"0.5": .., "0.1": ..}: the fractions below each threshold, layer l (-1 all) */
static json_t *below_obj(const ProbeRecord *p, int l) {
    json_t *o = json_object();
    for (int k = 0; k < RS_GATE_NBELOW; k++) {
        char key[32];
        snprintf(key, sizeof key, "%g", RS_GATE_BELOW_THR[k]);
        cj_set(o, key, cj_num(rs_gate_below(p, l, k)));
    }
    return o;
}

static int print_json(RunReader *r, const ProbeRecord *p) {
    json_t *o = cu_json_head(r, p);
    cj_set(o, "has_gate", json_integer(p->has_gate));
    if (!p->has_gate) return cj_print("gates", o) ? 1 : 0;
    cj_set(o, "gate_bounded", json_integer(p->gate_bounded));
    cj_set(o, "gate_shared", json_integer(p->gate_shared));
    cj_set(o, "gate_channels", json_integer(p->gate_channels));
    cj_set(o, "gate_heads", json_integer(p->gate_heads));
    cj_set(o, "gate_mean", cj_num(rs_gate_mean(p, -1)));
    cj_set(o, "below", below_obj(p, -1));
    json_t *layers = json_array();
    for (int l = 0; l < p->L; l++) {
        json_t *e = json_object(), *hm = json_array(), *bl = json_array();
        for (int g = 0; g < p->gate_heads; g++)
            json_array_append_new(hm, cj_num(rs_gate_head_mean(p, l, g)));
        for (int k = 0; k < RS_GATE_NBELOW; k++)
            json_array_append_new(bl, cj_num(rs_gate_below(p, l, k)));
        cj_set(e, "mean", cj_num(rs_gate_mean(p, l)));
        cj_set(e, "head_mean", hm);
        cj_set(e, "below", bl);
        cj_set(e, "weight_norm", weight_norm_json(p, l));
        json_array_append_new(layers, e);
    }
    cj_set(o, "layers", layers);
    double hist[RS_GATE_BINS], sum;
    total_hist(p, hist, &sum);
    json_t *h = json_array();
    for (int b = 0; b < RS_GATE_BINS; b++) json_array_append_new(h, cj_num(hist[b]));
    cj_set(o, "hist", h);
    hp_gates_json(o, p);
    return cj_print("gates", o) ? 1 : 0;
}

static int report(RunReader *r, const ProbeRecord *p, int json) {
    if (json) return print_json(r, p);
    if (!p->has_gate)
        printf("run %s (variant %s) has no gate: nothing to report\n", runread_meta(r)->path,
               runread_meta(r)->variant);
    else print_text(r, p);
    return 0;
}

int cmd_gates(int argc, char **argv) {
    GatesOpts o;
    int at = opt_parse_all(&gates_options, &o, argc, argv);
    if (at < 0) return opt_exit(at);
    if (at != argc - 1) {
        fprintf(stderr, "gatelab gates: want exactly one RUN.h5 (gatelab gates --help)\n");
        return 2;
    }
    if (o.vocab && o.step >= 0) {
        fprintf(stderr, "gatelab gates: --step picks a stored probe, --vocab runs the final "
                        "weights: give one of them\n");
        return 2;
    }
    if (!o.vocab && (o.model || o.threads)) {
        fprintf(stderr, "gatelab gates: --model and --threads are for --vocab\n");
        return 2;
    }
    const char *run = argv[at];
    if (o.vocab) return gates_vocab(run, o.model, o.threads ? o.threads : cu_online_cpus(), o.json);
    RunReader *r;
    ProbeRecord p;
    if (cu_load("gates", run, o.step, &r, &p) < 0) return 2;
    int rc = report(r, &p, o.json);
    runread_probe_free(&p);
    runread_close(r);
    return rc;
}
