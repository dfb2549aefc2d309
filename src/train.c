/* train.c: the training loop: progress, eval, probes, checkpoints, resume,
 * divergence and Ctrl-C.
 *
 * Resume is exact because nothing is hidden: a batch is a pure function of
 * (data_seed, step), and a checkpoint holds the parameters, both AdamW
 * moments and the step. Losses after a resume are bit-identical to an
 * unbroken run with the same thread count.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adamw.h"
#include "data.h"
#include "probe.h"
#include "runfile.h"
#include "train.h"
#include "util.h"

#define EVAL_SEED 0xE7A1ULL /* the same val batches for every run */

static volatile sig_atomic_t interrupted = 0;

static void on_signal(int sig) {
    (void)sig;
    interrupted = 1;
}

typedef struct {
    const Config *cfg;
    const TrainOptions *opt;
    Trainer tr;
    Dataset ds;
    RunFile *rf;
    char *config_text;
    long long step, tokens;
    double seconds;     /* training time over all sessions of this run */
    double last_val;
} Loop;

static void format_eta(char *buf, size_t n, double s) {
    if (!isfinite(s) || s < 0) s = 0;
    long t = (long)(s + 0.5);
    if (t >= 3600) snprintf(buf, n, "%ldh%02ldm", t / 3600, (t / 60) % 60);
    else snprintf(buf, n, "%ldm%02lds", t / 60, t % 60);
}

static void progress(const Loop *lp, float loss, float lr, double tok_s) {
    char eta[32];
    double left = (double)(lp->cfg->steps - lp->step) * lp->cfg->batch_size *
                  lp->cfg->seq_len / (tok_s > 0 ? tok_s : 1);
    format_eta(eta, sizeof eta, left);
    fprintf(stderr, "step %lld/%d | loss %.4f | lr %.2e | %.0f tok/s | ETA %s\n", lp->step,
            lp->cfg->steps, loss, lr, tok_s, eta);
}

/* Mean val loss over eval_batches fixed batches; bits per byte when the
 * data is bytes. */
static double evaluate(Loop *lp, double *bpb) {
    Trainer *tr = &lp->tr;
    const Config *c = lp->cfg;
    double sum = 0.0;
    for (int i = 0; i < c->eval_batches; i++) {
        data_batch(&lp->ds, tr->inputs, tr->targets, c->batch_size, c->seq_len, SPLIT_VAL,
                   EVAL_SEED, i);
        sum += trainer_loss(tr, tr->inputs, tr->targets, c->batch_size, c->seq_len);
    }
    double v = c->eval_batches > 0 ? sum / c->eval_batches : NAN;
    double bpt = data_bytes_per_token(&lp->ds);
    *bpb = bpt > 0 ? v / log(2.0) / bpt : NAN;
    return v;
}

static int eval_and_probe(Loop *lp, char *err, size_t errlen) {
    double bpb;
    double v = evaluate(lp, &bpb);
    lp->last_val = v;
    if (!lp->opt->quiet)
        fprintf(stderr, "eval step %lld | val_loss %.4f | ppl %.3f | bpb %.4f\n", lp->step, v,
                exp(v), bpb);
    if (runfile_append_eval(lp->rf, lp->step, v, bpb) != 0)
        return seterr(err, errlen, "%s", runfile_error());
    return probe_run(&lp->tr.model, &lp->tr.workers[0], &lp->ds, lp->rf, lp->step, err, errlen);
}

static int save_checkpoint(Loop *lp, char *err, size_t errlen) {
    CheckpointOut c = {lp->step, lp->tokens, lp->seconds, lp->tr.model.params, lp->tr.adam_m,
                       lp->tr.adam_v, lp->tr.model.table.total};
    return checkpoint_save(lp->opt->out_path, &c, lp->config_text, err, errlen);
}

/* ---- start or resume ---- */

static int open_fresh(Loop *lp, char *err, size_t errlen) {
    lp->rf = runfile_create(lp->opt->out_path, lp->cfg, &lp->tr.model, lp->opt->force, err,
                            errlen);
    if (!lp->rf) return TRAIN_BADINPUT;
    /* a stale checkpoint of an older run must never be resumed into this one */
    char ck[CFG_STR + 16];
    snprintf(ck, sizeof ck, "%s.ckpt", lp->opt->out_path);
    remove(ck);
    return TRAIN_OK;
}

static int open_resumed(Loop *lp, char *err, size_t errlen) {
    char *text = NULL;
    Trainer *tr = &lp->tr;
    if (checkpoint_load(lp->opt->out_path, tr->model.params, tr->adam_m, tr->adam_v,
                        tr->model.table.total, &lp->step, &lp->tokens, &lp->seconds, &text, err,
                        errlen) != 0)
        return TRAIN_BADINPUT;
    int same = text && !strcmp(text, lp->config_text);
    free(text);
    if (!same)
        return seterr(err, errlen, "%s.ckpt was made with a different config; "
                      "resume with the same config, or start over with --force",
                      lp->opt->out_path), TRAIN_BADINPUT;
    lp->rf = runfile_reopen(lp->opt->out_path, lp->step - 1, err, errlen);
    if (!lp->rf) return TRAIN_BADINPUT;
    if (!lp->opt->quiet)
        fprintf(stderr, "resuming %s at step %lld\n", lp->opt->out_path, lp->step);
    return TRAIN_OK;
}

static int loop_open(Loop *lp, char *err, size_t errlen) {
    const TrainOptions *o = lp->opt;
    int exists = file_exists(o->out_path), ck = checkpoint_exists(o->out_path);
    if (o->resume && ck) return open_resumed(lp, err, errlen);
    if (o->resume && exists && !o->force)
        return seterr(err, errlen, "%s has no checkpoint to resume from "
                      "(start over with --force)", o->out_path), TRAIN_BADINPUT;
    return open_fresh(lp, err, errlen);
}

/* ---- the loop ---- */

static int finish(Loop *lp, const char *status, char *err, size_t errlen) {
    const Config *c = lp->cfg;
    double tok_s = lp->seconds > 0 ? (double)lp->tokens / lp->seconds : 0;
    double flops = model_flops_per_token(&lp->tr.model, c->seq_len);
    int rc = runfile_write_params(lp->rf, &lp->tr.model);
    rc |= runfile_set_summary(lp->rf, "steps_done", (double)lp->step);
    rc |= runfile_set_summary(lp->rf, "tokens_per_sec", tok_s);
    rc |= runfile_set_summary(lp->rf, "gflops_per_sec", tok_s * flops / 1e9);
    rc |= runfile_set_summary(lp->rf, "wall_seconds", lp->seconds);
    rc |= runfile_set_summary(lp->rf, "final_val_loss", lp->last_val);
    rc |= runfile_set_status(lp->rf, status); /* last: marks the file complete */
    if (rc != 0) return seterr(err, errlen, "%s", runfile_error()), TRAIN_FAIL;
    return TRAIN_OK;
}

static int diverged(Loop *lp, float loss, double norm, char *err, size_t errlen) {
    fprintf(stderr, "diverged at step %lld (loss %g, grad norm %g): stopping; the last "
            "checkpoint is kept\n", lp->step, loss, norm);
    runfile_set_summary(lp->rf, "diverged_step", (double)lp->step);
    runfile_set_status(lp->rf, "diverged");
    (void)err, (void)errlen;
    return TRAIN_DIVERGED;
}

static int run_steps(Loop *lp, char *err, size_t errlen) {
    const Config *c = lp->cfg;
    Trainer *tr = &lp->tr;
    const long long per_step = (long long)c->batch_size * c->seq_len;
    double t_window = now_seconds(), tok_window = 0;
    for (; lp->step < c->steps; ) {
        if (interrupted) {
            fprintf(stderr, "interrupted at step %lld: checkpoint saved, resume with --resume\n",
                    lp->step);
            return save_checkpoint(lp, err, errlen) ? TRAIN_FAIL : TRAIN_INTERRUPTED;
        }
        double t0 = now_seconds(), norm = 0;
        data_batch(&lp->ds, tr->inputs, tr->targets, c->batch_size, c->seq_len, SPLIT_TRAIN,
                   c->data_seed, lp->step);
        float lr = lr_at_step(c, lp->step);
        float loss = trainer_step(tr, tr->inputs, tr->targets, lp->step, &norm);
        if (lp->step == lp->opt->nan_at_step) loss = NAN;
        double dt = now_seconds() - t0;
        lp->seconds += dt;
        lp->tokens += per_step;
        tok_window += per_step;
        if (runfile_append_train(lp->rf, lp->step, loss, lr, norm, lp->tokens, lp->seconds))
            return seterr(err, errlen, "%s", runfile_error()), TRAIN_FAIL;
        if (!isfinite(loss) || !isfinite(norm)) return diverged(lp, loss, norm, err, errlen);
        lp->step++;
        if (!lp->opt->quiet && (lp->step % c->log_every == 0 || lp->step == c->steps)) {
            double now = now_seconds();
            progress(lp, loss, lr, tok_window / (now - t_window));
            t_window = now, tok_window = 0;
        }
        if (c->eval_every > 0 && lp->step % c->eval_every == 0 && lp->step < c->steps)
            if (eval_and_probe(lp, err, errlen)) return TRAIN_FAIL;
        if (c->ckpt_every > 0 && lp->step % c->ckpt_every == 0 && lp->step < c->steps)
            if (save_checkpoint(lp, err, errlen)) return TRAIN_FAIL;
    }
    if (eval_and_probe(lp, err, errlen)) return TRAIN_FAIL;
    if (save_checkpoint(lp, err, errlen)) return TRAIN_FAIL;
    return finish(lp, "done", err, errlen);
}

int train_run(const Config *cfg, const TrainOptions *opt, char *err,
              size_t errlen) {
    Loop lp;
    memset(&lp, 0, sizeof lp);
    lp.cfg = cfg;
    lp.opt = opt;
    lp.last_val = NAN;
    lp.config_text = malloc(1 << 16);
    if (!lp.config_text || config_to_text(cfg, lp.config_text, 1 << 16) != 0) {
        free(lp.config_text);
        return seterr(err, errlen, "cannot serialise the config"), TRAIN_FAIL;
    }
    int rc = TRAIN_BADINPUT;
    if (data_open(&lp.ds, cfg, err, errlen) != 0) goto out_text;
    rc = TRAIN_FAIL;
    if (trainer_init(&lp.tr, cfg, err, errlen) != 0) goto out_data;
    if (!opt->quiet)
        fprintf(stderr, "%s: %s, %zu params (%zu added by the variant), %d thread(s)\n",
                opt->out_path, cfg->variant, lp.tr.model.table.total,
                model_added_params(&lp.tr.model), lp.tr.n_workers);
    rc = loop_open(&lp, err, errlen);
    if (rc != TRAIN_OK) goto out_trainer;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    rc = run_steps(&lp, err, errlen);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (runfile_close(lp.rf) != 0 && rc == TRAIN_OK) {
        seterr(err, errlen, "%s", runfile_error());
        rc = TRAIN_FAIL;
    }
out_trainer:
    trainer_free(&lp.tr);
out_data:
    data_close(&lp.ds);
out_text:
    free(lp.config_text);
    return rc;
}
