/* metrics_log.h: the live metrics log RUN.h5.jsonl beside a run file
 * (metrics_log.c; format in docs/runfile.md "The live metrics log").
 *
 * One JSON object a line, in step order, each line written whole with one
 * write(2) on an O_APPEND descriptor, so a reader following the file (or
 * reading it after a kill -9) sees only whole lines. A fresh run and a
 * resume put a new file in place (a temporary renamed over the old log,
 * atomic_write.h): the old log is never written, so a hard-linked copy of
 * it (a `cp -al` backup) keeps its bytes. The first line is
 * {"event":"start",...}; then "train" lines (every step), "eval" and
 * "probe" lines (every eval), "resume" when a session resumes, and a
 * last "done" or "diverged". The log only writes: it never changes what
 * is trained. A failed write warns once on stderr and the run goes on
 * without the log (the run file stays the record). */
#ifndef GATELAB_METRICS_LOG_H
#define GATELAB_METRICS_LOG_H

#include <stddef.h>

#include "config.h"

/* The first bytes of every log, so a later run knows the file as ours. */
#define MLOG_MAGIC "{\"event\":\"start\""

typedef struct {
    int fd; /* -1: no log (not opened, or a write failed) */
    char path[CFG_STR + 16];
} MetricsLog;

/* RUN.h5.jsonl for run file `run` into out; -1 when it does not fit. */
int mlog_path(const char *run, char *out, size_t outlen);

/* Before any work: 0 when the log of `run` may be written (a new path or
 * a log of ours, never a link; outpath.h), else -1 and why. */
int mlog_check(const char *run, char *err, size_t errlen);

/* A fresh run: the log replaced by a new file holding only the start line. */
int mlog_open_fresh(MetricsLog *m, const char *run, const Config *c, char *err, size_t errlen);

/* A session resuming at `step` (the checkpoint's): the lines the lost
 * session wrote past it are dropped (train lines of step >= step, eval
 * and probe lines of step > step, and a torn last line) and a resume line
 * follows, in a new file put in place of the old one. A missing log is
 * started afresh: its start line, then the resume line. */
int mlog_open_resume(MetricsLog *m, const char *run, const Config *c, long long step, char *err,
                     size_t errlen);

/* One line each; no-ops without a log. Non-finite numbers are null. */
void mlog_train(MetricsLog *m, long long step, double loss, double lr, double grad_norm,
                double tokens_per_s, long long tokens, double seconds);
void mlog_eval(MetricsLog *m, long long step, double val_loss, double bpb);
/* f_attn_layer[L]: each layer's F-Attn (mean over heads); the line holds
 * them and their mean. */
void mlog_probe(MetricsLog *m, long long step, const double *f_attn_layer, int L);
/* "done" or "diverged" at step. */
void mlog_end(MetricsLog *m, const char *event, long long step);

void mlog_close(MetricsLog *m);

#endif
