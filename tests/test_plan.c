/* test_plan.c: every memory estimate is what is allocated (plan.h).
 *
 * The binary is linked with malloc, calloc, realloc, posix_memalign,
 * aligned_alloc and free wrapped (tests/meson.build: -Wl,--wrap), so it
 * sees every allocation gatelab's own code makes (not the shared
 * libraries': OpenBLAS, HDF5, GSL). Around one call it adds up the bytes
 * allocated (an estimate is the sum of a plan's takes, which bounds the
 * peak); for several shapes that sum must equal the estimate made before
 * the call:
 *   - plan.h itself: a layout's count pass equals what its arena and heap
 *     hand-out passes take, saturating rather than wrapping;
 *   - runstate_init: runstate_bytes (its arena) plus the per-layer
 *     descriptors, for several catalog variants and shapes;
 *   - probe_collect (a trained model's probe): probe_collect_bytes;
 *   - probe_grad_norms and probe_gate_weight_norms: probe_grad_bytes;
 *   - an HF checkpoint's first forward: hf_model_pass_bytes's buffers,
 *     F32 (the LM head mapped) and BF16 (converted in chunks), and
 *     inspect's probe pass: those buffers and the reducer's plan.
 * A buffer allocated beside a plan, or a temporary allocated in a loop,
 * makes the sum larger than the estimate and fails here. (The probe reducer's own plan:
 * test_probe_acc.c.) */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "hf_model.h"
#include "hf_pass.h"
#include "model.h"
#include "plan.h"
#include "probe.h"
#include "probe_grad.h"
#include "runfile_read.h"
#include "testutil.h"

/* ---- the allocation tracker ---- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
void __real_free(void *p);

#define SLOTS (1u << 20) /* open addressing; tracking stops being exact past this */
static struct {
    void *p;
    size_t n;
} live_tab[SLOTS];
static int tracking;
static size_t live, peak, total, nalloc;

static size_t slot_of(const void *p) {
    uintptr_t h = (uintptr_t)p;
    h ^= h >> 17, h *= 0x9E3779B97F4A7C15ull, h ^= h >> 29;
    return (size_t)(h & (SLOTS - 1));
}

static void note_alloc(void *p, size_t n) {
    if (!tracking || !p) return;
    size_t i = slot_of(p);
    while (live_tab[i].p) i = (i + 1) & (SLOTS - 1);
    live_tab[i].p = p, live_tab[i].n = n;
    live += n, total += n, nalloc++;
    if (live > peak) peak = live;
}

/* Forget p (allocated while tracking); its bytes are no longer live. */
static void note_free(void *p) {
    if (!p) return;
    size_t i = slot_of(p);
    while (live_tab[i].p && live_tab[i].p != p) i = (i + 1) & (SLOTS - 1);
    if (!live_tab[i].p) return; /* allocated before tracking began */
    live -= live_tab[i].n;
    /* delete and re-place the cluster after i */
    live_tab[i].p = NULL;
    for (size_t j = (i + 1) & (SLOTS - 1); live_tab[j].p; j = (j + 1) & (SLOTS - 1)) {
        void *q = live_tab[j].p;
        size_t n = live_tab[j].n, k = slot_of(q);
        live_tab[j].p = NULL;
        while (live_tab[k].p) k = (k + 1) & (SLOTS - 1);
        live_tab[k].p = q, live_tab[k].n = n;
    }
}

void *__wrap_malloc(size_t n) {
    void *p = __real_malloc(n);
    note_alloc(p, n);
    return p;
}
void *__wrap_calloc(size_t n, size_t size) {
    void *p = __real_calloc(n, size);
    note_alloc(p, n * size);
    return p;
}
void *__wrap_realloc(void *p, size_t n) {
    void *q = __real_realloc(p, n);
    if (q || !n) note_free(p);
    note_alloc(q, n);
    return q;
}
int __wrap_posix_memalign(void **p, size_t align, size_t n) {
    int rc = __real_posix_memalign(p, align, n);
    if (rc == 0) note_alloc(*p, n);
    return rc;
}
void *__wrap_aligned_alloc(size_t align, size_t n) {
    void *p = __real_aligned_alloc(align, n);
    note_alloc(p, n);
    return p;
}
void __wrap_free(void *p) {
    if (tracking) note_free(p);
    __real_free(p);
}

static void track_begin(void) {
    memset(live_tab, 0, sizeof live_tab);
    live = peak = total = nalloc = 0;
    tracking = 1;
}

/* The bytes allocated since track_begin (all of them; the peak live is
 * at most this). */
static size_t track_end(void) {
    tracking = 0;
    assert_true(peak <= total);
    return total;
}

/* ---- plan.h ---- */

typedef struct {
    float *a, *b;
    double *c;
    int *d;
    size_t n;
} Toy;

static void toy_plan(Plan *p, void *ctx) {
    Toy *t = ctx;
    t->a = plan_floats(p, t->n);
    t->b = plan_floats(p, 1);
    t->c = plan_take(p, 3 * t->n, sizeof *t->c);
    t->d = plan_take(p, 0, sizeof *t->d);
}

static void test_plan_passes(void **st) {
    (void)st;
    const size_t ns[] = {0, 1, 15, 16, 17, 1000, 100000, 300000}; /* the last two 2.8, 8.4 MB */
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
        Toy t = {.n = ns[i]};
        const size_t want = plan_count(toy_plan, &t);
        size_t bytes = 0;
        track_begin();
        unsigned char *block = plan_build(toy_plan, &t, &bytes);
        const size_t got = track_end();
        assert_non_null(block);
        assert_int_equal(bytes, want);
        assert_int_equal(got, want ? want : 64); /* zalloc_aligned's least block */
        /* each slice 64-byte aligned, inside the block, zeroed */
        assert_int_equal((uintptr_t)t.a % PLAN_ALIGN, 0);
        assert_int_equal((uintptr_t)t.c % PLAN_ALIGN, 0);
        assert_true((unsigned char *)t.c + 3 * t.n * sizeof *t.c <= block + bytes);
        for (size_t k = 0; k < 3 * t.n; k++) assert_true(t.c[k] == 0.0);
        /* a block of 2 MiB or more on a 2 MiB boundary, the huge-page hint's unit */
        if (want >= (size_t)2 << 20) assert_int_equal((uintptr_t)block % ((size_t)2 << 20), 0);
        free(block);

        /* the heap kind: exact bytes, one allocation a take */
        Plan c = plan_counter(PLAN_HEAP), h = plan_heap();
        toy_plan(&c, &t);
        track_begin();
        toy_plan(&h, &t);
        const size_t hgot = track_end();
        assert_false(h.failed);
        assert_int_equal(h.used, c.used);
        assert_int_equal(hgot, c.used);
        assert_int_equal(c.used, (ns[i] + 1) * sizeof(float) + 3 * ns[i] * sizeof(double));
        assert_null(t.d);
        free(t.a), free(t.b), free(t.c);
    }
    /* a count saturates, never wraps */
    Plan c = plan_counter(PLAN_ARENA);
    assert_null(plan_take(&c, SIZE_MAX / 2, 4));
    assert_int_equal(c.used, PLAN_TOO_MUCH);
    plan_floats(&c, 10);
    assert_int_equal(c.used, PLAN_TOO_MUCH);
    Plan h = plan_heap();
    assert_null(plan_take(&h, SIZE_MAX / 2, 4));
    assert_true(h.failed);
}

/* ---- the trained model: RunState and probe ---- */

static void small_config(Config *c, const char *variant, const char *const *sets, int nsets) {
    char err[256];
    config_defaults(c);
    const char *base[] = {"n_layers=2", "d_model=16",  "n_heads=4",       "n_kv_heads=2", "d_ff=24",
                          "seq_len=8",  "data=bigram", "bigram_vocab=12", "probe_n=3"};
    for (size_t i = 0; i < sizeof base / sizeof *base; i++)
        assert_int_equal(config_set(c, base[i], err, sizeof err), 0);
    if (config_apply_variant(c, variant, err, sizeof err) != 0) fail_msg("%s: %s", variant, err);
    for (int i = 0; i < nsets; i++) assert_int_equal(config_set(c, sets[i], err, sizeof err), 0);
    config_resolve(c);
    if (config_validate(c, err, sizeof err) != 0) fail_msg("%s: %s", variant, err);
}

/* Variants that lay out different buffers: plain, each gate site, the
 * slot normalisers, sink and register tokens, the remedies, post-norm,
 * gated norm. */
static const char *const VARIANTS[] = {
    "baseline", "g1-elem",   "g2-elem", "g5-elem", "sink-token", "registers", "kv-bias",
    "ssmax",    "diff-attn", "fox",     "xsa",     "gated-norm", "softpick",  "stickbreak",
};
#define NVARIANTS (sizeof VARIANTS / sizeof *VARIANTS)

/* The variant's config when the catalog has it (1), else 0. */
static int variant_config(Config *c, const char *id, const char *const *sets, int nsets) {
    int known = 0;
    for (int i = 0; variant_id_at(i); i++) known |= !strcmp(variant_id_at(i), id);
    if (!known) return 0;
    char err[256];
    config_defaults(c);
    const char *base[] = {"n_layers=2", "d_model=16",  "n_heads=4",       "n_kv_heads=2", "d_ff=24",
                          "seq_len=8",  "data=bigram", "bigram_vocab=12", "probe_n=3"};
    for (size_t i = 0; i < sizeof base / sizeof *base; i++)
        assert_int_equal(config_set(c, base[i], err, sizeof err), 0);
    if (config_apply_variant(c, id, err, sizeof err) != 0) fail_msg("%s: %s", id, err);
    for (int i = 0; i < nsets; i++) assert_int_equal(config_set(c, sets[i], err, sizeof err), 0);
    config_resolve(c);
    return config_validate(c, err, sizeof err) == 0; /* a combination it refuses: none */
}

static void test_runstate_bytes(void **st) {
    (void)st;
    const int shapes[][2] = {{1, 8}, {2, 5}, {3, 8}};
    const char *post[] = {"norm_place=post"};
    int tried = 0;
    for (size_t v = 0; v < NVARIANTS; v++)
        for (int with_post = 0; with_post < 2; with_post++) {
            Config c;
            if (!variant_config(&c, VARIANTS[v], post, with_post)) continue;
            Model m;
            char err[256];
            if (model_init(&m, &c, err, sizeof err) != 0) fail_msg("%s: %s", VARIANTS[v], err);
            for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
                const int B = shapes[k][0], T = shapes[k][1];
                const size_t want = runstate_bytes(&m, B, T);
                RunState s;
                track_begin();
                assert_int_equal(runstate_init(&s, &m, B, T), 0);
                const size_t got = track_end();
                if (s.mem_bytes != want)
                    fail_msg("%s%s B=%d T=%d: arena %zu bytes, runstate_bytes %zu", VARIANTS[v],
                             with_post ? " post" : "", B, T, s.mem_bytes, want);
                /* beside the arena only the descriptors: no buffer that
                 * grows with B or T */
                if (got < want || got - want > 16384)
                    fail_msg("%s B=%d T=%d: allocated %zu bytes, the plan %zu", VARIANTS[v], B, T,
                             got, want);
                runstate_free(&s);
            }
            model_free(&m);
            tried++;
        }
    assert_true(tried >= 10);
}

static void test_probe_bytes(void **st) {
    (void)st;
    const int shapes[][3] = {{3, 8, 2}, {1, 5, 4}, {5, 8, 2}}; /* N, T, capacity B */
    int tried = 0;
    for (size_t v = 0; v < NVARIANTS; v++) {
        Config c;
        if (!variant_config(&c, VARIANTS[v], NULL, 0)) continue;
        Model m;
        char err[256];
        if (model_init(&m, &c, err, sizeof err) != 0) fail_msg("%s: %s", VARIANTS[v], err);
        for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
            const int N = shapes[k][0], T = shapes[k][1], B = shapes[k][2];
            RunState s;
            assert_int_equal(runstate_init(&s, &m, B, 8), 0);
            int *tok = calloc((size_t)N * T, sizeof *tok),
                *tgt = calloc((size_t)N * T, sizeof *tgt);
            for (int i = 0; i < N * T; i++)
                tok[i] = (i * 7 + 3) % c.vocab_size, tgt[i] = (i * 5 + 1) % c.vocab_size;

            /* probe_collect: its plans' hand-out, all live at once */
            size_t given = 0;
            ProbeInput in = {.tokens = tok, .N = N, .T = T, .given = &given};
            ProbeRecord p;
            const size_t want = probe_collect_bytes(&m, N, T);
            track_begin();
            if (probe_collect(&m, &s, &in, &p, NULL, err, sizeof err) != 0)
                fail_msg("%s: %s", VARIANTS[v], err);
            const size_t got = track_end();
            if (got != want || given != want)
                fail_msg("%s N=%d T=%d: probe_collect allocated %zu bytes (its plans %zu), "
                         "probe_collect_bytes %zu",
                         VARIANTS[v], N, T, got, given, want);
            runread_probe_free(&p);

            /* the training-time measures */
            const size_t gwant = probe_grad_bytes(&m, N, T, B);
            int groups;
            track_begin();
            double *g = probe_grad_norms(&m, &s, tok, tgt, N, T, err, sizeof err);
            double *w = probe_gate_weight_norms(&m, &groups);
            const size_t ggot = track_end();
            assert_non_null(g);
            if (ggot != gwant)
                fail_msg("%s N=%d T=%d B=%d: the gradient measures allocated %zu bytes, "
                         "probe_grad_bytes %zu",
                         VARIANTS[v], N, T, B, ggot, gwant);
            free(g), free(w);
            /* probe_run's whole: the parts and its tokens, targets and the
             * record's copy of the targets */
            assert_int_equal(probe_bytes(&m, N, T, B),
                             want + gwant + 3 * (size_t)N * T * sizeof(int));
            free(tok), free(tgt);
            runstate_free(&s);
        }
        model_free(&m);
        tried++;
    }
    assert_true(tried >= 10);
    Config c;
    small_config(&c, "baseline", NULL, 0);
    Model m;
    char err[256];
    assert_int_equal(model_shape(&m, &c, err, sizeof err), 0);
    assert_int_equal(probe_bytes(&m, 0, 8, 2), 0);
    assert_int_equal(probe_collect_bytes(&m, 0, 8), 0);
    model_free(&m);
}

/* ---- an HF checkpoint's forward ---- */

static void hf_case(const char *name) {
    char dir[2048], err[512] = "";
    snprintf(dir, sizeof dir, "%s/tests/reference/hf/%s", tu_src(), name);
    const int shapes[][3] = {{1, 6, 6}, {2, 5, 3}, {3, 4, 0}}; /* B, T, M */
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        const int B = shapes[k][0], T = shapes[k][1], M = shapes[k][2];
        HfModel *m = NULL;
        if (hf_model_open(&m, dir, 1, err, sizeof err) < 0) fail_msg("%s: %s", name, err);
        const HfArch *a = hf_model_arch(m);
        int32_t ids[3 * 6];
        for (int i = 0; i < B * T; i++) ids[i] = (int32_t)((i * 37 + 5) % a->V);
        size_t wb, bufs, pb;
        hf_model_pass_bytes(m, 1, B, T, M, &wb, &bufs, &pb);
        /* one window also runs the LM head (converted in chunks from BF16) */
        float *lg = B == 1 ? malloc((size_t)T * a->V * sizeof *lg) : NULL;
        HfRun run = {.B = B, .M = M, .logits = lg};
        track_begin();
        if (hf_model_forward(m, ids, T, &run, err, sizeof err) < 0) fail_msg("%s: %s", name, err);
        const size_t got = track_end();
        if (got != bufs || hf_model_buffer_bytes(m) != bufs)
            fail_msg("%s B=%d T=%d M=%d: the forward allocated %zu bytes (its block %zu), "
                     "hf_model_pass_bytes %zu",
                     name, B, T, M, got, hf_model_buffer_bytes(m), bufs);
        free(lg);
        hf_model_close(m);
    }
    /* inspect's pass (hf_pass, no targets): the buffers of its one-window
     * forward and the reducer's plan, what cmd_inspect.c's plan_check
     * adds up besides the windows' ids */
    for (int M = 2; M <= 6; M += 4) {
        const int N = 2, T = 6;
        HfModel *m = NULL;
        if (hf_model_open(&m, dir, 1, err, sizeof err) < 0) fail_msg("%s: %s", name, err);
        int32_t ids[2 * 6];
        for (int i = 0; i < N * T; i++) ids[i] = (int32_t)((i * 11 + 2) % hf_model_arch(m)->V);
        size_t wb, bufs, pb;
        hf_model_pass_bytes(m, N, 1, T, M, &wb, &bufs, &pb);
        HfPassIn in = {.ids = ids, .N = N, .T = T, .M = M};
        HfPassOut po;
        ProbeRecord rec;
        track_begin();
        if (hf_pass(m, &in, &rec, &po, err, sizeof err) < 0) fail_msg("%s: %s", name, err);
        const size_t got = track_end();
        if (got != bufs + pb)
            fail_msg("%s M=%d: the pass allocated %zu bytes, hf_model_pass_bytes %zu + %zu", name,
                     M, got, bufs, pb);
        runread_probe_free(&rec);
        hf_model_close(m);
    }
}

static void test_hf_buffers(void **st) {
    (void)st;
    const char *names[] = {"llama-f32", "gpt2-f32",   "qwen3-headwise-f32",
                           "neox-f32",  "qwen2-bf16", "llama-bf16-sharded"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) hf_case(names[i]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_passes),
        cmocka_unit_test(test_runstate_bytes),
        cmocka_unit_test(test_probe_bytes),
        cmocka_unit_test(test_hf_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
