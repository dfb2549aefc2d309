/* probe_reduce_sinks.c: the probe reducer's measures beyond position 0
 * (probe_reduce.h): per-sequence key alphas, the cosine of each position's
 * block output to position 0's, and the residual dimensions' exceedance
 * shares. Definitions are metrics_sinks.c's. */
#include "probe_reduce.h"

#include <stdlib.h>

#include "metrics.h"
#include "metrics_sinks.h"
#include "util.h"

int probe_sinks_init(ProbeAcc *a) {
    const ProbeShape *s = &a->s;
    const size_t NL = (size_t)s->N * s->L;
    a->key_alpha = falloc(NL * s->H * s->M);
    a->bos_cos = falloc(NL * s->T);
    a->resid = calloc((size_t)s->L * s->d + 1, sizeof(double));
    return a->key_alpha && a->bos_cos && a->resid ? 0 : -1;
}

size_t probe_sinks_bytes(const ProbeShape *s) {
    double NL = (double)s->N * s->L;
    double b = 4.0 * NL * s->H * s->M + 4.0 * NL * s->T + 8.0 * s->L * s->d;
    return b >= (double)(SIZE_MAX / 8) ? SIZE_MAX / 8 : (size_t)b;
}

void probe_sinks_head(ProbeAcc *a, int seq, const ProbeLayer *pl, int h) {
    const size_t at = (((size_t)seq * a->s.L + pl->layer) * pl->H + h) * pl->M;
    key_alpha_all(pl->maps + (size_t)h * pl->M * pl->M, pl->M, a->key_alpha + at);
}

void probe_sinks_hidden(ProbeAcc *a, int seq, const ProbeLayer *pl, double median) {
    const size_t at = ((size_t)seq * a->s.L + pl->layer) * pl->T;
    cosine_to_first(pl->hidden, pl->T, pl->d, a->bos_cos + at);
    count_above(pl->hidden, pl->T, pl->d, RESID_SINK_FACTOR * median,
                a->resid + (size_t)pl->layer * pl->d);
}

void probe_sinks_finish(ProbeAcc *a, ProbeRecord *out) {
    const double tokens = (double)a->s.N * a->s.T;
    for (size_t i = 0; i < (size_t)a->s.L * a->s.d; i++) a->resid[i] /= tokens > 0 ? tokens : 1;
    out->D = a->s.d;
    out->key_alpha = a->key_alpha, out->bos_cosine = a->bos_cos, out->resid_share = a->resid;
    a->key_alpha = NULL, a->bos_cos = NULL, a->resid = NULL;
}
