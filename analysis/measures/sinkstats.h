/* sinkstats.h: a probe's measures beyond position 0, read from its run
 * file record (docs/metrics.md "Beyond the first token"): the per-layer
 * key-share and distance profiles (from the stored mean maps, so every
 * run file has them), and the secondary sinks, cosines to position 0 and
 * residual sinks (from the arrays newer probes store; absent otherwise). */
#ifndef GATELAB_SINKSTATS_H
#define GATELAB_SINKSTATS_H

#include "metrics_sinks.h"
#include "runfile_read.h"

/* out[M]: alpha_k of layer l's maps, k = 0..M-1, the mean over heads
 * (l = -1: over layers and heads). 0, or -1 when out of memory. */
int ss_key_profile(const ProbeRecord *p, int l, double *out);

/* out[M]: alpha_k of head h of layer l's map, k = 0..M-1. 0, or -1 when
 * out of memory. */
int ss_key_head(const ProbeRecord *p, int l, int h, double *out);

/* weight[M], mass[M] (either may be NULL): distance_profile of layer l's
 * maps, the mean over heads (l = -1: over layers and heads). 0, or -1 when
 * out of memory. */
int ss_distance(const ProbeRecord *p, int l, double *weight, double *mass);

/* The secondary sinks of probe sequence seq (secsink_find on its key
 * alphas): up to max_out into out; returns how many, or -1 when the probe
 * has no key_alpha (an older run file) or memory runs out. */
int ss_secondary(const ProbeRecord *p, int seq, SecSink *out, int max_out);

/* cos(h_t, h_0) of layer l at position t, the mean over probe sequences;
 * NaN when the probe has no bos_cosine. */
double ss_bos_cos(const ProbeRecord *p, int l, int t);

/* The residual sinks of layer l: dimensions whose resid_share is at least
 * RESID_SINK_SHARE, ascending, up to max_out into dims (may be NULL);
 * returns how many, or -1 when the probe has no resid_share. */
int ss_resid_dims(const ProbeRecord *p, int l, int *dims, int max_out);

/* ---- one number per run (results.csv's probe columns) ---- */

/* The mean over layers and heads of position 0's value (*first) and of
 * the mean over t >= 1 (*rest, metrics.h first_rest) of arr [L, H, T]
 * (key_norm, value_norm); both NaN when the probe lacks arr. */
void ss_lh_first_rest(const ProbeRecord *p, const float *arr, double *first, double *rest);

/* How many heads are dormant by rule r (runstats.h rs_head_dormant); -1
 * when the probe has no head_out_norm or a head's class is unknown. */
int ss_dormant_count(const ProbeRecord *p, DormantRule r);

/* The mean over probe sequences of the number of secondary sinks
 * (ss_secondary); NaN when the probe has no key_alpha. */
double ss_secondary_mean(const ProbeRecord *p);

/* The residual sinks summed over layers (ss_resid_dims); -1 when the probe
 * has no resid_share. */
int ss_resid_count(const ProbeRecord *p);

/* The means over layers of the gate at position 0 (*first) and over t >= 1
 * (*rest); both NaN without gate_first / gate_rest. */
void ss_gate_first_rest(const ProbeRecord *p, double *first, double *rest);

/* The distance profile's near window: the keys d = 0..SS_NEAR_DIST-1
 * before the query (d = 0 the query itself) that distance_mass_%g sums. */
#define SS_NEAR_DIST 8

/* The mean over heads of layer l (l < 0: over layers and heads) of
 * arr[l, h, 0] over the median over t >= 1 of arr[l, h, t] (arr [L, H, T]:
 * key_norm, value_norm); NaN when the probe lacks arr, T < 2 or a head's
 * median is not positive. */
double ss_lh_first_over_median(const ProbeRecord *p, const float *arr, int l);

/* The mean over layers of grad_in_norm[l, 0] over the median over t >= 1
 * of grad_in_norm[l, t]; NaN when the probe has no grad_in_norm, T < 2 or
 * a layer's median is not positive. */
double ss_grad_first_over_median(const ProbeRecord *p);

/* The attention mass within near keys of the query: the sum over
 * d = 0..near-1 of the distance profile's mass m(d) (ss_distance), the mean
 * over layers and heads; NaN when the maps have no mass. */
double ss_distance_mass_near(const ProbeRecord *p, int near);

/* The mean of ov_erank over layers and heads; NaN when the probe has no
 * ov_erank or a head's rank is NaN. */
double ss_ov_erank_mean(const ProbeRecord *p);

#endif
