/* stop.h: the process's one stop flag. SIGINT and SIGTERM set it while a
 * command has it armed; every long loop (training steps, eval batches,
 * probe chunks, long-context batches) polls it between batches, so a
 * signal takes effect within one batch wherever it lands. */
#ifndef GATELAB_STOP_H
#define GATELAB_STOP_H

#include <signal.h>

typedef struct {
    struct sigaction old_int, old_term;
} StopGuard;

/* Clear the flag and catch SIGINT/SIGTERM (the old handlers go to g). */
void stop_arm(StopGuard *g);
/* Put the old handlers back (the flag keeps its value). */
void stop_disarm(const StopGuard *g);
/* 1 once a signal arrived since stop_arm. */
int stop_requested(void);

#endif
