/* test_trainer_sum.c: the training step's gradient sum over the shards
 * (trainer.c) against the same sum written out here, bit for bit.
 *   - a batch of 11 sequences in 5 shards (3, 2, 2, 2, 2 sequences), some
 *     targets not counted and one shard with none counted (weight 0), is
 *     run shard by shard on RunStates of its own; the reference sums their
 *     gradients element by element in shard order, g0 w0 + w1 g1 + ...,
 *     with w = count / total from the targets;
 *   - trainer_step at 1 to 5 threads (each a contiguous run of the shards,
 *     the sum's elements split over the threads) leaves that sum in shard
 *     0's arena and reports the norm of grad_sumsq over it, for two steps
 *     in a row (the second on arenas the first wrote);
 *   - the weights after the steps are the same at every thread count;
 *   - only the first shard of each thread's run (shard 5 t / threads) has
 *     activations, before and after the steps, and memplan_train counts
 *     the arenas the shards hold, byte for byte;
 *   - a forward over 3 sequences (jobs on shards 0, 1, 2: at 2 threads
 *     shard 1 leads a run, but trainer_init gave it no activations) gives
 *     the same loss at every thread count. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adamw.h"
#include "config.h"
#include "config_derive.h"
#include "memplan.h"
#include "model.h"
#include "rng.h"
#include "trainer.h"

#define NB 11
#define NS 5
#define T 6

static void small_config(Config *c, int threads) {
    config_defaults(c);
    char err[256], th[32];
    snprintf(th, sizeof th, "threads=%d", threads);
    const char *sets[] = {"n_layers=2",    "d_model=16", "n_heads=4",     "n_kv_heads=2",
                          "d_ff=24",       "seq_len=6",  "vocab_size=12", "data=bigram",
                          "batch_size=11", "shards=5",   "init_std=0.3",  th};
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
        assert_int_equal(config_set(c, sets[i], err, sizeof err), 0);
}

/* Tokens and targets of batch k: shard 3 (sequences 7 and 8) counts no
 * target, and a few others are -1 or V (not counted either). */
static void make_batch(int k, int V, int *tok, int *tgt) {
    Rng r;
    rng_seed(&r, 7 + (uint64_t)k);
    for (int i = 0; i < NB * T; i++) {
        tok[i] = (int)rng_below(&r, (uint32_t)V);
        tgt[i] = (int)rng_below(&r, (uint32_t)V);
        if (i % 5 == 2) tgt[i] = i % 2 ? -1 : V;
        if (i >= 7 * T && i < 9 * T) tgt[i] = -1;
    }
}

/* The batch's gradient, written out: each shard forward and backward on a
 * state of its own, then per element g0 w0 + w1 g1 + ... in shard order. */
static void reference_sum(const Model *m, const int *tok, const int *tgt, float *ref) {
    const size_t len = m->table.total;
    const int V = m->dims.V;
    float *g[NS], w[NS];
    int count[NS], total = 0, off = 0;
    for (int j = 0; j < NS; j++) {
        const int b = batch_share(NB, NS, j);
        const int *tk = tok + off * T, *tg = tgt + off * T;
        RunState s;
        assert_int_equal(runstate_init(&s, m, b, T), 0);
        model_forward(m, &s, tk, tg, b, T);
        model_backward(m, &s);
        g[j] = malloc(len * sizeof(float));
        memcpy(g[j], s.grads, len * sizeof(float));
        runstate_free(&s);
        count[j] = 0;
        for (int i = 0; i < b * T; i++) count[j] += tg[i] >= 0 && tg[i] < V;
        total += count[j];
        off += b;
    }
    assert_int_equal(count[3], 0);
    for (int j = 0; j < NS; j++) w[j] = (float)count[j] / (float)total;
    for (size_t i = 0; i < len; i++) {
        float x = g[0][i] * w[0];
        for (int j = 1; j < NS; j++) x += w[j] * g[j][i];
        ref[i] = x;
    }
    for (int j = 0; j < NS; j++) free(g[j]);
}

/* The shards that hold activations are those that begin a thread's run,
 * and the memory plan's activations are the bytes their arenas hold. */
static void check_arenas(const Trainer *tr, const Config *cfg, int threads, const char *when) {
    size_t held = 0;
    for (int w = 0; w < NS; w++) {
        int leads = 0;
        for (int t = 0; t < threads; t++) leads |= NS * t / threads == w;
        const RunState *s = &tr->shards[w];
        if ((s->la != NULL) != leads || (s->acts_mem != NULL))
            fail_msg("threads %d, %s: shard %d %s activations", threads, when, w,
                     leads ? "has no" : "has its own");
        held += s->mem_bytes + s->acts_bytes;
    }
    MemPlan p;
    char err[256];
    assert_int_equal(memplan_train(cfg, &p, err, sizeof err), 0);
    if (p.activations != held)
        fail_msg("threads %d: memplan_train counts %zu bytes of activations, the shards hold %zu",
                 threads, p.activations, held);
}

static void test_step_sum(void **state) {
    (void)state;
    Config cfg;
    small_config(&cfg, 1);
    Model m;
    char err[256];
    assert_int_equal(model_init(&m, &cfg, err, sizeof err), 0);
    const size_t len = m.table.total;
    float *ref = malloc(len * sizeof(float)), *params1 = malloc(len * sizeof(float));
    int tok[NB * T], tgt[NB * T];
    float loss1 = 0.0f;
    for (int threads = 1; threads <= NS; threads++) {
        Trainer tr;
        small_config(&cfg, threads);
        assert_int_equal(trainer_init(&tr, &cfg, err, sizeof err), 0);
        assert_int_equal(tr.n_workers, threads);
        check_arenas(&tr, &cfg, threads, "after trainer_init");
        for (int k = 0; k < 2; k++) {
            make_batch(k, m.dims.V, tok, tgt);
            memcpy(m.params, tr.model.params, len * sizeof(float));
            reference_sum(&m, tok, tgt, ref);
            double norm = -1.0;
            trainer_step(&tr, tok, tgt, k, &norm);
            const double want = sqrt(grad_sumsq(0.0, ref, 0, len));
            if (memcmp(tr.shards[0].grads, ref, len * sizeof(float)) != 0 || norm != want)
                fail_msg("threads %d, step %d: the gradient sum or its norm differs from the "
                         "shard-order sum (norm %.9g, want %.9g)",
                         threads, k, norm, want);
        }
        check_arenas(&tr, &cfg, threads, "after two steps");
        const float loss3 = trainer_loss(&tr, tok, tgt, 3, T);
        if (threads == 2 && (!tr.shards[1].la || !tr.shards[1].acts_mem))
            fail_msg("threads 2: shard 1 ran a forward without activations of its own");
        if (threads == 1) {
            memcpy(params1, tr.model.params, len * sizeof(float));
            loss1 = loss3;
        } else if (memcmp(params1, tr.model.params, len * sizeof(float)) != 0 ||
                   memcmp(&loss1, &loss3, sizeof loss3) != 0 || !isfinite(loss3)) {
            fail_msg("threads %d: the weights after two steps or the loss of 3 sequences "
                     "(%.9g, 1 thread: %.9g) differ from 1 thread's",
                     threads, loss3, loss1);
        }
        trainer_free(&tr);
    }
    free(ref);
    free(params1);
    model_free(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_step_sum)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
