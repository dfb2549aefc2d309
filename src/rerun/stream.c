/* stream.c: streaming evaluation of a trained run (stream.h). */
#include "stream.h"

#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "intervention.h"
#include "lceval.h"
#include "model.h"
#include "runfile_read.h"
#include "runmodel.h"
#include "stop.h"
#include "util.h"

void stream_mask_targets(int *tg, int len, int window) {
    for (int t = 0; t < len && t < window; t++) tg[t] = -1;
}

int stream_check(const StreamOpts *o, char *err, size_t errlen) {
    if (o->window < 1 || o->window >= o->len)
        return seterr(err, errlen, "window %d must be in 1..len-1 (len %d)", o->window, o->len);
    for (int k = 0; k < o->n_keep; k++)
        if (o->keep[k] < 0 || o->keep[k] >= o->window)
            return seterr(err, errlen, "keep %d must be below the window %d", o->keep[k],
                          o->window);
    return 0;
}

static int load_model(const char *path, Model *m, char *err, size_t errlen) {
    RunReader *rr = runread_open(path, err, errlen);
    if (!rr) return -1;
    int rc = runmodel_load(rr, path, m, err, errlen);
    runread_close(rr);
    return rc;
}

static int check(const Model *m, StreamOpts *o, const char *path, char *err, size_t errlen) {
    if (o->len == 0) o->len = m->cfg.seq_len;
    if (o->window == 0) o->window = o->len / 4;
    if (stream_check(o, err, errlen) != 0) return -1;
    if (m->cfg.pos == POS_LEARNED && o->len + m->dims.extra_pos > m->cfg.max_pos)
        return seterr(err, errlen, "%s: length %d exceeds the learned position table (max_pos %d)",
                      path, o->len, m->cfg.max_pos);
    return 0;
}

/* Sequence i (tokens in, masked targets tg) under every setting. */
static int score_seq(const Model *m, RunState *s, const StreamOpts *o, const int *in, const int *tg,
                     int i, double *loss) {
    for (int k = 0; k <= o->n_keep; k++) {
        if (stop_requested()) return -1;
        Intervention iv = {
            .kind = IV_NONE, .window = k ? o->window : 0, .keep = k ? o->keep[k - 1] : 0};
        model_forward_iv(m, s, in, tg, 1, o->len, &iv);
        loss[(size_t)k * o->n_seqs + i] = s->loss;
    }
    return 0;
}

int stream_trained(const char *run_path, StreamOpts *o, double *loss, char *err, size_t errlen) {
    Model m;
    if (load_model(run_path, &m, err, errlen) != 0) return -1;
    Dataset ds;
    RunState s;
    int rc = check(&m, o, run_path, err, errlen), opened = 0, state = 0;
    if (rc == 0) rc = (opened = data_open(&ds, &m.cfg, err, errlen) == 0) ? 0 : -1;
    if (rc == 0 && !(state = runstate_init(&s, &m, 1, o->len) == 0))
        rc = seterr(err, errlen, "out of memory for a sequence of %d", o->len);
    int *in = malloc((size_t)o->len * sizeof(int)), *tg = malloc((size_t)o->len * sizeof(int));
    if (rc == 0 && (!in || !tg)) rc = seterr(err, errlen, "out of memory");
    for (int i = 0; rc == 0 && i < o->n_seqs; i++) {
        data_batch(&ds, in, tg, 1, o->len, SPLIT_VAL, LCEVAL_SEED, i);
        stream_mask_targets(tg, o->len, o->window);
        if (score_seq(&m, &s, o, in, tg, i, loss) != 0) rc = seterr(err, errlen, "interrupted");
    }
    free(in), free(tg);
    if (state) runstate_free(&s);
    if (opened) data_close(&ds);
    model_free(&m);
    return rc;
}
