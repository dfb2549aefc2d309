/* memplan.h: the bytes a training run or an evaluation will allocate,
 * computed before anything big is allocated (the same plans the model and
 * the probe allocate by), and the one check against the machine's memory.
 * A count too large for the machine is refused as bad input, naming the
 * bytes it would need, instead of swapping for minutes or dying. */
#ifndef GATELAB_MEMPLAN_H
#define GATELAB_MEMPLAN_H

#include <stddef.h>

#include "config.h"

typedef struct {
    size_t params;      /* the parameter arena */
    size_t optimiser;   /* AdamW's two moments and the batch buffers */
    size_t activations; /* every worker's forward/backward state and gradients */
    size_t probe;       /* the probe's accumulators (0 for an eval plan) */
    size_t total;       /* the sum (saturating) */
} MemPlan;

/* The plan of `gatelab train` for cfg (validated). -1 with a reason. */
int memplan_train(const Config *cfg, MemPlan *p, char *err, size_t errlen);

/* The plan of one long-context eval pass: B sequences of length L
 * through a model of cfg, plus its attention map. -1 with a reason. */
int memplan_eval(const Config *cfg, int B, int L, MemPlan *p, char *err, size_t errlen);

/* The ceiling: GATELAB_MEM_LIMIT (bytes, a plain decimal in 1 .. 2^61 - 1)
 * when set, else the smallest of the memory available now (MemAvailable
 * of /proc/meminfo, not the machine's total), physical memory and
 * RLIMIT_AS. */
size_t memplan_limit(void);

/* 0 when p fits under memplan_limit(), else -1 with one line:
 * "WHAT needs N bytes (X GiB: params .., optimiser .., activations ..,
 * probe ..), over the N-byte memory limit"; -1 also when
 * GATELAB_MEM_LIMIT is set to anything but a positive number of bytes. */
int memplan_check(const MemPlan *p, const char *what, char *err, size_t errlen);

#endif
