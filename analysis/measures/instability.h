/* instability.h: the one rule that calls a training run unstable
 * (docs/statistics.md "Instability"). A run is unstable when its final val
 * loss exceeds the best final val loss of its arm (the same variant on the
 * same data under the same architecture as it attends, at any learning
 * rate) by more than a declared margin; a run
 * without a finite final val loss (diverged, not finished) is unstable.
 * Unlike divergence (a non-finite loss, which AdamW's bounded step makes
 * nearly impossible at these scales), this rule can fire. */
#ifndef GATELAB_INSTABILITY_H
#define GATELAB_INSTABILITY_H

/* The declared margin, in nats: a final val loss more than this above the
 * arm's best is unstable. */
#define UNSTABLE_MARGIN 0.5

/* The smallest finite value of loss[n]; NaN when none is finite. */
double arm_best_loss(const double *loss, int n);

/* 1 when a run with final val loss `loss` is unstable against its arm's
 * best final val loss `best` at margin `margin` (loss not finite, or loss
 * > best + margin); 0 otherwise, and 0 when best is not finite (no run of
 * the arm finished: nothing to measure against). */
int run_unstable(double loss, double best, double margin);

/* How many of loss[n] (one arm's runs) are unstable at margin. */
int count_unstable(const double *loss, int n, double margin);

#endif
