/* probe_reduce_sinks.c: the probe reducer's measures beyond position 0
 * (probe_reduce.h): per-sequence key alphas, the cosine of each position's
 * block output to position 0's, and the residual dimensions' exceedance
 * shares. Definitions are metrics_sinks.c's. */
#include "probe_reduce.h"

#include "metrics.h"
#include "metrics_sinks.h"

void probe_sinks_head(ProbeAcc *a, int seq, const ProbeLayer *pl, int h) {
    const size_t at = (((size_t)seq * a->s.L + pl->layer) * a->s.H + h) * pl->M;
    key_alpha_all(pl->maps + (size_t)h * pl->M * pl->M, pl->M, a->key_alpha + at);
}

void probe_sinks_hidden(ProbeAcc *a, int seq, const ProbeLayer *pl, double median) {
    const size_t at = ((size_t)seq * a->s.L + pl->layer) * pl->T;
    cosine_to_first(pl->hidden, pl->T, pl->d, a->bos_cosine + at);
    count_above(pl->hidden, pl->T, pl->d, RESID_SINK_FACTOR * median,
                a->resid_share + (size_t)pl->layer * pl->d);
}

void probe_sinks_finish(ProbeAcc *a, ProbeRecord *out) {
    const double tokens = (double)a->s.N * a->s.T;
    for (size_t i = 0; i < (size_t)a->s.L * a->s.d; i++)
        a->resid_share[i] /= tokens > 0 ? tokens : 1;
    out->D = a->s.d;
}
