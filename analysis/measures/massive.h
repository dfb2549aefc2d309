/* massive.h: Sun et al.'s criterion for a massive activation (Sun, Chen,
 * Kolter, Liu, "Massive Activations in Large Language Models", COLM 2024,
 * arXiv 2402.17762, Section 2; docs/metrics.md "Massive by Sun et al.'s
 * criterion"): an activation is massive when its magnitude is above 100
 * and about 1000 times the median magnitude of its hidden state. Applied to
 * a run's last probe at the layer whose block output has the largest top-1
 * |h| (the probe stores each layer's top-3 and median |h|). */
#ifndef GATELAB_MASSIVE_H
#define GATELAB_MASSIVE_H

#include "runfile_read.h" /* ProbeRecord */

/* 1 when an activation of magnitude top1 in a hidden state whose median
 * magnitude is median is massive by the criterion (|top1| above
 * metrics.h's massive_cut at MACT_ABS_MIN and MACT_MEDIAN_RATIO, the one
 * definition the interventions use too), 0 when not, -1 when either is not
 * finite or the median is not positive. */
int sun_massive(double top1, double median);

/* The probe's peak layer (largest top-1 |h|): its top-1 |h| into *top1,
 * top-1 over median into *ratio (NaN when the median is not positive),
 * and the criterion's verdict (sun_massive) as the return value; -1 with
 * both NaN when the probe has no layer. */
int massive_peak(const ProbeRecord *p, double *top1, double *ratio);

#endif
