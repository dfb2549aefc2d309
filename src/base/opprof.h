/* opprof.h: where a training step's time goes, per operation family, for
 * `gatelab bench --profile`.
 *
 * Each hooked operation (gemm, attention, the norms, the activations and
 * gates, the loss, the optimizer, the shards' gradient sum, the threads'
 * starts and waits) calls opprof_enter on entry and opprof_leave on exit. While profiling is off
 * (the default) that is one load and a branch; while on, the time between the calls (wall clock, or
 * the thread's CPU time) is added to
 * the family's total, exclusive of nested families: attention's products
 * count as products, the rest of attention as attention. Totals are summed
 * over all threads. Nothing here touches the arithmetic of an operation. */
#ifndef GATELAB_OPPROF_H
#define GATELAB_OPPROF_H

typedef enum {
    OPPROF_PRODUCTS,    /* gemm: every matrix product */
    OPPROF_ATTENTION,   /* attention's row work: scores, softmax, masks, RoPE */
    OPPROF_NORMS,       /* RMSNorm, LayerNorm */
    OPPROF_ACTIVATIONS, /* SwiGLU, GELU, SiLU, gate activations and products */
    OPPROF_LOSS,        /* softmax cross-entropy */
    OPPROF_OPTIMIZER,   /* clipping, AdamW */
    OPPROF_REDUCE,      /* the shards' gradient sum across the threads */
    OPPROF_SYNC,        /* starting the step's threads and waiting at their joins */
    OPPROF_N
} OpprofFamily;

extern int opprof_on;

/* Starts (on != 0) or stops the profile; starting also zeroes the totals.
 * cpu: time by each thread's CPU clock (what a loaded machine's other
 * processes do not inflate) instead of the wall clock. Call only while no
 * operation runs. */
void opprof_enable(int on, int cpu);
/* sec[f] = seconds spent in family f since opprof_enable(1), over all
 * threads. */
void opprof_read(double sec[OPPROF_N]);
/* The family's name as bench prints it ("products", ...). */
const char *opprof_name(OpprofFamily f);

int opprof_switch(int family);
void opprof_back(int family);

/* Enters family f; returns the token opprof_leave takes (the family that
 * was running on this thread, -1 for none, or -2 while profiling is off). */
static inline int opprof_enter(OpprofFamily f) { return opprof_on ? opprof_switch((int)f) : -2; }
/* Leaves the family entered by the opprof_enter that returned tok. */
static inline void opprof_leave(int tok) {
    if (tok != -2) opprof_back(tok);
}

#endif
