/* cmd_acts.c: `gatelab acts RUN.h5`: massive activations per layer (max
 * |h|, top-1 over median, kurtosis, first-token norm ratio) and M-Act. */
#include "cmdutil.h"
#include "commands.h"
#include "runstats.h"

#include <stdio.h>

static void usage(FILE *f)
{
    fprintf(f,
        "usage: gatelab acts RUN.h5 [--step N] [--json]\n"
        "  Activation statistics of each block's output at one probe "
        "(default: the last).\n"
        "  --step N   probe at training step N\n"
        "  --json     machine-readable output\n");
}

static double top1_med(const ProbeRecord *p, int l)
{
    double med = p->h_median[l];
    return med > 0.0 ? p->h_top3[l * 3] / med : 0.0;
}

static void print_text(RunReader *r, const ProbeRecord *p)
{
    const RunMeta *m = runread_meta(r);
    printf("run %s: variant %s, seed %lld, probe step %lld, %d sequences of "
           "length %d\n\n", m->path, m->variant, m->seed, p->step, p->N, p->T);
    printf("Block l output h[T,C] (residual stream), each statistic the mean "
           "over probe sequences:\n"
           "  max_act = max |h| over tokens x features\n"
           "  top1/median = largest |h| over the median |h| (Sun et al.: "
           "massive when > 100)\n"
           "  kurtosis = mean((x-mu)^4)/(sigma^4+1e-6) (Gaussian = 3)\n"
           "  norm_ratio = ||h_0|| / mean over t != 0 of ||h_t||\n\n");
    printf("  %5s %11s %11s %11s %11s %11s\n", "layer", "max_act", "median",
           "top1/median", "kurtosis", "norm_ratio");
    for (int l = 0; l < p->L; l++)
        printf("  %5d %11.4g %11.4g %11.4g %11.4g %11.4g\n", l, p->h_max[l],
               p->h_median[l], top1_med(p, l), p->h_kurtosis[l],
               p->h_norm_ratio[l]);
    printf("\nM-Act = mean over layers of max_act: %.4g\n", rs_m_act(p));
}

static void print_json(RunReader *r, const ProbeRecord *p)
{
    cu_json_head(r, p);
    printf(", \"m_act\": %.6g, \"layers\": [", rs_m_act(p));
    for (int l = 0; l < p->L; l++)
        printf("%s{\"max_act\": %.6g, \"median\": %.6g, \"top1_median\": "
               "%.6g, \"kurtosis\": %.6g, \"norm_ratio\": %.6g}",
               l ? ", " : "", p->h_max[l], p->h_median[l], top1_med(p, l),
               p->h_kurtosis[l], p->h_norm_ratio[l]);
    printf("]}\n");
}

static void report(RunReader *r, const ProbeRecord *p, int json)
{
    if (json) print_json(r, p);
    else print_text(r, p);
}

int cmd_acts(int argc, char **argv)
{
    return cu_probe_cmd("acts", argc, argv, usage, report);
}
