/* train_loop.c: the training loop: progress, eval, probes, checkpoints, resume,
 * divergence and Ctrl-C.
 *
 * Resume is exact because nothing is hidden: a batch is a pure function of
 * (data_seed, step), and a checkpoint holds the parameters, both AdamW
 * moments and the step. Losses after a resume are bit-identical to an
 * unbroken run, at any thread count (trainer.c).
 *
 * Why the run file is only ever written through a copy: HDF5 1.10 files
 * are not crash-safe, and a SIGKILL in the middle of a write can leave one
 * unreadable. So between commits the trainer keeps its new metric rows in
 * memory; a commit copies RUN.h5 to a fresh temporary beside it
 * (atomic_write.h), appends the rows (and the eval and probe) there,
 * closes it, and renames it over RUN.h5; only then
 * is the checkpoint written. A kill at any moment leaves the last
 * committed run file and a checkpoint no newer than it.
 *
 * Beside it the live metrics log RUN.h5.jsonl (metrics_log.h) gets a line
 * per step and per eval as they happen, not at commits; a resume cuts
 * the lines past its checkpoint. It only writes: training is the same
 * with or without it.
 */
#include <math.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "adamw.h"
#include "atomic_write.h"
#include "data.h"
#include "data_files.h"
#include "memplan.h"
#include "metrics_log.h"
#include "probe.h"
#include "protocol_record.h"
#include "runfile.h"
#include "runfile_check.h"
#include "runfile_read.h"
#include "runlock.h"
#include "stop.h"
#include "env.h"
#include "testhook.h"
#include "train_loop.h"
#include "trainer.h"
#include "util.h"

#define EVAL_SEED 0xE7A1ULL /* the same val batches for every run */

/* Train rows logged since the last commit. */
typedef struct {
    long long *step, *tokens;
    double *loss, *lr, *norm, *seconds;
    size_t n, cap;
} Rows;

typedef struct {
    const Config *cfg;
    const TrainOptions *opt;
    TestHooks hooks; /* GATELAB_TEST_* fault injection; none when unset */
    Trainer tr;
    Dataset ds;
    RunFile *rf; /* open only inside a commit */
    Rows rows;
    char tmp_path[ATOMIC_TMP_MAX]; /* the copy a commit edits (atomic_write.h) */
    char *config_text;
    long long step, tokens;
    double seconds; /* training time over all sessions of this run */
    double last_val;
    int resumed;          /* this session continues from a checkpoint */
    MetricsLog mlog;      /* RUN.h5.jsonl */
    double *f_attn;       /* [n_layers]: the last probe's F-Attn per layer */
    ProtocolRecord proto; /* --protocol's file (proto.text NULL: none) */
} Loop;

static void format_eta(char *buf, size_t n, double s) {
    if (!isfinite(s) || s < 0) s = 0;
    long t = (long)(s + 0.5);
    if (t >= 3600) snprintf(buf, n, "%ldh%02ldm", t / 3600, (t / 60) % 60);
    else snprintf(buf, n, "%ldm%02lds", t / 60, t % 60);
}

/* Seconds left at tok_s tokens per second. */
static double eta_seconds(const Loop *lp, double tok_s) {
    double left = (double)(lp->cfg->steps - lp->step) * lp->cfg->batch_size * lp->cfg->seq_len /
                  (tok_s > 0 ? tok_s : 1);
    return isfinite(left) && left > 0 ? left : 0;
}

/* The progress line on stderr, for people. */
static void progress(const Loop *lp, float loss, float lr, double tok_s) {
    char eta[32];
    format_eta(eta, sizeof eta, eta_seconds(lp, tok_s));
    fprintf(stderr, "step %lld/%d | loss %.4f | lr %.2e | %.0f tok/s | ETA %s\n", lp->step,
            lp->cfg->steps, loss, lr, tok_s, eta);
}

/* The progress line on --progress-fd, for programs (train_loop.h). */
static void progress_report(const Loop *lp, double tok_s) {
    char line[96];
    int n = snprintf(line, sizeof line, "progress %lld %d %.0f\n", lp->step, lp->cfg->steps,
                     eta_seconds(lp, tok_s));
    if (n > 0 && write(lp->opt->progress_fd, line, (size_t)n) != n) {
        /* the reader went away: progress is advisory, training goes on */
    }
}

/* ---- buffered train rows ---- */

static int rows_push(Rows *r, long long step, double loss, double lr, double norm, long long tokens,
                     double seconds) {
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 256;
        long long *a = realloc(r->step, cap * sizeof *a), *b = realloc(r->tokens, cap * sizeof *b);
        if (a) r->step = a;
        if (b) r->tokens = b;
        double *c = realloc(r->loss, cap * sizeof *c), *d = realloc(r->lr, cap * sizeof *d);
        if (c) r->loss = c;
        if (d) r->lr = d;
        double *e = realloc(r->norm, cap * sizeof *e), *f = realloc(r->seconds, cap * sizeof *f);
        if (e) r->norm = e;
        if (f) r->seconds = f;
        if (!a || !b || !c || !d || !e || !f) return -1;
        r->cap = cap;
    }
    size_t i = r->n++;
    r->step[i] = step, r->loss[i] = loss, r->lr[i] = lr, r->norm[i] = norm;
    r->tokens[i] = tokens, r->seconds[i] = seconds;
    return 0;
}

static void rows_free(Rows *r) {
    free(r->step), free(r->tokens), free(r->loss), free(r->lr), free(r->norm), free(r->seconds);
    memset(r, 0, sizeof *r);
}

/* ---- commits: copy, append, rename ---- */

static int commit_begin(Loop *lp, char *err, size_t errlen) {
    if (atomic_copy(lp->opt->out_path, lp->tmp_path, sizeof lp->tmp_path, err, errlen) != 0)
        return -1;
    /* the file is valid up to the first step not yet committed (the last
     * checkpoint's): rows a crashed or diverged session left past it go */
    const Rows *r0 = &lp->rows;
    lp->rf = runfile_reopen(lp->tmp_path, r0->n ? r0->step[0] : lp->step, err, errlen);
    if (!lp->rf) {
        atomic_discard(lp->tmp_path);
        return -1;
    }
    const Rows *r = &lp->rows;
    for (size_t i = 0; i < r->n; i++)
        if (runfile_append_train(lp->rf, r->step[i], r->loss[i], r->lr[i], r->norm[i], r->tokens[i],
                                 r->seconds[i], err, errlen) != 0) {
            runfile_close(lp->rf, NULL, 0);
            lp->rf = NULL;
            atomic_discard(lp->tmp_path);
            return -1;
        }
    return 0;
}

/* Close the copy, make it durable, and move it over the run file. */
static int commit_end(Loop *lp, char *err, size_t errlen) {
    int rc = runfile_close(lp->rf, err, errlen);
    lp->rf = NULL;
    if (rc != 0) {
        atomic_discard(lp->tmp_path);
        return -1;
    }
    if (atomic_commit(lp->tmp_path, lp->opt->out_path, 1, err, errlen) != 0) return -1;
    lp->rows.n = 0;
    return 0;
}

static void commit_abort(Loop *lp) {
    if (lp->rf) runfile_close(lp->rf, NULL, 0);
    lp->rf = NULL;
    atomic_discard(lp->tmp_path);
}

/* ---- eval, probe, checkpoint ---- */

/* Mean val loss over eval_batches fixed batches; bits per byte when the
 * data is bytes. A signal stops it between batches (NaN). */
static double evaluate(Loop *lp, double *bpb) {
    Trainer *tr = &lp->tr;
    const Config *c = lp->cfg;
    double sum = 0.0;
    for (int i = 0; i < c->eval_batches; i++) {
        if (stop_requested()) return *bpb = NAN;
        data_batch(&lp->ds, tr->inputs, tr->targets, c->batch_size, c->seq_len, SPLIT_VAL,
                   EVAL_SEED, i);
        sum += trainer_loss(tr, tr->inputs, tr->targets, c->batch_size, c->seq_len);
    }
    double v = c->eval_batches > 0 ? sum / c->eval_batches : NAN;
    double bpt = data_bytes_per_token(&lp->ds);
    *bpb = bpt > 0 ? v / log(2.0) / bpt : NAN;
    return v;
}

/* Inside a commit: append the eval row and write the probe. */
static int eval_and_probe(Loop *lp, char *err, size_t errlen) {
    double bpb;
    double v = evaluate(lp, &bpb);
    if (stop_requested()) return seterr(err, errlen, "eval at step %lld interrupted", lp->step);
    lp->last_val = v;
    /* bits per byte only where a token is a byte (brown, text) */
    if (!lp->opt->quiet && isfinite(bpb))
        fprintf(stderr, "eval step %lld | val_loss %.4f | ppl %.3f | bpb %.4f\n", lp->step, v,
                exp(v), bpb);
    else if (!lp->opt->quiet)
        fprintf(stderr, "eval step %lld | val_loss %.4f | ppl %.3f\n", lp->step, v, exp(v));
    if (runfile_append_eval(lp->rf, lp->step, v, bpb, err, errlen) != 0) return -1;
    mlog_eval(&lp->mlog, lp->step, v, bpb);
    if (probe_run(&lp->tr.model, &lp->tr.shards[0], &lp->ds, lp->rf, lp->step, lp->f_attn, err,
                  errlen) != 0)
        return -1;
    if (lp->cfg->probe_n > 0) mlog_probe(&lp->mlog, lp->step, lp->f_attn, lp->cfg->n_layers);
    return 0;
}

static int save_checkpoint(Loop *lp, char *err, size_t errlen) {
    CheckpointOut c = {lp->step,
                       lp->tokens,
                       lp->seconds,
                       lp->tr.model.params,
                       lp->tr.adam_m,
                       lp->tr.adam_v,
                       lp->tr.model.table.total};
    return checkpoint_save(lp->opt->out_path, &c, lp->config_text, err, errlen);
}

static int write_final(Loop *lp, const char *status, char *err, size_t errlen) {
    const Config *c = lp->cfg;
    double tok_s = lp->seconds > 0 ? (double)lp->tokens / lp->seconds : 0;
    double flops = model_flops_per_token(&lp->tr.model, c->seq_len);
    int rc = runfile_write_params(lp->rf, &lp->tr.model, err, errlen);
    rc |= runfile_set_summary(lp->rf, RS_SUM_STEPS_DONE, (double)lp->step, err, errlen);
    rc |= runfile_set_summary(lp->rf, RS_SUM_TOKENS_PER_SEC, tok_s, err, errlen);
    rc |= runfile_set_summary(lp->rf, RS_SUM_GFLOPS_PER_SEC, tok_s * flops / 1e9, err, errlen);
    rc |= runfile_set_summary(lp->rf, RS_SUM_WALL_SECONDS, lp->seconds, err, errlen);
    rc |= runfile_set_summary(lp->rf, RS_SUM_FINAL_VAL_LOSS, lp->last_val, err, errlen);
    rc |= runfile_set_summary(lp->rf, RS_SUM_DIVERGED_STEP, -1, err, errlen);
    rc |= runfile_set_status(lp->rf, status, err, errlen); /* last: marks the file complete */
    return rc;
}

/* One commit: rows, then optionally eval + probe and the final record;
 * then the checkpoint. */
typedef enum { COMMIT_ROWS = 0, COMMIT_EVAL = 1, COMMIT_FINAL = 2 } CommitKind;

static int commit(Loop *lp, CommitKind kind, char *err, size_t errlen) {
    if (commit_begin(lp, err, errlen) != 0) return -1;
    int rc = 0;
    if (kind >= COMMIT_EVAL) rc = eval_and_probe(lp, err, errlen);
    if (rc == 0 && kind == COMMIT_FINAL && write_final(lp, RS_STATUS_DONE, err, errlen) != 0)
        rc = -1;
    if (rc != 0) {
        commit_abort(lp);
        return -1;
    }
    if (commit_end(lp, err, errlen) != 0) return -1;
    return save_checkpoint(lp, err, errlen);
}

/* ---- start or resume ---- */

/* What a run records as it starts, once: its data files' paths and
 * hashes (data_files.h), the task floor of its val batches (bigram data
 * only) and the protocol it was declared under. */
static int record_start(Loop *lp, RunFile *rf, char *err, size_t errlen) {
    const Config *c = lp->cfg;
    if (data_files_record(rf, c, err, errlen) != 0) return -1;
    double floor = data_task_floor(&lp->ds, c->batch_size, c->seq_len, c->eval_batches, EVAL_SEED);
    if (isfinite(floor) && runfile_set_summary(rf, RS_SUM_TASK_FLOOR, floor, err, errlen) != 0)
        return -1;
    if (!lp->proto.text) return 0;
    const ProtocolRecord *p = &lp->proto;
    RunProtocol rp = {p->text,         p->hash,        p->sweep_file,
                      p->sweep_commit, p->sweep_dirty, p->uncommitted};
    return runfile_write_protocol(rf, &rp, err, errlen);
}

static int open_fresh(Loop *lp, char *err, size_t errlen) {
    /* a stale checkpoint of an older run must never be resumed into this one */
    char ck[CFG_STR + 16];
    snprintf(ck, sizeof ck, "%s.ckpt", lp->opt->out_path);
    RunFile *rf =
        runfile_create(lp->opt->out_path, lp->cfg, &lp->tr.model, lp->opt->force, err, errlen);
    if (!rf) return TRAIN_BADINPUT;
    remove(ck);
    if (record_start(lp, rf, err, errlen) != 0) {
        runfile_close(rf, NULL, 0);
        return TRAIN_FAIL;
    }
    if (runfile_close(rf, err, errlen) != 0) return TRAIN_FAIL;
    /* a checkpoint at step 0, so a kill at any later moment can resume */
    return save_checkpoint(lp, err, errlen) ? TRAIN_FAIL : TRAIN_OK;
}

/* What a resume starts from, before any arithmetic (runfile_check.h): the
 * checkpoint's arrays finite, the run file's /config the config being
 * resumed, and the data files read the bytes it recorded (data_files.h). */
static int resumed_state_ok(Loop *lp, char *err, size_t errlen) {
    const Trainer *tr = &lp->tr;
    size_t n = tr->model.table.total;
    char ck[CFG_STR + 16];
    snprintf(ck, sizeof ck, "%s.ckpt", lp->opt->out_path);
    if (runcheck_finite(ck, "/" RS_G_PARAMS, tr->model.params, n, err, errlen) != 0 ||
        runcheck_finite(ck, "/" RS_CKPT_ADAM_M, tr->adam_m, n, err, errlen) != 0 ||
        runcheck_finite(ck, "/" RS_CKPT_ADAM_V, tr->adam_v, n, err, errlen) != 0)
        return -1;
    RunReader *rr = runread_open(lp->opt->out_path, err, errlen);
    if (!rr) return -1;
    RunConfigDims dims;
    runread_config_dims(rr, &dims);
    DataFiles rec;
    int rc = data_files_load(rr, &rec, err, errlen);
    runread_close(rr);
    Config read = *lp->cfg; /* the files data_open read, as configured */
    if (rc != 0 || data_files_check(&read, &rec, lp->opt->out_path, 0, err, errlen) != 0) return -1;
    return runcheck_config(lp->opt->out_path, &dims, lp->cfg, err, errlen);
}

/* The value of the line s[0..len) after its '=' and blanks; *vl its length;
 * NULL when the line has no '='. */
static const char *line_value(const char *s, size_t len, int *vl) {
    const char *eq = memchr(s, '=', len);
    if (!eq) return NULL;
    const char *v = eq + 1;
    while (v < s + len && *v == ' ') v++;
    *vl = (int)(s + len - v);
    return v;
}

/* The first line where config texts was (the checkpoint's) and now
 * differ, as "KEY = A in the checkpoint, B now" in out[n]. Both are
 * config_to_text's output: the same keys in the same order. */
static void config_difference(const char *was, const char *now, char *out, size_t n) {
    snprintf(out, n, "a line of the config text");
    while (*was || *now) {
        size_t lw = strcspn(was, "\n"), ln = strcspn(now, "\n");
        if (lw != ln || memcmp(was, now, lw)) {
            int kw = 0, kn = 0;
            const char *vw = line_value(was, lw, &kw), *vn = line_value(now, ln, &kn);
            size_t kl = vn ? strcspn(now, " =") : 0;
            if (vw && vn && kl < ln)
                snprintf(out, n, "%.*s = %.*s in the checkpoint, %.*s now", (int)kl, now, kw, vw,
                         kn, vn);
            else
                snprintf(out, n, "'%.*s' in the checkpoint, '%.*s' now", (int)lw, was, (int)ln,
                         now);
            return;
        }
        was += lw + (was[lw] == '\n');
        now += ln + (now[ln] == '\n');
    }
}

static int open_resumed(Loop *lp, char *err, size_t errlen) {
    char *text = NULL;
    Trainer *tr = &lp->tr;
    if (checkpoint_load(lp->opt->out_path, tr->model.params, tr->adam_m, tr->adam_v,
                        tr->model.table.total, &lp->step, &lp->tokens, &lp->seconds, &text, err,
                        errlen) != 0)
        return TRAIN_BADINPUT;
    /* the file's counters index batches and rows: sane or refused */
    if (lp->step < 0 || lp->step > lp->cfg->steps || lp->tokens < 0 || !isfinite(lp->seconds)) {
        free(text);
        return seterr(err, errlen, "%s.ckpt: step %lld is outside 0..%d (corrupt checkpoint)",
                      lp->opt->out_path, lp->step, lp->cfg->steps),
               TRAIN_BADINPUT;
    }
    int same = text && config_text_same(text, lp->config_text);
    char diff[256] = "no config text";
    if (!same && text) config_difference(text, lp->config_text, diff, sizeof diff);
    free(text);
    if (!same)
        return seterr(err, errlen,
                      "%s.ckpt was made with a different config (%s); "
                      "resume with the same config, or start over with --force",
                      lp->opt->out_path, diff),
               TRAIN_BADINPUT;
    if (resumed_state_ok(lp, err, errlen) != 0) return TRAIN_BADINPUT;
    /* check the run file now, so a corrupt one is refused before any work;
     * on a copy, so a refused resume touches nothing */
    if (atomic_copy(lp->opt->out_path, lp->tmp_path, sizeof lp->tmp_path, err, errlen) != 0)
        return TRAIN_FAIL;
    RunFile *rf = runfile_reopen(lp->tmp_path, lp->step, err, errlen);
    if (!rf) {
        atomic_discard(lp->tmp_path);
        return TRAIN_BADINPUT;
    }
    long long rows = runfile_train_rows(rf);
    int closed = runfile_close(rf, err, errlen);
    atomic_discard(lp->tmp_path);
    if (closed != 0) return TRAIN_FAIL;
    /* rows 0..step-1 must all be there: a checkpoint newer than the run
     * file's last commit would leave a gap in the metrics */
    if (rows != lp->step)
        return seterr(err, errlen,
                      "%s.ckpt is at step %lld but %s holds only %lld train "
                      "rows (the checkpoint is newer than the run file); refusing a resume "
                      "with a gap (start over with --force)",
                      lp->opt->out_path, lp->step, lp->opt->out_path, rows),
               TRAIN_BADINPUT;
    if (!lp->opt->quiet) fprintf(stderr, "resuming %s at step %lld\n", lp->opt->out_path, lp->step);
    lp->resumed = 1;
    return TRAIN_OK;
}

/* Before any work: the one output rule (a new path or our own run file,
 * never a link) and the resume rules. The caller holds the run's lock. */
static int preflight(const TrainOptions *o, char *err, size_t errlen) {
    if (runfile_outpath_check(o->out_path, 1, err, errlen) != 0) return TRAIN_BADINPUT;
    if (mlog_check(o->out_path, err, errlen) != 0) return TRAIN_BADINPUT;
    int exists = file_exists(o->out_path);
    char st[32];
    /* a finished run is never resumed, not even with --force: its final
     * checkpoint would redo the last eval and append a duplicate row */
    if (o->resume && exists && runfile_read_status(o->out_path, st, sizeof st) == 0 &&
        !strcmp(st, RS_STATUS_DONE))
        return seterr(err, errlen,
                      "%s is already finished (status done); nothing to resume "
                      "(to train it again from scratch: --force without --resume)",
                      o->out_path),
               TRAIN_BADINPUT;
    if (o->resume && exists && !o->force && !checkpoint_exists(o->out_path))
        return seterr(err, errlen,
                      "%s has no checkpoint to resume from "
                      "(start over with --force)",
                      o->out_path),
               TRAIN_BADINPUT;
    return TRAIN_OK;
}

static int loop_open(Loop *lp, char *err, size_t errlen) {
    const TrainOptions *o = lp->opt;
    if (o->resume && checkpoint_exists(o->out_path) && file_exists(o->out_path))
        return open_resumed(lp, err, errlen);
    return open_fresh(lp, err, errlen);
}

/* ---- the loop ---- */

static int diverged(Loop *lp, float loss, double norm, char *err, size_t errlen) {
    fprintf(stderr,
            "diverged at step %lld (loss %g, grad norm %g): stopping; the last "
            "good checkpoint is kept\n",
            lp->step, loss, norm);
    mlog_end(&lp->mlog, "diverged", lp->step);
    if (commit_begin(lp, err, errlen) != 0) return TRAIN_FAIL;
    int rc = runfile_set_summary(lp->rf, RS_SUM_DIVERGED_STEP, (double)lp->step, err, errlen);
    rc |= runfile_set_summary(lp->rf, RS_SUM_STEPS_DONE, (double)lp->step, err, errlen);
    rc |= runfile_set_status(lp->rf, RS_STATUS_DIVERGED, err, errlen);
    if (rc != 0) {
        commit_abort(lp);
        return TRAIN_FAIL;
    }
    return commit_end(lp, err, errlen) ? TRAIN_FAIL : TRAIN_DIVERGED;
}

static int one_step(Loop *lp, float *loss_out, float *lr_out, double *norm_out) {
    const Config *c = lp->cfg;
    Trainer *tr = &lp->tr;
    double t0 = now_seconds(), norm = 0;
    trainer_extend_at(tr, lp->step); /* context extension: from its step on */
    data_batch(&lp->ds, tr->inputs, tr->targets, c->batch_size, tr->T, SPLIT_TRAIN, c->data_seed,
               lp->step);
    float lr = lr_at_step(c, lp->step);
    testhook_before_step(&lp->hooks, lp->step, tr);
    float loss = trainer_step(tr, tr->inputs, tr->targets, lp->step, &norm);
    loss = testhook_loss(&lp->hooks, lp->step, loss);
    double dt = now_seconds() - t0;
    lp->seconds += dt;
    lp->tokens += (long long)c->batch_size * tr->T;
    *loss_out = loss, *lr_out = lr, *norm_out = norm;
    mlog_train(&lp->mlog, lp->step, loss, lr, norm,
               dt > 0 ? (double)c->batch_size * tr->T / dt : NAN, lp->tokens, lp->seconds);
    return rows_push(&lp->rows, lp->step, loss, lr, norm, lp->tokens, lp->seconds);
}

/* A signal during an eval or probe: that commit was dropped, so the run
 * file and checkpoint stay at the last commit, which --resume continues
 * from (redoing the steps since, bit-identically). */
static int interrupted_in_commit(const Loop *lp) {
    fprintf(stderr,
            "interrupted during the eval at step %lld: the last checkpoint is kept, "
            "resume with --resume\n",
            lp->step);
    return TRAIN_INTERRUPTED;
}

static int run_steps(Loop *lp, char *err, size_t errlen) {
    const Config *c = lp->cfg;
    double t_window = now_seconds(), tok_window = 0;
    while (lp->step < c->steps) {
        if (stop_requested()) {
            fprintf(stderr, "interrupted at step %lld: checkpoint saved, resume with --resume\n",
                    lp->step);
            return commit(lp, COMMIT_ROWS, err, errlen) ? TRAIN_FAIL : TRAIN_INTERRUPTED;
        }
        float loss, lr;
        double norm;
        if (one_step(lp, &loss, &lr, &norm) != 0)
            return seterr(err, errlen, "out of memory logging step %lld", lp->step), TRAIN_FAIL;
        if (!isfinite(loss) || !isfinite(norm)) return diverged(lp, loss, norm, err, errlen);
        testhook_after_step(&lp->hooks, lp->step);
        lp->step++;
        tok_window += (double)c->batch_size * lp->tr.T;
        int logged = lp->step % c->log_every == 0 || lp->step == c->steps;
        if (logged && (!lp->opt->quiet || lp->opt->progress_fd >= 0)) {
            double now = now_seconds();
            if (!lp->opt->quiet) progress(lp, loss, lr, tok_window / (now - t_window));
            if (lp->opt->progress_fd >= 0) progress_report(lp, tok_window / (now - t_window));
            t_window = now, tok_window = 0;
        }
        if (lp->step == c->steps) break;
        int ev = c->eval_every > 0 && lp->step % c->eval_every == 0;
        int ck = c->ckpt_every > 0 && lp->step % c->ckpt_every == 0;
        if ((ev || ck) && commit(lp, ev ? COMMIT_EVAL : COMMIT_ROWS, err, errlen) != 0)
            return stop_requested() ? interrupted_in_commit(lp) : TRAIN_FAIL;
    }
    if (commit(lp, COMMIT_FINAL, err, errlen) == 0) {
        mlog_end(&lp->mlog, "done", lp->step);
        return TRAIN_OK;
    }
    return stop_requested() ? interrupted_in_commit(lp) : TRAIN_FAIL;
}

int train_run(const Config *cfg, const TrainOptions *opt, char *err, size_t errlen) {
    Loop lp;
    memset(&lp, 0, sizeof lp);
    lp.mlog.fd = -1;
    lp.cfg = cfg;
    lp.opt = opt;
    lp.last_val = NAN;
    if (testhook_load(&lp.hooks, err, errlen) != 0) return TRAIN_BADINPUT;
    if (opt->progress_fd >= 0) signal(SIGPIPE, SIG_IGN); /* see the protocol */
    lp.config_text = malloc(1 << 16);
    if (!lp.config_text || config_to_text(cfg, lp.config_text, 1 << 16) != 0) {
        free(lp.config_text);
        return seterr(err, errlen, "cannot serialise the config"), TRAIN_FAIL;
    }
    /* one writer per run file, for the whole run (runlock.h) */
    RunLock lock;
    int rc = TRAIN_BADINPUT;
    if (runlock_acquire(&lock, opt->out_path, err, errlen) != 0) {
        rc = lock.refused ? TRAIN_BADINPUT : TRAIN_FAIL;
        goto out_text;
    }
    rc = preflight(opt, err, errlen);
    if (rc != TRAIN_OK) goto out_lock;
    rc = TRAIN_BADINPUT;
    if (opt->protocol_path && protocol_record_load(opt->protocol_path, &lp.proto, err, errlen))
        goto out_lock;
    MemPlan plan;
    if (memplan_train(cfg, &plan, err, errlen) != 0 ||
        memplan_check(&plan, "this config", err, errlen) != 0)
        goto out_lock;
    if (data_open(&lp.ds, cfg, err, errlen) != 0) goto out_lock;
    rc = TRAIN_FAIL;
    if (trainer_init(&lp.tr, cfg, err, errlen) != 0) goto out_data;
    if (!opt->quiet)
        fprintf(stderr, "%s: %s, %zu params (%zu added by the variant), %d thread(s)\n",
                opt->out_path, cfg->variant, lp.tr.model.table.total,
                model_added_params(&lp.tr.model), lp.tr.n_workers);
    rc = loop_open(&lp, err, errlen);
    if (rc != TRAIN_OK) goto out_trainer;
    lp.f_attn = calloc((size_t)cfg->n_layers, sizeof *lp.f_attn);
    char why[512];
    if (!lp.f_attn ||
        (lp.resumed ? mlog_open_resume(&lp.mlog, opt->out_path, cfg, lp.step, why, sizeof why)
                    : mlog_open_fresh(&lp.mlog, opt->out_path, cfg, why, sizeof why)) != 0)
        fprintf(stderr, "warning: no metrics log: %s; training goes on without it\n",
                lp.f_attn ? why : "out of memory");
    env_note_hooks("gatelab train"); /* the run file records them too */
    StopGuard guard;
    stop_arm(&guard);
    rc = run_steps(&lp, err, errlen);
    stop_disarm(&guard);
out_trainer:
    mlog_close(&lp.mlog);
    free(lp.f_attn);
    trainer_free(&lp.tr);
out_data:
    data_close(&lp.ds);
out_lock:
    protocol_record_free(&lp.proto);
    runlock_release(&lock);
out_text:
    rows_free(&lp.rows);
    free(lp.config_text);
    return rc;
}
