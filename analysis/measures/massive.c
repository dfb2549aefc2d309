/* massive.c: Sun et al.'s massive-activation criterion (massive.h). */
#include "massive.h"

#include <math.h>

#include "metrics.h"   /* massive_cut */
#include "runschema.h" /* RS_HIDDEN_TOP */

int sun_massive(double top1, double median) {
    if (!isfinite(top1) || !isfinite(median) || !(median > 0)) return -1;
    return fabs(top1) > massive_cut(median, MACT_ABS_MIN, MACT_MEDIAN_RATIO);
}

int massive_peak(const ProbeRecord *p, double *top1, double *ratio) {
    *top1 = *ratio = NAN;
    int best = -1;
    for (int l = 0; l < p->L; l++)
        if (isfinite(p->h_top3[l * RS_HIDDEN_TOP]) &&
            (best < 0 || p->h_top3[l * RS_HIDDEN_TOP] > p->h_top3[best * RS_HIDDEN_TOP]))
            best = l;
    if (best < 0) return -1;
    double t = p->h_top3[best * RS_HIDDEN_TOP], m = p->h_median[best];
    *top1 = t;
    *ratio = m > 0 ? t / m : NAN;
    return sun_massive(t, m);
}
