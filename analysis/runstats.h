/* runstats.h: the headline numbers of one probe (F-Attn, sink rate, gate
 * mean and sparsity, M-Act), computed from a ProbeRecord with metrics.h. The
 * text tools and the report both call these, so a number printed by
 * `gatelab sinks` is the same number that lands in results.csv. */
#ifndef GATELAB_RUNSTATS_H
#define GATELAB_RUNSTATS_H

#include "runfile_read.h"

#define RUNSTATS_SINK_LEN 64 /* Gu et al. probe length */

/* First-token share of head (l,h): mean over t = 1..T-1 of A[t,0]. */
double rs_head_share(const ProbeRecord *p, int l, int h);
/* Mean of rs_head_share over heads of layer l; over all (l,h) for l < 0. */
double rs_share(const ProbeRecord *p, int l);

/* Fraction of (l,h) with alpha_0 > eps, alpha_0 over the first `len`
 * queries of each probe sequence (len clamped to T), indicator per
 * sequence then averaged over sequences. */
double rs_sink_rate(const ProbeRecord *p, double eps, int len);
/* alpha_0 of (l,h) over the first len queries, mean over sequences. */
double rs_head_alpha0(const ProbeRecord *p, int l, int h, int len);

/* Gate mean over layer l (all layers when l < 0), weighting layers by their
 * score count. Needs has_gate. */
double rs_gate_mean(const ProbeRecord *p, int l);
/* Gate mean of gate-head g in layer l, from gate_channel_mean. */
double rs_gate_head_mean(const ProbeRecord *p, int l, int g);
/* Fraction of scores below threshold index k (0: 0.5, 1: 0.1, 2: 1e-2,
 * 3: 1e-3) in layer l (all layers when l < 0). */
double rs_gate_below(const ProbeRecord *p, int l, int k);

/* M-Act: mean over layers of max |h|. */
double rs_m_act(const ProbeRecord *p);

#endif
