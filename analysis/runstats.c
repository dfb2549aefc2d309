/* runstats.c: headline numbers of one probe (see runstats.h). */
#include "runstats.h"
#include "metrics.h"


double rs_head_share(const ProbeRecord *p, int l, int h)
{
    size_t TT = (size_t)p->T * p->T;
    return first_token_share(p->attention + ((size_t)l * p->H + h) * TT,
                             p->T);
}

double rs_share(const ProbeRecord *p, int l)
{
    int l0 = l < 0 ? 0 : l, l1 = l < 0 ? p->L : l + 1;
    double s = 0.0;
    for (int i = l0; i < l1; i++)
        for (int h = 0; h < p->H; h++) s += rs_head_share(p, i, h);
    int n = (l1 - l0) * p->H;
    return n ? s / n : 0.0;
}

static const float *col_of(const ProbeRecord *p, int n, int l, int h)
{
    return p->first_col + (((size_t)n * p->L + l) * p->H + h) * p->T;
}

double rs_head_alpha0(const ProbeRecord *p, int l, int h, int len)
{
    if (len > p->T) len = p->T;
    if (p->N < 1) return 0.0;
    double s = 0.0;
    for (int n = 0; n < p->N; n++) s += alpha0_from_col(col_of(p, n, l, h), len);
    return s / p->N;
}

double rs_sink_rate(const ProbeRecord *p, double eps, int len)
{
    if (len > p->T) len = p->T;
    if (p->N < 1 || p->L * p->H < 1) return 0.0;
    double total = 0.0;
    for (int n = 0; n < p->N; n++) {
        int sinks = 0;
        for (int l = 0; l < p->L; l++)
            for (int h = 0; h < p->H; h++)
                sinks += alpha0_from_col(col_of(p, n, l, h), len) > eps;
        total += (double)sinks / (p->L * p->H);
    }
    return total / p->N;
}

/* Layer weights: the score count in gate_stats (equal when absent). */
static double layer_count(const ProbeRecord *p, int l)
{
    double c = p->gate_stats ? p->gate_stats[l * RS_GATE_NSTATS + 3] : 0.0;
    return c > 0.0 ? c : 1.0;
}

static double channel_mean(const ProbeRecord *p, int l)
{
    int C = p->gate_channels;
    double s = 0.0;
    for (int c = 0; c < C; c++) s += p->gate_channel_mean[(size_t)l * C + c];
    return C ? s / C : 0.0;
}

double rs_gate_mean(const ProbeRecord *p, int l)
{
    if (!p->has_gate) return 0.0;
    int l0 = l < 0 ? 0 : l, l1 = l < 0 ? p->L : l + 1;
    double s = 0.0, w = 0.0;
    for (int i = l0; i < l1; i++) {
        double m = p->gate_stats ? p->gate_stats[i * RS_GATE_NSTATS] : channel_mean(p, i);
        s += layer_count(p, i) * m;
        w += layer_count(p, i);
    }
    return w > 0.0 ? s / w : 0.0;
}

double rs_gate_head_mean(const ProbeRecord *p, int l, int g)
{
    if (!p->has_gate || p->gate_heads < 1) return 0.0;
    int per = p->gate_channels / p->gate_heads;
    const double *cm = p->gate_channel_mean + (size_t)l * p->gate_channels;
    double s = 0.0;
    for (int c = g * per; c < (g + 1) * per; c++) s += cm[c];
    return per ? s / per : 0.0;
}

double rs_gate_below(const ProbeRecord *p, int l, int k)
{
    if (!p->has_gate || !p->gate_below) return 0.0;
    int l0 = l < 0 ? 0 : l, l1 = l < 0 ? p->L : l + 1;
    double s = 0.0, w = 0.0;
    for (int i = l0; i < l1; i++) {
        s += layer_count(p, i) * p->gate_below[i * RS_GATE_NBELOW + k];
        w += layer_count(p, i);
    }
    return w > 0.0 ? s / w : 0.0;
}

double rs_m_act(const ProbeRecord *p)
{
    double s = 0.0;
    for (int l = 0; l < p->L; l++) s += p->h_max[l];
    return p->L ? s / p->L : 0.0;
}
