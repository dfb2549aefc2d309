/* cmd_acts.c: `gatelab acts RUN.h5`: massive activations per layer (max
 * |h|, top-1 over median, kurtosis, first-token norm ratio), M-Act, and the
 * residual sinks (sinks_field.c). */
#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "head_probe_print.h"
#include "runstats.h"
#include "sinks_field.h"

#include <math.h>
#include <stdio.h>

const OptTable acts_options = {
    .cmd = "acts",
    .operands = "RUN.h5 [options]",
    .about = "Activation statistics of each block's output at one probe (default: the last).\n",
    .rows = cu_probe_rows,
    OPT_DEFAULTS(cu_probe_defaults),
};

static double top1_med(const ProbeRecord *p, int l) {
    double med = p->h_median[l];
    return med > 0.0 ? p->h_top3[l * 3] / med : 0.0;
}

/* Mean of layer l's input-gradient norms over positions t >= 1 (NaN when
 * the probe lacks them or has one position). */
static double grad_rest_mean(const ProbeRecord *p, int l) {
    if (!p->grad_in_norm || p->T < 2) return NAN;
    double s = 0.0;
    for (int t = 1; t < p->T; t++) s += p->grad_in_norm[(size_t)l * p->T + t];
    return s / (p->T - 1);
}

/* The input-gradient lines under the table, or one line saying they are
 * absent (probes of runs written before them, inspected checkpoints). */
static void print_grad_text(const ProbeRecord *p) {
    if (!p->grad_in_norm) {
        printf("\ninput-gradient norms: absent from this probe\n");
        return;
    }
    printf("\ninput-gradient norm g[l,t] = mean over sequences of ||dL_seq/dh_t|| at block l's "
           "input (gradient sinks):\n  %5s %11s %11s\n",
           "layer", "t=0", "mean t>=1");
    for (int l = 0; l < p->L; l++)
        printf("  %5d %11.4g %11.4g\n", l, p->grad_in_norm[(size_t)l * p->T], grad_rest_mean(p, l));
}

static void print_text(RunReader *r, const ProbeRecord *p) {
    const RunMeta *m = runread_meta(r);
    printf("run %s: variant %s, seed %lld, probe step %lld, %d sequences of "
           "length %d\n\n",
           m->path, m->variant, m->seed, p->step, p->N, p->T);
    printf("Block l output h[T,C] (residual stream), each statistic the mean "
           "over probe sequences:\n"
           "  max_act = max |h| over tokens x features\n"
           "  top1/median = largest |h| over the median |h| (Sun et al.: "
           "massive when > 100)\n"
           "  kurtosis = mean((x-mu)^4)/(sigma^4+1e-6) (Gaussian = 3)\n"
           "  norm_ratio = ||h_0|| / mean over t != 0 of ||h_t||\n\n");
    printf("  %5s %11s %11s %11s %11s %11s\n", "layer", "max_act", "median", "top1/median",
           "kurtosis", "norm_ratio");
    for (int l = 0; l < p->L; l++)
        printf("  %5d %11.4g %11.4g %11.4g %11.4g %11.4g\n", l, p->h_max[l], p->h_median[l],
               top1_med(p, l), p->h_kurtosis[l], p->h_norm_ratio[l]);
    printf("\nM-Act = mean over layers of max_act: %.4g\n", rs_m_act(p));
    sf_acts_text(p);
    hp_acts_text(p);
    print_grad_text(p);
}

/* Layer l's input-gradient norms over positions, or null when absent. */
static json_t *grad_json(const ProbeRecord *p, int l) {
    if (!p->grad_in_norm) return json_null();
    json_t *a = json_array();
    for (int t = 0; t < p->T; t++)
        json_array_append_new(a, cj_num(p->grad_in_norm[(size_t)l * p->T + t]));
    return a;
}

static int print_json(RunReader *r, const ProbeRecord *p) {
    json_t *o = cu_json_head(r, p), *layers = json_array();
    cj_set(o, "m_act", cj_num(rs_m_act(p)));
    for (int l = 0; l < p->L; l++) {
        json_t *e = json_object();
        cj_set(e, "max_act", cj_num(p->h_max[l]));
        cj_set(e, "median", cj_num(p->h_median[l]));
        cj_set(e, "top1_median", cj_num(top1_med(p, l)));
        cj_set(e, "kurtosis", cj_num(p->h_kurtosis[l]));
        cj_set(e, "norm_ratio", cj_num(p->h_norm_ratio[l]));
        cj_set(e, "grad_in_norm", grad_json(p, l));
        json_array_append_new(layers, e);
    }
    cj_set(o, "layers", layers);
    sf_acts_json(o, p);
    hp_acts_json(o, p);
    return cj_print("acts", o) ? 1 : 0;
}

static int report(RunReader *r, const ProbeRecord *p, int json) {
    if (json) return print_json(r, p);
    print_text(r, p);
    return 0;
}

int cmd_acts(int argc, char **argv) { return cu_probe_cmd(&acts_options, argc, argv, report); }
