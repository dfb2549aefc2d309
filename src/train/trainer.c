/* trainer.c: one training step, data-parallel over worker threads.
 *
 * Why threads over the batch and not BLAS threads: our projections are
 * (B*T x 128) x (128 x 128) products, too small to split well. Each thread
 * runs single-threaded products on its shards of the batch instead.
 *
 * The batch is cut into a fixed number of shards (config_shards: the key
 * shards, at most the batch), whatever the thread count; each shard's
 * forward and backward is the same arithmetic on whichever thread runs it,
 * and the shards' gradients are summed in shard order, element by element.
 * So a run's bits do not depend on the thread count, nor on timing; they
 * depend on the shard count, as on any key.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "adamw.h"
#include "config_derive.h"
#include "fpmode.h"
#include "opprof.h"
#include "ops.h"
#include "parallel.h"
#include "trainer.h"
#include "util.h"

/* OpenBLAS's own thread count; declared here to avoid depending on which
 * cblas.h flavour is installed. */
void openblas_set_num_threads(int n);

int trainer_shard_leads(const Config *cfg, int w) {
    const int ns = config_shards(cfg), nt = config_workers(cfg);
    for (int t = 0; t < nt; t++)
        if ((int)parallel_split((size_t)ns, t, nt) == w) return 1;
    return 0;
}

int trainer_init(Trainer *tr, const Config *cfg, char *err, size_t errlen) {
    memset(tr, 0, sizeof *tr);
    tr->cfg = *cfg;
    int nw = config_workers(cfg), ns = config_shards(cfg);
    openblas_set_num_threads(1);
    /* the step's threads start from this one and inherit its mode */
    fp_flush_subnormals(cfg->flush_subnormals);
    if (model_init(&tr->model, cfg, err, errlen) != 0) return -1;
    tr->n_workers = nw;
    tr->n_shards = ns;
    tr->shards = calloc((size_t)ns, sizeof *tr->shards);
    tr->share = calloc((size_t)ns, sizeof *tr->share);
    const int maxT = config_max_len(cfg);
    size_t n = tr->model.table.total, bt = (size_t)cfg->batch_size * maxT;
    tr->T = cfg->seq_len;
    tr->adam_m = falloc(n);
    tr->adam_v = falloc(n);
    tr->inputs = calloc(bt, sizeof(int));
    tr->targets = calloc(bt, sizeof(int));
    tr->packs = calloc(1, sizeof *tr->packs);
    if (!tr->packs || !tr->shards || !tr->share || !tr->adam_m || !tr->adam_v || !tr->inputs ||
        !tr->targets) {
        trainer_free(tr);
        return seterr(err, errlen, "out of memory for the optimiser state");
    }
    for (int w = 0; w < ns; w++) {
        tr->share[w] = batch_share(cfg->batch_size, ns, w);
        RunState *s = &tr->shards[w];
        if ((trainer_shard_leads(cfg, w) ? runstate_init : runstate_init_lent)(
                s, &tr->model, tr->share[w], maxT) != 0) {
            trainer_free(tr);
            return seterr(err, errlen, "out of memory for activations (batch %d x %d)",
                          cfg->batch_size, maxT);
        }
    }
    return 0;
}

void trainer_free(Trainer *tr) {
    if (tr->shards)
        for (int w = 0; w < tr->n_shards; w++) runstate_free(&tr->shards[w]);
    free(tr->shards);
    free(tr->share);
    free(tr->adam_m);
    free(tr->adam_v);
    free(tr->inputs);
    free(tr->targets);
    if (tr->packs) gemm_packs_free(tr->packs);
    free(tr->packs);
    if (tr->model.params) model_free(&tr->model);
    memset(tr, 0, sizeof *tr);
}

/* ---- running the workers ---- */

typedef struct {
    const Model *m;
    RunState *s;
    const int *inputs, *targets;
    int B, T, backward;
} Job;

static void job_run(Job *j) {
    model_forward(j->m, j->s, j->inputs, j->targets, j->B, j->T);
    if (j->backward) model_backward(j->m, j->s); /* writes the shard's whole gradient */
}

/* Thread t of nt runs the t-th contiguous run of the jobs, the later ones
 * on the first one's activations (runstate_lend: each then finds the
 * memory it writes in cache, where the one before left it). */
typedef struct {
    Job *jobs;
    int n;
} Jobs;

static void jobs_part(void *p, int t, int nt) {
    const Jobs *js = p;
    const int i0 = (int)parallel_split((size_t)js->n, t, nt),
              i1 = (int)parallel_split((size_t)js->n, t + 1, nt);
    for (int i = i0; i < i1; i++) {
        Job *j = &js->jobs[i];
        RunActs own;
        int lent = i > i0 && runstate_lend(j->s, js->jobs[i0].s, j->B, &own) == 0;
        job_run(j);
        if (lent) runstate_unlend(j->s, &own);
    }
}

static void packs_part(void *p, int t, int nt) { gemm_packs_fill(p, t, nt); }

/* Gives activations of its own to each job that jobs_part cannot run on
 * its thread's first job's: that first one and those it cannot hold (none
 * in a training step, whose leads trainer_init gave them). 0, or -1 when
 * out of memory. */
static int jobs_acts(const Model *m, Job *jobs, int n, int nt) {
    for (int t = 0; t < nt; t++) {
        const int i0 = (int)parallel_split((size_t)n, t, nt),
                  i1 = (int)parallel_split((size_t)n, t + 1, nt);
        if (runstate_acts(jobs[i0].s, m) != 0) return -1;
        for (int i = i0 + 1; i < i1; i++)
            if (!runstate_lends(jobs[i0].s, jobs[i].s, jobs[i].B) &&
                runstate_acts(jobs[i].s, m) != 0)
                return -1;
    }
    return 0;
}

/* Run jobs[0..n) on up to the trainer's threads (the caller is one). The
 * forward's weights are packed first, over the same threads, and the jobs
 * read them through tr->model.packs, which holds them only while the jobs
 * run: the weights change between batches (the optimizer, a load). 0, or
 * -1 (nothing run) when a job's activations found no memory. */
static int run_jobs(Trainer *tr, Job *jobs, int n) {
    int threads = tr->n_workers, nt = threads < 1 ? 1 : threads > n ? n : threads;
    if (nt < 1) return 0; /* no jobs */
    if (jobs_acts(&tr->model, jobs, n, nt) != 0) return -1;
    GemmPacks *ps = tr->packs;
    if (ps) {
        gemm_packs_begin(ps);
        if (model_pack_forward(&tr->model, ps) == 0 && gemm_packs_commit(ps) == 0 && ps->n > 0) {
            parallel_team(nt < ps->n ? nt : ps->n, packs_part, ps);
            tr->model.packs = ps;
        }
    }
    Jobs js = {jobs, n};
    parallel_team(nt, jobs_part, &js);
    tr->model.packs = NULL;
    return 0;
}

/* Cut B sequences into the shards (capacity permitting): one job each. */
static int make_jobs(Trainer *tr, Job *jobs, const int *inputs, const int *targets, int B, int T,
                     int backward) {
    int n = 0, off = 0;
    for (int w = 0; w < tr->n_shards && off < B; w++) {
        int share = batch_share(B, tr->n_shards, w);
        if (share > tr->shards[w].B) share = tr->shards[w].B;
        if (share == 0) continue;
        size_t o = (size_t)off * T;
        jobs[n++] =
            (Job){&tr->model, &tr->shards[w], inputs + o, targets ? targets + o : NULL, share,
                  T,          backward};
        off += share;
    }
    return n;
}

/* Mean loss of the jobs, weighted by their counted positions. */
static float jobs_loss(const Job *jobs, int n, long long *count) {
    double sum = 0.0;
    long long c = 0;
    for (int i = 0; i < n; i++) {
        sum += (double)jobs[i].s->loss * jobs[i].s->loss_count;
        c += jobs[i].s->loss_count;
    }
    if (count) *count = c;
    return c ? (float)(sum / (double)c) : 0.0f;
}

/* shards[0].grads = sum_w (count_w / total) * grads_w: the gradient of the
 * mean loss over the whole batch. Each element is summed over the shards
 * in their order, so splitting the elements over threads keeps the bits.
 * Thread 0 also adds its range's squares to the gradient norm's sum
 * (grad_sumsq: element order), which the step then continues over the
 * other threads' ranges. */
typedef struct {
    const Job *jobs;
    int n;
    long long total;
    size_t len;   /* the arena's elements */
    size_t split; /* thread 0's range [0, split), whose squares it summed */
    double sumsq; /* that sum */
} Reduce;

static void reduce_part(void *ctx, int t, int nt) {
    Reduce *r = ctx;
    size_t i0 = parallel_split(r->len, t, nt), i1 = parallel_split(r->len, t + 1, nt);
    int prof = opprof_enter(OPPROF_REDUCE);
    float *g[CONFIG_MAX_SHARDS], w[CONFIG_MAX_SHARDS];
    for (int j = 0; j < r->n; j++) {
        g[j] = r->jobs[j].s->grads;
        w[j] = (float)r->jobs[j].s->loss_count / (float)r->total;
    }
    double s = grad_sum_shards(g, w, r->n, i0, i1, t == 0, 0.0);
    if (t == 0) r->split = i1, r->sumsq = s;
    opprof_leave(prof);
}

/* The gradient norm and AdamW in one region: thread 0 continues the norm's
 * chain over the other threads' ranges (element order) and publishes the
 * clip factor; every thread then updates its part of the arena, each
 * gradient times that factor. The others wait for it inside the region,
 * still running, so the update starts with no wake-up; only they wait,
 * never thread 0, so a region whose parts run one after the other (a
 * thread that could not be started) finishes too. */
typedef struct {
    Trainer *tr;
    const float *g;
    const Reduce *r;
    float loss, lr;
    long long step;
    double norm;
    float gscale;
    int keep;         /* the loss or the norm is not finite: no update */
    atomic_int ready; /* norm, gscale and keep are set */
} Finish;

static void finish_norm(Finish *f) {
    int prof = opprof_enter(OPPROF_OPTIMIZER);
    f->norm = sqrt(grad_sumsq(f->r->sumsq, f->g, f->r->split, f->r->len));
    f->keep = !isfinite(f->loss) || !isfinite(f->norm);
    f->gscale = grad_clip_scale(f->norm, f->tr->cfg.grad_clip);
    opprof_leave(prof);
    atomic_store_explicit(&f->ready, 1, memory_order_release);
}

static void finish_wait(Finish *f) {
    int prof = opprof_enter(OPPROF_SYNC);
    parallel_wait_set(&f->ready);
    opprof_leave(prof);
}

static void finish_part(void *ctx, int t, int nt) {
    Finish *f = ctx;
    if (t == 0) finish_norm(f);
    else finish_wait(f);
    if (f->keep) return;
    const size_t i0 = parallel_split(f->r->len, t, nt), i1 = parallel_split(f->r->len, t + 1, nt);
    Trainer *tr = f->tr;
    int prof = opprof_enter(OPPROF_OPTIMIZER);
    adamw_update_range(tr->model.params, f->g, f->gscale, tr->adam_m, tr->adam_v, &tr->model.table,
                       &tr->cfg, f->lr, f->step, i0, i1);
    opprof_leave(prof);
}

float trainer_step(Trainer *tr, const int *inputs, const int *targets, long long step,
                   double *grad_norm) {
    Job jobs[CONFIG_MAX_SHARDS];
    int n = make_jobs(tr, jobs, inputs, targets, tr->cfg.batch_size, tr->T, 1);
    if (run_jobs(tr, jobs, n) != 0) {
        if (grad_norm) *grad_norm = NAN;
        return NAN;
    }
    long long total = 0;
    float loss = jobs_loss(jobs, n, &total);
    if (total == 0) total = 1;
    size_t len = tr->model.table.total;
    Reduce r = {jobs, n, total, len, 0, 0.0};
    int nt = (size_t)tr->n_workers < len ? tr->n_workers : len ? (int)len : 1;
    if (n > 1) parallel_team(nt, reduce_part, &r); /* a single share already holds the mean */
    float *g = jobs[0].s->grads;
    if (tr->poison_grad)
        g[0] = NAN, tr->poison_grad = 0, r.split = 0, r.sumsq = 0.0; /* testhook.h */
    Finish f = {tr, g, &r, loss, lr_at_step(&tr->cfg, step), step, 0.0, 1.0f, 0, 0};
    parallel_team(nt, finish_part, &f);
    if (grad_norm) *grad_norm = f.norm;
    return loss;
}

void trainer_extend_at(Trainer *tr, long long step) {
    const Config *c = &tr->cfg;
    if (step < config_extend_step(c) || tr->T == config_max_len(c)) return;
    Config ext = *c;
    config_extended(&ext);
    tr->T = ext.seq_len;
    tr->model.cfg.rope_base = ext.rope_base; /* the shards' tables follow (model.c) */
}

float trainer_loss(Trainer *tr, const int *inputs, const int *targets, int B, int T) {
    Job jobs[CONFIG_MAX_SHARDS];
    int n = make_jobs(tr, jobs, inputs, targets, B, T, 0);
    if (run_jobs(tr, jobs, n) != 0) return NAN;
    return jobs_loss(jobs, n, NULL);
}
