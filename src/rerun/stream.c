/* stream.c: streaming evaluation over a Forward (stream.h). */
#include "stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intervention.h"
#include "stop.h"
#include "util.h"

void stream_mask_targets(int *tg, int len, int window) {
    for (int t = 0; t < len && t < window; t++) tg[t] = -1;
}

int stream_check(const StreamOpts *o, char *err, size_t errlen) {
    if (o->window < 1 || o->window >= o->len)
        return seterr(err, errlen, "window %d must be in 1..len-1 (len %d)", o->window, o->len);
    for (int k = 0; k < o->n_keep; k++) {
        if (o->keep[k] < 0 || o->keep[k] >= o->window)
            return seterr(err, errlen, "keep %d must be below the window %d", o->keep[k],
                          o->window);
        for (int j = 0; j < k; j++)
            if (o->keep[j] == o->keep[k])
                return seterr(err, errlen, "keep %d is given twice", o->keep[k]);
    }
    return 0;
}

/* The default length on f: stream_len within the positions; on a
 * checkpoint whose input gives fewer than two such windows, the probe
 * length (its recorded windows) within the positions. */
static int default_len(Forward *f) {
    const ForwardInfo *i = &f->info;
    int len = i->stream_len, probe = i->seq_len;
    if (i->max_len > 0 && len > i->max_len) len = i->max_len;
    if (i->max_len > 0 && probe > i->max_len) probe = i->max_len;
    if (i->checkpoint && forward_avail(f, len) < 2 && probe >= 2 && probe < len) len = probe;
    return len;
}

int stream_fit(Forward *f, StreamOpts *o, char *note, size_t notelen, char *err, size_t errlen) {
    int len_default = o->len == 0, n_default = o->n_seqs == 0;
    note[0] = 0;
    if (len_default) o->len = default_len(f);
    int avail = forward_avail(f, o->len);
    if (n_default) o->n_seqs = avail < STREAM_N_SEQS_DEFAULT ? avail : STREAM_N_SEQS_DEFAULT;
    if (avail < 2 || avail < o->n_seqs)
        return seterr(err, errlen,
                      "%s: the input gives %d windows of %d tokens, %d asked: lower --n-seq or "
                      "--len, or give --text FILE with more text",
                      f->run, avail, o->len, n_default && avail < 2 ? 2 : o->n_seqs);
    if ((len_default && o->len != f->info.stream_len) ||
        (n_default && o->n_seqs != STREAM_N_SEQS_DEFAULT))
        snprintf(note, notelen,
                 "%s: --len %d --n-seq %d (the defaults %d and %d do not fit the model's %d "
                 "positions and the %d windows its input gives; set --len and --n-seq to change)",
                 f->run, o->len, o->n_seqs, f->info.stream_len, STREAM_N_SEQS_DEFAULT,
                 f->info.max_len, avail);
    return 0;
}

static int check(Forward *f, StreamOpts *o, char *err, size_t errlen) {
    char note[512];
    if ((o->len == 0 || o->n_seqs == 0) && stream_fit(f, o, note, sizeof note, err, errlen) != 0)
        return -1;
    if (o->window == 0 && (o->window = o->len / 4) < 1)
        return seterr(err, errlen,
                      "length %d is too short for the default window (len / 4 = 0): give a "
                      "--window in 1..%d or a --len of 8 or more",
                      o->len, o->len - 1);
    if (stream_check(o, err, errlen) != 0 || forward_check_len(f, o->len, err, errlen) != 0)
        return -1;
    char what[64];
    snprintf(what, sizeof what, "a sequence of %d tokens", o->len);
    return forward_check_memory(f, 1, o->len, 0, 0, what, err, errlen);
}

/* Sequence i (tokens in, masked targets tg) under every setting. */
static int score_seq(Forward *f, const StreamOpts *o, const int *in, const int *tg, int i,
                     double *loss, char *err, size_t errlen) {
    for (int k = 0; k <= o->n_keep; k++) {
        if (stop_requested()) return seterr(err, errlen, "interrupted");
        Intervention iv = {
            .kind = IV_NONE, .window = k ? o->window : 0, .keep = k ? o->keep[k - 1] : 0};
        if (f->ops->losses(f, in, tg, 1, o->len, &iv, NULL, &loss[(size_t)k * o->n_seqs + i], NULL,
                           err, errlen) != 0)
            return -1;
    }
    return 0;
}

int stream_run(Forward *f, StreamOpts *o, double *loss, char *err, size_t errlen) {
    if (check(f, o, err, errlen) != 0 || f->ops->prepare(f, 1, o->len, 1.0, err, errlen) != 0)
        return -1;
    int *in = malloc((size_t)o->len * sizeof(int)), *tg = malloc((size_t)o->len * sizeof(int));
    int rc = in && tg ? 0 : seterr(err, errlen, "out of memory");
    for (int i = 0; rc == 0 && i < o->n_seqs; i++) {
        rc = f->ops->windows(f, o->len, 1, o->n_seqs, i, in, tg, err, errlen);
        if (rc == 0) {
            stream_mask_targets(tg, o->len, o->window);
            rc = score_seq(f, o, in, tg, i, loss, err, errlen);
        }
    }
    free(in), free(tg);
    return rc;
}
