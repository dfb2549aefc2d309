/* testhook.h: the test suite's hooks (faults, the sweep's child binary), read from GATELAB_TEST_*
 * environment variables only (never from an option a user sets or sees in
 * --help), the way git keeps its GIT_TEST_* knobs:
 *   GATELAB_TEST_NAN_AT=S      put a NaN into step S (S >= 0) ...
 *   GATELAB_TEST_NAN_KIND=K    ... in the loss (K = loss, the default), in one
 *                              gradient entry after backward and before
 *                              clipping (grad), or in one final-norm weight
 *                              before the forward (weight)
 *   GATELAB_TEST_KILL_AT=S     SIGKILL the trainer after logging step S
 *   GATELAB_TEST_EXE=PATH      the binary a sweep runs its children with
 *   GATELAB_TEST_LOCK_WAIT=S   seconds a sweep waits for an earlier writer's
 *                              lock on a run it would resume (default 60)
 * Unset variables inject nothing, and training is then exactly as without
 * this file. */
#ifndef GATELAB_TESTHOOK_H
#define GATELAB_TESTHOOK_H

#include <stddef.h>

#include "trainer.h"

typedef enum { FAULT_LOSS = 0, FAULT_GRAD, FAULT_WEIGHT } FaultKind;

typedef struct {
    long long nan_at; /* -1: none */
    FaultKind nan_kind;
    long long kill_at; /* -1: none */
} TestHooks;

/* Read the variables into *h. 0, or -1 with a one-line reason naming the
 * variable and its bad value. */
int testhook_load(TestHooks *h, char *err, size_t errlen);

/* Before the step's forward: poison a weight or arm the gradient poison. */
void testhook_before_step(const TestHooks *h, long long step, Trainer *tr);

/* After the step: the loss it reports (NaN when the loss is poisoned). */
float testhook_loss(const TestHooks *h, long long step, float loss);

/* After the step is logged: SIGKILL the process when asked to. */
void testhook_after_step(const TestHooks *h, long long step);

/* GATELAB_TEST_EXE, or NULL when unset or empty. */
const char *testhook_exe(void);

/* The seconds a sweep waits for an earlier writer's lock:
 * GATELAB_TEST_LOCK_WAIT when it is a number >= 0, else dflt. */
double testhook_lock_wait(double dflt);

#endif
