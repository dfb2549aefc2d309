/* stream.h: streaming evaluation of a finished run (gatelab stream).
 *
 * The model is rebuilt from the run file (runmodel.h) and scored on the
 * held-out sequences lceval uses (the same for every run), n_seqs of
 * length len, once with dense attention and once per keep count with
 * every attention limited to `window` keys: the first keep tokens and the
 * latest window - keep (an evicting KV cache; AttnSpec). Only predictions
 * at positions >= window count, where a key has been evicted. Nothing here
 * writes the run file. */
#ifndef GATELAB_STREAM_H
#define GATELAB_STREAM_H

#include <stddef.h>

#define STREAM_MAX_KEEP 8

typedef struct {
    int window, len, n_seqs, n_keep;
    int keep[STREAM_MAX_KEEP];
} StreamOpts;

/* The mean loss of each sequence, loss[(n_keep + 1) * n_seqs] (row 0
 * dense, row 1 + i keep[i]). len 0 means the run's seq_len, window 0
 * len / 4 (both filled in). -1 with one
 * line in err: an unreadable run, a window not below len, a length the
 * position table cannot reach. */
int stream_trained(const char *run_path, StreamOpts *o, double *loss, char *err, size_t errlen);

/* After len and window are known: window in 1..len-1, every keep below
 * the window. -1 with one line in err. */
int stream_check(const StreamOpts *o, char *err, size_t errlen);

/* Targets for the streaming score: tg[t] kept for t >= window, else -1. */
void stream_mask_targets(int *tg, int len, int window);

#endif
