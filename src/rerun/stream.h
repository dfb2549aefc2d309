/* stream.h: streaming evaluation of a model (gatelab stream), over a
 * Forward (forward.h): a trained run's or an inspected checkpoint's.
 *
 * The model is scored on n_seqs held-out windows of length len (a trained
 * run: the sequences lceval uses, the same for every run; a checkpoint:
 * the input its run records), once with dense attention and once per keep
 * count with every attention limited to `window` keys: the first keep
 * tokens and the latest window - keep (an evicting KV cache; AttnSpec).
 * Only predictions at positions >= window count, where a key has been
 * evicted. Nothing here writes the run file. */
#ifndef GATELAB_STREAM_H
#define GATELAB_STREAM_H

#include <stddef.h>

#include "forward.h"

#define STREAM_MAX_KEEP 8
#define STREAM_N_SEQS_DEFAULT 8 /* sequences when n_seqs is 0 */

typedef struct {
    int window, len, n_seqs, n_keep;
    int keep[STREAM_MAX_KEEP];
} StreamOpts;

/* len and n_seqs where 0 (the defaults) filled in to fit f: len the
 * model's stream_len cut to its positions (a checkpoint whose input gives
 * fewer than two windows of that: its probe length), n_seqs
 * STREAM_N_SEQS_DEFAULT cut to the windows the input gives. When a default
 * was cut, note gets one line saying so (else ""). -1 with one line naming
 * the options to change when the input gives fewer windows than asked. */
int stream_fit(Forward *f, StreamOpts *o, char *note, size_t notelen, char *err, size_t errlen);

/* The mean loss of each sequence, loss[(n_keep + 1) * n_seqs] (row 0
 * dense, row 1 + i keep[i]). len and n_seqs 0 are filled in by stream_fit,
 * window 0 is len / 4. -1 with one line in err: a window not below
 * len (or a default window of 0), a keep given twice, a length the
 * positions cannot reach, too little memory (the plan of eval: memplan.h)
 * or input, an interrupt. */
int stream_run(Forward *f, StreamOpts *o, double *loss, char *err, size_t errlen);

/* After len and window are known: window in 1..len-1, every keep below
 * the window and given once. -1 with one line in err. */
int stream_check(const StreamOpts *o, char *err, size_t errlen);

/* Targets for the streaming score: tg[t] kept for t >= window, else -1. */
void stream_mask_targets(int *tg, int len, int window);

#endif
