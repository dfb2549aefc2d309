/* stop.h: SIGINT and SIGTERM, the same for every command. main installs
 * the handler once (stop_install). By default a signal ends the command at
 * once: its temporaries and lock files are removed (exitclean.h), one line
 * says it was interrupted, and the exit code is STOP_EXIT (130). A long
 * loop that can stop cleanly (training steps, eval batches, probe chunks,
 * long-context batches) arms the stop flag instead: while armed a signal
 * only sets the flag, which the loop polls between batches, so a signal
 * takes effect within one batch wherever it lands. A supervisor (the
 * sweep) arms it too and reads which signal came and how many, to pass
 * the first on to its children and kill them at the second. */
#ifndef GATELAB_STOP_H
#define GATELAB_STOP_H

#include <signal.h>

#define STOP_EXIT 130 /* the exit code of an interrupted command */

typedef struct {
    struct sigaction old_int, old_term;
    int was_armed;
} StopGuard;

/* Catch SIGINT and SIGTERM for the command cmd (named in the one line an
 * interrupt prints). */
void stop_install(const char *cmd);
/* Clear the flag and defer signals to it (the old handlers go to g). */
void stop_arm(StopGuard *g);
/* Put the old handlers back (the flag keeps its value). */
void stop_disarm(const StopGuard *g);
/* 1 once a signal arrived since stop_arm. */
int stop_requested(void);
/* The last signal (SIGINT or SIGTERM) that arrived while armed since
 * stop_arm, 0 if none; it keeps its value after stop_disarm. */
int stop_signal(void);
/* How many signals arrived while armed since stop_arm. */
int stop_count(void);

#endif
