/* test_hf_inspect.c: the Hugging Face forward pass against PyTorch
 * (tests/reference/make_hf_fixtures.py writes tests/reference/hf/<name>/:
 * a snapshot plus expected.h5 of hf_forwards.py's forward), bad
 * checkpoints giving one-line errors, and an inspected checkpoint run
 * again: eval against PyTorch, stream, the memory plan and the refusals
 * of a rerun. The run file gatelab inspect writes, its bad input and
 * interventions on it are test_hf_inspect_cli.c.
 *
 * Every snapshot under tests/reference/hf (whichever script wrote it):
 * logits, attention maps (full, M = T), first-token column,
 * gate scores (gated Qwen3) and block outputs within 1e-4 (absolute plus
 * relative). BF16 fixtures are held to the same bound: the reference runs
 * in float32 on the BF16-rounded weights, as gatelab does. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>

#include "hf_model.h"
#include "intervention.h"
#include "forward_open.h"
#include "hf_inspect_fixture.h"
#include "lceval.h"
#include "metrics.h"
#include "testutil.h"

static int by_name(const void *x, const void *y) {
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Every snapshot under tests/reference/hf with an expected.h5, whichever
 * script wrote it (the directory is the list), into names[cap] sorted
 * (malloc'd): their count. */
static size_t fixture_names(char **names, size_t cap) {
    char root[2048], path[4200];
    snprintf(root, sizeof root, "%s/tests/reference/hf", tu_src());
    DIR *d = opendir(root);
    assert_non_null(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        snprintf(path, sizeof path, "%s/%s/expected.h5", root, e->d_name);
        if (e->d_name[0] != '.' && access(path, R_OK) == 0) {
            assert_true(n < cap);
            assert_non_null(names[n++] = strdup(e->d_name));
        }
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    assert_true(n >= 40); /* the committed snapshots (tests/reference/README.md) */
    return n;
}

static void test_fixtures(void **s) {
    (void)s;
    char *names[256];
    const size_t n = fixture_names(names, 256);
    for (size_t i = 0; i < n; i++) {
        hf_check_fixture(names[i]);
        free(names[i]);
    }
}

/* Maps kept for M < T are the top-left block of the full maps. */
typedef struct {
    int M, T, H, n;
    float *maps, *cols;
} Part;
static void collect_part(void *ctx, const ProbeLayer *o) {
    Part *p = ctx;
    if (o->layer) return;
    memcpy(p->maps, o->maps, (size_t)o->H * o->M * o->M * 4);
    memcpy(p->cols, o->first_col, (size_t)o->H * o->T * 4);
}
static void collect_full(void *ctx, const ProbeLayer *o) {
    Part *p = ctx;
    if (o->layer) return;
    memcpy(p->maps, o->maps, (size_t)o->H * o->M * o->M * 4);
}

static void test_truncated_maps(void **s) {
    (void)s;
    char dir[2048], err[512];
    snprintf(dir, sizeof dir, "%s/tests/reference/hf/qwen3-headwise-f32", tu_src());
    HfModel *m;
    assert_int_equal(hf_model_open(&m, dir, 1, err, sizeof err), 0);
    const int T = 9, M = 4, H = hf_model_arch(m)->H;
    int32_t ids[9] = {3, 1, 4, 1, 5, 9, 2, 6, 5};
    Part full = {T, T, H, 0, calloc((size_t)H * T * T, 4), NULL};
    Part part = {M, T, H, 0, calloc((size_t)H * M * M, 4), calloc((size_t)H * T, 4)};
    assert_int_equal(hf_model_forward(m, ids, T, &(HfRun){.M = T, .fn = collect_full, .ctx = &full},
                                      err, sizeof err),
                     0);
    assert_int_equal(hf_model_forward(m, ids, T, &(HfRun){.M = M, .fn = collect_part, .ctx = &part},
                                      err, sizeof err),
                     0);
    for (int h = 0; h < H; h++)
        for (int t = 0; t < T; t++) {
            const float *row = full.maps + ((size_t)h * T + t) * T;
            assert_true(part.cols[h * T + t] == row[0]);
            for (int k = 0; t < M && k < M; k++)
                assert_true(part.maps[((size_t)h * M + t) * M + k] == row[k]);
        }
    free(full.maps), free(part.maps), free(part.cols);
    hf_model_close(m);
}

/* ---- bad checkpoints ---- */

/* A safetensors file from a header string and data size. */
static void write_st(const char *path, const char *header, uint64_t hlen_claim, size_t data) {
    size_t hl = strlen(header);
    if (!hlen_claim) hlen_claim = hl; /* 0: the true length */
    uint8_t *b = calloc(8 + hl + data + 1, 1);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(hlen_claim >> (8 * i));
    memcpy(b + 8, header, hl);
    tu_write_file(path, b, 8 + hl + data);
    free(b);
}

static const char *CFG =
    "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 32, \"num_hidden_layers\": 2,"
    " \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"intermediate_size\": %d,"
    " \"vocab_size\": 128, \"rms_norm_eps\": 1e-6, \"rope_theta\": 10000.0}";

/* A snapshot dir: config (printf'd with ff) + the llama-f32 weights, or
 * the given safetensors file. Returns the dir. */
static const char *snapshot(int ff, const char *arch) {
    const char *d = tu_tmpdir();
    char path[2048], cfg[1024];
    snprintf(cfg, sizeof cfg, CFG, ff);
    if (arch) {
        char *p = strstr(cfg, "LlamaForCausalLM");
        char rest[1024];
        snprintf(rest, sizeof rest, "%s", p + strlen("LlamaForCausalLM"));
        snprintf(p, sizeof cfg - (size_t)(p - cfg), "%s%s", arch, rest);
    }
    snprintf(path, sizeof path, "%s/config.json", d);
    tu_write_file(path, cfg, strlen(cfg));
    return d;
}

static void copy_weights(const char *d, size_t keep) {
    char src[2048], dst[2048];
    snprintf(src, sizeof src, "%s/tests/reference/hf/llama-f32/model.safetensors", tu_src());
    snprintf(dst, sizeof dst, "%s/model.safetensors", d);
    size_t n;
    char *b = tu_slurp(src, &n);
    assert_non_null(b);
    tu_write_file(dst, b, keep && keep < n ? keep : n);
    free(b);
}

static void expect_error(const char *d, const char *needle) {
    HfModel *m = NULL;
    char err[512] = "";
    int rc = hf_model_open(&m, d, 1, err, sizeof err);
    if (rc == 0) fail_msg("%s: accepted, expected an error with '%s'", d, needle);
    assert_null(m);
    if (!strstr(err, needle)) fail_msg("error '%s' does not mention '%s'", err, needle);
    assert_null(strchr(err, '\n'));
    printf("  refused: %s\n", err);
}

static void test_bad_checkpoints(void **s) {
    (void)s;
    char path[2048];
    const char *d = snapshot(64, NULL);
    copy_weights(d, 5000); /* truncated */
    expect_error(d, "run past the end of the file");
    copy_weights(d, 5); /* shorter than the length field */
    expect_error(d, "truncated");

    d = snapshot(64, NULL);
    snprintf(path, sizeof path, "%s/model.safetensors", d);
    write_st(path, "{}", (uint64_t)1 << 60, 0);
    expect_error(d, "absurd header length");
    write_st(path, "{}", 4000, 0);
    expect_error(d, "truncated: header of 4000 bytes");
    write_st(path, "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 0, 8);
    expect_error(d, "run past the end");
    write_st(path,
             "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
             "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}",
             0, 16);
    expect_error(d, "overlap");
    write_st(path, "{\"a\":{\"dtype\":\"Q4\",\"shape\":[4],\"data_offsets\":[0,16]}}", 0, 16);
    expect_error(d, "unknown dtype 'Q4'");
    write_st(path, "{\"a\":{\"dtype\":\"F32\",\"shape\":[5],\"data_offsets\":[0,16]}}", 0, 16);
    expect_error(d, "16 bytes for 5 elements");
    write_st(path, "{\"a\":{\"dtype\":\"F32\",\"shape\":[-4],\"data_offsets\":[0,16]}}", 0, 16);
    expect_error(d, "shape[0]");
    write_st(path, "{\"a\": nonsense", 0, 0);
    expect_error(d, "header is not a JSON object");
    write_st(path, "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 0, 16);
    expect_error(d, "model.embed_tokens.weight: missing from the checkpoint");

    d = snapshot(65, NULL); /* config disagrees with the shapes */
    copy_weights(d, 0);
    expect_error(
        d, "model.layers.0.mlp.gate_proj.weight: shape [64,32], but config.json implies [65,32]");
    d = snapshot(64, "FooForCausalLM");
    copy_weights(d, 0);
    expect_error(d, "unknown architecture 'FooForCausalLM'");
    d = snapshot(64, NULL);
    copy_weights(d, 0);
    HfModel *m;
    char err[512];
    assert_int_equal(hf_model_open(&m, d, 1, err, sizeof err), 0); /* the good case */
    int32_t bad[2] = {5, 128};
    assert_int_equal(hf_model_forward(m, bad, 2, &(HfRun){.M = 2}, err, sizeof err), -1);
    assert_non_null(strstr(err, "token id 128 at position 1"));
    hf_model_close(m);
}

/* A sharded index naming a tensor that is not in its shard. */
static void test_bad_index(void **s) {
    (void)s;
    const char *d = snapshot(64, NULL);
    char path[2048];
    snprintf(path, sizeof path, "%s/model-00001-of-00001.safetensors", d);
    write_st(path, "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 0, 16);
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", d);
    const char *idx = "{\"weight_map\": {\"a\": \"model-00001-of-00001.safetensors\","
                      " \"b\": \"model-00001-of-00001.safetensors\"}}";
    tu_write_file(path, idx, strlen(idx));
    expect_error(d, "tensor 'b' is not in model-00001-of-00001.safetensors");
    const char *esc = "{\"weight_map\": {\"a\": \"../x.safetensors\"}}";
    tu_write_file(path, esc, strlen(esc));
    expect_error(d, "is not a file name in the snapshot");
}

/* abs_median (histogram, then quickselect) against the sorted definition. */
static int cmp_f(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}
static void test_median(void **s) {
    (void)s;
    unsigned r = 12345;
    for (size_t n = 1; n < 300; n += 7) {
        float x[300], y[300], scratch[300];
        for (size_t i = 0; i < n; i++) {
            r = r * 1103515245u + 12345u;
            x[i] = (float)((int)(r >> 16) % 41 - 20) * 0.25f; /* many ties, both signs */
            y[i] = fabsf(x[i]);
        }
        qsort(y, n, sizeof *y, cmp_f);
        double want = n % 2 ? y[n / 2] : 0.5 * ((double)y[n / 2 - 1] + y[n / 2]);
        assert_true(abs_median(x, n, scratch) == want);
    }
    /* magnitudes over 40 octaves, so the two middle values often sit in
     * different histogram bins (abs_median ranks by bins first) */
    for (size_t n = 2; n < 300; n += 5) {
        float x[300], y[300], scratch[300];
        for (size_t i = 0; i < n; i++) {
            r = r * 1103515245u + 12345u;
            x[i] = ldexpf(1.0f + (float)(r >> 24) / 256.0f, (int)(r >> 8) % 41 - 20);
            if (r & 1) x[i] = -x[i];
            y[i] = fabsf(x[i]);
        }
        qsort(y, n, sizeof *y, cmp_f);
        double want = n % 2 ? y[n / 2] : 0.5 * ((double)y[n / 2 - 1] + y[n / 2]);
        assert_true(abs_median(x, n, scratch) == want);
    }
    const float two[] = {-1.0f, 4.0f}; /* rank 0 alone in a lower bin */
    float sc[2];
    assert_true(abs_median(two, 2, sc) == 2.5);
}

/* ---- B windows in one forward ---- */

/* What a pass keeps: each layer's first columns [B, H, T] and block
 * outputs [B, T, d], then the logits [B, T, V]. */
typedef struct {
    int B, T, V, H;
    float *col, *hid, *lg;
} Kept;

/* A layer's first columns [B, H, T] at the model's H (the heads the
 * layer lacks left 0) and block outputs. */
static void keep_layer(void *ctx, const ProbeLayer *o) {
    Kept *k = ctx;
    const size_t nc = (size_t)o->H * o->T, nh = (size_t)k->B * o->T * o->d;
    for (int b = 0; b < k->B; b++)
        memcpy(k->col + ((size_t)o->layer * k->B + b) * k->H * o->T, o->first_col + b * nc,
               nc * sizeof(float));
    memcpy(k->hid + (size_t)o->layer * nh, o->hidden, nh * sizeof(float));
}

static int keep_logits(void *ctx, int b, const float *logits, char *err, size_t errlen) {
    Kept *k = ctx;
    (void)err, (void)errlen;
    memcpy(k->lg + (size_t)b * k->T * k->V, logits, (size_t)k->T * k->V * sizeof(float));
    return 0;
}

static void kept_alloc(Kept *k, const HfArch *a, int B, int T) {
    *k = (Kept){B,
                T,
                a->V,
                a->H,
                calloc((size_t)a->L * B * a->H * T, 4),
                calloc((size_t)a->L * B * T * a->d, 4),
                calloc((size_t)B * T * a->V, 4)};
    assert_true(k->col && k->hid && k->lg);
}

static void kept_free(Kept *k) { free(k->col), free(k->hid), free(k->lg); }

/* got[n] bit for bit against want[n]. */
static void same_bits(const char *name, const char *what, int w, const float *got,
                      const float *want, size_t n) {
    if (memcmp(got, want, n * sizeof(float)) == 0) return;
    size_t i = 0;
    while (got[i] == want[i] || (isnan(got[i]) && isnan(want[i]))) i++;
    fail_msg("%s %s, window %d: entry %zu is %.9g among the windows, %.9g alone", name, what, w, i,
             got[i], want[i]);
}

/* One checkpoint: B windows as one forward against each alone, plain and
 * under an intervention (streaming window, gates-mean or bos-mean):
 * logits, first columns and block outputs the same bits; the buffers
 * what hf_model_pass_bytes plans. */
static void check_batched(const char *name, int threads) {
    enum { B = 3, T = 12 };
    char dir[2048], err[512] = "";
    snprintf(dir, sizeof dir, "%s/tests/reference/hf/%s", tu_src(), name);
    HfModel *m = NULL;
    if (hf_model_open(&m, dir, threads, err, sizeof err) < 0) fail_msg("%s: %s", name, err);
    const HfArch *a = hf_model_arch(m);
    int32_t ids[B * T];
    for (int i = 0; i < B * T; i++) ids[i] = (int32_t)((i * 37 + (i / T) * 11 + 5) % a->V);
    Intervention iv = {
        .kind = hf_model_gate_channels(m) ? IV_GATES_MEAN : IV_BOS_MEAN, .window = 5, .keep = 1};
    const size_t L = (size_t)a->L, nc = (size_t)a->H * T, nh = (size_t)T * a->d,
                 nl = (size_t)T * a->V;
    for (int k = 0; k < 2; k++) {
        const Intervention *ivk = k ? &iv : NULL;
        Kept all, one;
        kept_alloc(&all, a, B, T);
        kept_alloc(&one, a, 1, T);
        HfRun run = {.B = B,
                     .iv = ivk,
                     .fn = keep_layer,
                     .ctx = &all,
                     .logits = one.lg,
                     .logits_fn = keep_logits};
        if (hf_model_forward(m, ids, T, &run, err, sizeof err) < 0) fail_msg("%s: %s", name, err);
        size_t wb, bufs, pb;
        hf_model_pass_bytes(m, 1, B, T, 0, &wb, &bufs, &pb);
        assert_int_equal(hf_model_buffer_bytes(m), bufs);
        for (int w = 0; w < B; w++) {
            run = (HfRun){.iv = ivk, .fn = keep_layer, .ctx = &one, .logits = one.lg};
            if (hf_model_forward(m, ids + w * T, T, &run, err, sizeof err) < 0)
                fail_msg("%s: %s", name, err);
            same_bits(name, "logits", w, all.lg + w * nl, one.lg, nl);
            for (size_t l = 0; l < L; l++) {
                same_bits(name, "first column", w, all.col + (l * B + w) * nc, one.col + l * nc,
                          nc);
                same_bits(name, "block output", w, all.hid + (l * B + w) * nh, one.hid + l * nh,
                          nh);
            }
        }
        hf_model_pass_bytes(m, 1, 1, T, 0, &wb, &bufs, &pb);
        assert_int_equal(hf_model_buffer_bytes(m), bufs);
        kept_free(&all), kept_free(&one);
    }
    /* the logits of several windows go through the callback */
    float lg[T * 256];
    assert_true((size_t)a->V <= 256);
    assert_int_equal(hf_model_forward(m, ids, T, &(HfRun){.B = 2, .logits = lg}, err, sizeof err),
                     -1);
    hf_model_close(m);
}

static void test_batched_windows(void **s) {
    (void)s;
    char *names[256];
    const size_t n = fixture_names(names, 256);
    for (size_t i = 0; i < n; i++) {
        check_batched(names[i], 1 + (int)(i % 3));
        free(names[i]);
    }
}

/* ---- an inspected checkpoint run again ---- */

/* eval on an inspected checkpoint: at the window's own length the loss of
 * every prediction and the first-token share equal those of PyTorch's
 * logits and maps (expected.h5). */
static void test_eval_checkpoint(void **s) {
    (void)s;
    char fix[2048], path[2100], ids[2048], run[2048], lg_path[2048], err[512];
    const char *d = tu_tmpdir();
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/qwen3-elementwise-f32-sharded", tu_src());
    snprintf(path, sizeof path, "%s/expected.h5", fix);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    size_t nt, nl, na;
    int32_t *tok = tu_h5_read_opt(f, "tokens", H5T_NATIVE_INT32, 4, &nt);
    float *lg = tu_h5_read_opt(f, "logits", H5T_NATIVE_FLOAT, 4, &nl);
    float *att = tu_h5_read_opt(f, "attention", H5T_NATIVE_FLOAT, 4, &na);
    H5Fclose(f);
    const int T = (int)nt, V = (int)(nl / nt), LH = (int)(na / (nt * nt));
    double loss = 0.0, share = 0.0;
    for (int t = 0; t + 1 < T; t++) {
        const float *row = lg + (size_t)t * V;
        double mx = row[0], z = 0.0;
        for (int v = 1; v < V; v++) mx = fmax(mx, row[v]);
        for (int v = 0; v < V; v++) z += exp(row[v] - mx);
        loss += log(z) + mx - row[tok[t + 1]];
    }
    loss /= T - 1;
    for (int lh = 0; lh < LH; lh++)
        for (int t = 1; t < T; t++) share += att[((size_t)lh * T + t) * T] / (T - 1) / LH;
    snprintf(ids, sizeof ids, "%s/ids.txt", d);
    snprintf(run, sizeof run, "%s/run.h5", d);
    snprintf(lg_path, sizeof lg_path, "%s/log", d);
    hf_write_tokens(ids, tok, T, 1);
    assert_int_equal(tu_run(lg_path, "inspect %s --tokens %s --out %s --force -q", fix, ids, run),
                     0);
    LcEvalOpts o = {.lengths = {T}, .n_lengths = 1, .batches = 1, .batch_size = 1};
    LcEvalResult r;
    ForwardOpen fo = {.model = fix, .threads = 2};
    Forward *fw = forward_open(run, &fo, err, sizeof err);
    if (!fw) fail_msg("%s", err);
    if (lceval_run(fw, &o, &r, err, sizeof err) < 0) fail_msg("%s", err);
    forward_close(fw);
    assert_true(fabs(r.val_loss - loss) < HF_TOL);
    assert_true(fabs(r.first_share - share) < HF_TOL);
    assert_int_equal(r.n_seqs, 1);
    lceval_result_free(&r);
    /* 1x is the window's own length here: naming it twice would be refused */
    assert_int_equal(tu_run(lg_path, "eval %s --lengths 1x --batches 1 --batch-size 1", run), 0);
    f = H5Fopen(run, H5F_ACC_RDONLY, H5P_DEFAULT);
    snprintf(path, sizeof path, "lceval/plain/L_%d", T);
    assert_true(H5Lexists(f, "lceval", H5P_DEFAULT) > 0 && H5Lexists(f, path, H5P_DEFAULT) > 0);
    H5Fclose(f);
    assert_int_equal(tu_run(lg_path, "eval %s --lengths %d --batch-size 2", run, T),
                     2); /* 1 window */
    free(tok), free(lg), free(att);
}

/* The losses of B windows of an inspected checkpoint: one forward of all
 * B gives each window's per-token losses and first columns the bits of
 * the window alone, and the mean over them all; its memory plan counts
 * the B windows' buffers (hf_model_pass_bytes), one window's logits and
 * the ids. */
static void test_losses_batched(void **s) {
    (void)s;
    enum { B = 3, T = 16, NB = 2 };
    char fix[2048], ids[2048], run[2048], lg_path[2048], err[512];
    const char *d = tu_tmpdir();
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/qwen3-headwise-f32", tu_src());
    snprintf(ids, sizeof ids, "%s/ids.txt", d);
    snprintf(run, sizeof run, "%s/run.h5", d);
    snprintf(lg_path, sizeof lg_path, "%s/log", d);
    FILE *fp = fopen(ids, "w");
    assert_non_null(fp);
    for (int l = 0; l < B * NB; l++)
        for (int t = 0; t < T; t++)
            fprintf(fp, "%d%c", (l * 29 + t * 13 + 3) % 97, t + 1 < T ? ' ' : '\n');
    fclose(fp);
    assert_int_equal(tu_run(lg_path, "inspect %s --tokens %s --out %s --force -q", fix, ids, run),
                     0);
    ForwardOpen fo = {.threads = 2};
    Forward *fw = forward_open(run, &fo, err, sizeof err);
    if (!fw) fail_msg("%s", err);
    const int L = fw->info.L, H = fw->info.H, V = fw->info.V;
    HfModel *m = NULL;
    if (hf_model_open(&m, fix, 2, err, sizeof err) < 0) fail_msg("%s", err);
    for (int b = 1; b <= B; b += B - 1) {
        MemPlan p;
        size_t wb, bufs, pb;
        assert_int_equal(fw->ops->plan(fw, b, T, 0, 0, &p, err, sizeof err), 0);
        hf_model_pass_bytes(m, 1, b, T, 0, &wb, &bufs, &pb);
        assert_int_equal(p.activations, bufs + (size_t)T * V * sizeof(float) +
                                            (size_t)T * b * 3 * sizeof(int32_t));
        assert_int_equal(p.params, wb);
    }
    hf_model_close(m);
    int in[B * T], tg[B * T];
    float tl[B * T], tl1[T], *cols = calloc((size_t)L * B * H * T, 4),
                             *cols1 = calloc((size_t)L * H * T, 4);
    double mean, mean1, sum = 0.0;
    assert_int_equal(fw->ops->prepare(fw, B, T, 1.0, err, sizeof err), 0);
    assert_int_equal(fw->ops->windows(fw, T, B, NB, 1, in, tg, err, sizeof err), 0);
    if (fw->ops->losses(fw, in, tg, B, T, NULL, tl, &mean, cols, err, sizeof err) != 0)
        fail_msg("%s", err);
    for (int b = 0; b < B; b++) {
        if (fw->ops->losses(fw, in + b * T, tg + b * T, 1, T, NULL, tl1, &mean1, cols1, err,
                            sizeof err) != 0)
            fail_msg("%s", err);
        assert_memory_equal(tl + b * T, tl1, sizeof tl1);
        for (int l = 0; l < L; l++)
            assert_memory_equal(cols + ((size_t)l * B + b) * H * T, cols1 + (size_t)l * H * T,
                                (size_t)H * T * sizeof(float));
        sum += mean1 / B; /* T - 1 targets each */
    }
    assert_true(fabs(mean - sum) < 1e-12);
    assert_int_equal(fw->ops->losses(fw, in, tg, B + 1, T, NULL, tl, &mean, NULL, err, sizeof err),
                     -1);
    free(cols), free(cols1);
    forward_close(fw);
    tu_rmtree(d);
}

/* inspect's memory plan: a limit below what the pass needs is refused
 * before the pass, in one line naming the bytes (exit 2, no run file); the
 * same windows under the machine's own limit run. */
static void test_inspect_memory_plan(void **s) {
    (void)s;
    char fix[2048], ids[2048], run[2048], lg_path[2048];
    const char *d = tu_tmpdir();
    const int32_t tok[16] = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8};
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/llama-f32", tu_src());
    snprintf(ids, sizeof ids, "%s/ids.txt", d);
    snprintf(run, sizeof run, "%s/run.h5", d);
    snprintf(lg_path, sizeof lg_path, "%s/log", d);
    hf_write_tokens(ids, tok, 16, 2);
    setenv("GATELAB_MEM_LIMIT", "1000", 1);
    int rc = tu_run(lg_path, "inspect %s --tokens %s --out %s -q", fix, ids, run);
    unsetenv("GATELAB_MEM_LIMIT");
    assert_int_equal(rc, 2);
    tu_assert_one_line(lg_path, "gatelab inspect: inspect needs", "over the memory limit of 1000");
    assert_int_not_equal(access(run, F_OK), 0);
    assert_int_equal(tu_run(lg_path, "inspect %s --tokens %s --out %s -q", fix, ids, run), 0);
    tu_rmtree(d);
}

/* Streaming on an inspected checkpoint: its recorded token windows, every
 * setting stored; keep >= window refused. */
static void test_stream_checkpoint(void **s) {
    (void)s;
    char fix[2048], ids[2048], run[2048], log[2048];
    const char *d = tu_tmpdir();
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/qwen3-headwise-f32", tu_src());
    snprintf(ids, sizeof ids, "%s/ids.txt", d);
    snprintf(run, sizeof run, "%s/run.h5", d);
    snprintf(log, sizeof log, "%s/log", d);
    int32_t tok[40];
    for (int i = 0; i < 40; i++) tok[i] = (i * 37 + 11) % 97;
    hf_write_tokens(ids, tok, 40, 3);
    assert_int_equal(tu_run(log, "inspect %s --tokens %s --out %s --force -q", fix, ids, run), 0);
    assert_int_equal(tu_run(log, "stream %s --len 40 --window 10 --n-seq 3", run), 0);
    hid_t f = H5Fopen(run, H5F_ACC_RDONLY, H5P_DEFAULT);
    size_t n;
    double *loss = tu_h5_read_opt(f, "stream/W_10/loss_seq", H5T_NATIVE_DOUBLE, 8, &n);
    H5Fclose(f);
    assert_int_equal(n, 4 * 3); /* dense, keep 0, 1, 4 */
    for (size_t i = 0; i < n; i++) assert_true(isfinite(loss[i]) && loss[i] > 0.0);
    for (int i = 0; i < 3; i++) /* identical windows: identical losses */
        assert_true(loss[i] == loss[0]);
    free(loss);
    assert_int_equal(tu_run(log, "stream %s --len 40 --window 4 --keep 4 --n-seq 3", run), 2);
}

/* A rerun goes through the checkpoint the run measured or is refused in one
 * line: --model of another architecture or shape, weights changed in place,
 * a checkpoint or input that is gone. The run records absolute paths, so a
 * rerun from another directory finds them; too few windows name eval's
 * own options' product, not inspect's --n-seq. */
static void test_rerun_checkpoint(void **s) {
    (void)s;
    char d[1024], ck[1100], ck2[1100], ids[1100], ids2[1100], log[1100], st[1200];
    const char *run = "run.h5", *src = tu_src();
    snprintf(d, sizeof d, "%s", tu_tmpdir());
    snprintf(ck, sizeof ck, "%s/ck", d), snprintf(ck2, sizeof ck2, "%s/ck2", d);
    snprintf(ids, sizeof ids, "%s/ids.txt", d), snprintf(ids2, sizeof ids2, "%s/ids2", d);
    snprintf(log, sizeof log, "%s/log", d), snprintf(st, sizeof st, "%s/model.safetensors", ck);
    assert_int_equal(mkdir(ck, 0755), 0);
    tu_hf_fixture(ck, "qwen3-headwise-f32", "config.json");
    tu_hf_fixture(ck, "qwen3-headwise-f32", "model.safetensors");
    int32_t tok[40];
    for (int i = 0; i < 40; i++) tok[i] = (i * 37 + 11) % 97;
    hf_write_tokens(ids, tok, 40, 3);
    /* relative paths to inspect, and the reruns from elsewhere (tu_run
     * runs in the source tree) */
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' inspect ck --tokens ids.txt --out %s -q > log 2>&1",
             d, tu_bin(), run);
    assert_int_equal(system(cmd), 0);
    char runp[1200];
    snprintf(runp, sizeof runp, "%s/%s", d, run);
    assert_int_equal(tu_run(log, "stream %s --len 40 --window 10 --n-seq 3 --no-write", runp), 0);
    assert_int_equal(
        tu_run(log, "eval %s --lengths 40 --batch-size 4 --batches 1 --no-write", runp), 2);
    tu_assert_one_line(log, "gives 3 windows of 40 tokens, not 4", NULL);
    char *text = tu_slurp_ok(log, NULL);
    assert_null(strstr(text, "--n-seq"));
    free(text);
    /* eval and stream of a checkpoint are under the memory plan too */
    setenv("GATELAB_MEM_LIMIT", "1000", 1);
    int rc = tu_run(log, "eval %s --lengths 40 --batches 1 --batch-size 1 --no-write", runp);
    unsetenv("GATELAB_MEM_LIMIT");
    assert_int_equal(rc, 2);
    tu_assert_one_line(log, "gatelab eval: length 40 with --batch-size 1 needs",
                       "over the memory limit of 1000 bytes");
    assert_int_equal(tu_run(log,
                            "stream %s --len 40 --window 10 --n-seq 3 --no-write --model "
                            "%s/tests/reference/hf/llama-f32",
                            runp, src),
                     2);
    tu_assert_one_line(log, "is not the one this run measured: architecture LlamaForCausalLM",
                       NULL);
    assert_int_equal(tu_run(log,
                            "intervene %s gates-open --no-write --model "
                            "%s/tests/reference/hf/qwen3-headwise-bf16-sharded",
                            runp, src),
                     2);
    tu_assert_one_line(log, "is not the one this run measured: kv heads 1, not 2", NULL);
    /* the weights replaced in place, the same config.json */
    size_t n;
    unsigned char *w = (unsigned char *)tu_slurp_ok(st, &n);
    w[n - 10] ^= 0x40;
    tu_write_file(st, w, n);
    assert_int_equal(tu_run(log, "intervene %s gates-open --no-write", runp), 2);
    tu_assert_one_line(log, "differs from the one this run measured",
                       "model.safetensors: content differs");
    w[n - 10] ^= 0x40;
    tu_write_file(st, w, n);
    free(w);
    assert_int_equal(tu_run(log, "intervene %s gates-open --no-write", runp), 0);
    assert_int_equal(rename(ck, ck2), 0);
    assert_int_equal(tu_run(log, "intervene %s gates-open --no-write", runp), 2);
    tu_assert_one_line(log, "/ck is gone (moved or deleted)", NULL);
    assert_int_equal(rename(ck2, ck), 0);
    assert_int_equal(rename(ids, ids2), 0);
    assert_int_equal(
        tu_run(log, "eval %s --lengths 40 --batches 1 --batch-size 1 --no-write", runp), 2);
    tu_assert_one_line(log, "its recorded input", "ids.txt is gone (moved or deleted)");
    tu_rmtree(d);
}

/* GPT-2's positions are a learned table: eval says so. */
static void test_eval_learned_positions(void **s) {
    (void)s;
    char d[1024], ids[1100], run[1100], log[1100];
    snprintf(d, sizeof d, "%s", tu_tmpdir());
    snprintf(ids, sizeof ids, "%s/ids.txt", d), snprintf(run, sizeof run, "%s/run.h5", d);
    snprintf(log, sizeof log, "%s/log", d);
    int32_t tok[16];
    for (int i = 0; i < 16; i++) tok[i] = (i * 37 + 11) % 97;
    hf_write_tokens(ids, tok, 16, 1);
    assert_int_equal(tu_run(log, "inspect %s/tests/reference/hf/gpt2-f32 --tokens %s --out %s -q",
                            tu_src(), ids, run),
                     0);
    assert_int_equal(tu_run(log, "eval %s --lengths 16 --batches 1 --batch-size 1 --no-write", run),
                     0);
    char *text = tu_slurp_ok(log, NULL);
    assert_non_null(strstr(text, "T_train 16  learned positions\n"));
    assert_null(strstr(text, "RoPE"));
    free(text);
    tu_rmtree(d);
}

int main(void) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_truncated_maps),
        cmocka_unit_test(test_bad_checkpoints),
        cmocka_unit_test(test_bad_index),
        cmocka_unit_test(test_median),
        cmocka_unit_test(test_batched_windows),
        cmocka_unit_test(test_eval_checkpoint),
        cmocka_unit_test(test_losses_batched),
        cmocka_unit_test(test_inspect_memory_plan),
        cmocka_unit_test(test_stream_checkpoint),
        cmocka_unit_test(test_rerun_checkpoint),
        cmocka_unit_test(test_eval_learned_positions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
