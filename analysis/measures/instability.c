/* instability.c: the instability rule of instability.h. */
#include "instability.h"

#include <math.h>

double arm_best_loss(const double *loss, int n) {
    double best = NAN;
    for (int i = 0; i < n; i++)
        if (isfinite(loss[i]) && !(loss[i] >= best)) best = loss[i];
    return best;
}

int run_unstable(double loss, double best, double margin) {
    if (!isfinite(best)) return 0;
    return !isfinite(loss) || loss > best + margin;
}

int count_unstable(const double *loss, int n, double margin) {
    double best = arm_best_loss(loss, n);
    int k = 0;
    for (int i = 0; i < n; i++) k += run_unstable(loss[i], best, margin);
    return k;
}
