/* test_runfile.c: the HDF5 run file and checkpoints.
 *
 * Everything written through runfile.h is read back with the plain HDF5 C
 * API (no gatelab reader), so the test checks the file format itself:
 * names, shapes, dtypes, values, attributes, chunking and compression. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "gatelab_build.h"
#include "intervention.h"
#include "model.h"
#include "runfile.h"
#include "runfile_read.h"
#include "testutil.h"

/* the runfile_* calls' one-line reason */
static char rf_err[512];

static char tmpdir[256];
static H5E_auto2_t h5_default_fn; /* HDF5's own error printer, saved */
static void *h5_default_data;

static int setup(void **state) {
    (void)state;
    const char *d = tu_tmpdir();
    if (!d) return -1;
    snprintf(tmpdir, sizeof tmpdir, "%s", d);
    H5Eget_auto2(H5E_DEFAULT, &h5_default_fn, &h5_default_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the test's own probes fail on purpose */
    return 0;
}

static int teardown(void **state) {
    (void)state;
    if (getenv("RUNFILE_KEEP")) { /* manual inspection with h5dump / h5py */
        fprintf(stderr, "kept %s\n", tmpdir);
        return 0;
    }
    return tu_rmtree(tmpdir);
}

static void tpath(char *buf, size_t len, const char *name) {
    snprintf(buf, len, "%s/%s", tmpdir, name);
}

/* ---- fixtures ---- */

static Config test_config(void) {
    Config c;
    config_defaults(&c);
    snprintf(c.variant, sizeof c.variant, "%s", "baseline");
    c.init_seed = 1234;
    c.data_seed = 18446744073709551615ull; /* 2^64-1: must survive as u64 */
    c.lr = 3e-4f;
    c.n_layers = 2;
    c.n_heads = 2; /* the probes below: L = 2, H = 2 */
    return c;
}

/* A Model built by hand: two tensors in a 10-float arena. */
typedef struct {
    Model m;
    ParamInfo info[2];
    float arena[10];
} TinyModel;

static void tiny_model(TinyModel *t, const Config *cfg) {
    memset(t, 0, sizeof *t);
    t->m.cfg = *cfg;
    t->info[0] =
        (ParamInfo){.offset = 0, .numel = 6, .ndim = 2, .shape = {3, 2}, .decay = 1, .added = 0};
    snprintf(t->info[0].name, PARAM_NAME, "tok_embed");
    t->info[1] =
        (ParamInfo){.offset = 6, .numel = 4, .ndim = 1, .shape = {4, 0}, .decay = 0, .added = 1};
    snprintf(t->info[1].name, PARAM_NAME, "layers.0.attn.gate.b");
    for (int i = 0; i < 10; i++) t->arena[i] = 0.5f * (float)i - 1.0f;
    t->m.table = (ParamTable){t->info, 2, 10};
    t->m.params = t->arena;
}

/* A probe with L=2 H=2 N=2 T=3 C=4 Ns=1, every value a function of its
 * index so the read-back can check each element. */
enum { PL = 2, PH = 2, PN = 2, PT = 3, PC = 4, PNS = 1, PD = 128 }; /* PD: the config's d_model */
typedef struct {
    int tokens[PN * PT], targets[PN * PT];
    float attention[PL * PH * PT * PT], slot[PL * PH * PT];
    float first_col[PN * PL * PH * PT], alpha0[PL * PH];
    float row_empty[PL * PH], first_ne[PL * PH];
    float gate_sample[PL * PNS * PT * PC];
    double hist[PL * 50], cmean[PL * PC], below[PL * 4], stats[PL * 4];
    double hmax[PL], hmed[PL], htop3[PL * 3], hkurt[PL], hratio[PL];
    double bos_max[PL], bos_ratio[PL], tok_max[PL], tok_ratio[PL], max_logit[PL];
    double grad_in[PL * PT], gate_wn[PL * 2];
    int bos_arg[PL], tok_arg[PL];
    float key_alpha[PN * PL * PH * PT], bos_cos[PN * PL * PT];
    double resid[PL * PD];
    float knorm[PL * PH * PT], vnorm[PL * PH * PT], onorm[PL * PH * PT];
    double gfirst[PL], grest[PL], erank[PL * PH];
    ProbeRecord p;
} Probe;

static void fill_f(float *a, size_t n, float base) {
    for (size_t i = 0; i < n; i++) a[i] = base + 0.25f * (float)i;
}
static void fill_d(double *a, size_t n, double base) {
    for (size_t i = 0; i < n; i++) a[i] = base + 0.5 * (double)i;
}

/* Every array of q filled with values of its index. */
static void fill_probe(Probe *q) {
    for (int i = 0; i < PN * PT; i++) q->tokens[i] = 100 + i, q->targets[i] = 101 + i;
    fill_f(q->attention, PL * PH * PT * PT, 0.0f);
    fill_f(q->slot, PL * PH * PT, 10.0f);
    fill_f(q->first_col, PN * PL * PH * PT, 20.0f);
    fill_f(q->alpha0, PL * PH, 30.0f);
    fill_f(q->row_empty, PL * PH, 31.0f);
    fill_f(q->first_ne, PL * PH, 32.0f);
    fill_f(q->gate_sample, PL * PNS * PT * PC, 40.0f);
    fill_d(q->hist, PL * 50, 1.0);
    fill_d(q->cmean, PL * PC, 2.0);
    fill_d(q->below, PL * 4, 3.0);
    fill_d(q->stats, PL * 4, 4.0);
    fill_d(q->hmax, PL, 5.0);
    fill_d(q->hmed, PL, 6.0);
    fill_d(q->htop3, PL * 3, 7.0);
    fill_d(q->hkurt, PL, 8.0);
    fill_d(q->hratio, PL, 9.0);
    fill_d(q->bos_max, PL, 11.0);
    fill_d(q->bos_ratio, PL, 12.0);
    fill_d(q->tok_max, PL, 13.0);
    fill_d(q->max_logit, PL, 17.0);
    fill_d(q->tok_ratio, PL, 14.0);
    fill_f(q->knorm, PL * PH * PT, 50.0f);
    fill_f(q->vnorm, PL * PH * PT, 60.0f);
    fill_f(q->onorm, PL * PH * PT, 70.0f);
    fill_d(q->gfirst, PL, 18.0);
    fill_d(q->grest, PL, 19.0);
    fill_d(q->erank, PL * PH, 21.0);
    fill_d(q->grad_in, PL * PT, 18.0);
    fill_d(q->gate_wn, PL * 2, 19.0);
    for (int l = 0; l < PL; l++) q->bos_arg[l] = 5 + l, q->tok_arg[l] = 7 - l;
    fill_f(q->key_alpha, PN * PL * PH * PT, 50.0f);
    fill_f(q->bos_cos, PN * PL * PT, 60.0f);
    fill_d(q->resid, PL * PD, 70.0);
}

/* q's arrays filled (fill_probe) and q->p the record over them at step. */
static void make_probe(Probe *q, long long step) {
    fill_probe(q);
    q->p = (ProbeRecord){.step = step,
                         .L = PL,
                         .H = PH,
                         .N = PN,
                         .T = PT,
                         .tokens = q->tokens,
                         .attention = q->attention,
                         .attention_slot = q->slot,
                         .first_col = q->first_col,
                         .alpha0 = q->alpha0,
                         .proxy = 1,
                         .row_empty = q->row_empty,
                         .first_nonempty = q->first_ne,
                         .normaliser = "softmax",
                         .gate_channels = PC,
                         .gate_heads = 2,
                         .gate_bounded = 1,
                         .gate_sample = q->gate_sample,
                         .gate_sample_n = PNS,
                         .gate_hist = q->hist,
                         .gate_channel_mean = q->cmean,
                         .gate_below = q->below,
                         .gate_stats = q->stats,
                         .h_max = q->hmax,
                         .h_median = q->hmed,
                         .h_top3 = q->htop3,
                         .h_kurtosis = q->hkurt,
                         .h_norm_ratio = q->hratio,
                         .bos_max = q->bos_max,
                         .bos_argmax = q->bos_arg,
                         .bos_norm_ratio = q->bos_ratio,
                         .tok_max = q->tok_max,
                         .tok_argmax = q->tok_arg,
                         .tok_norm_ratio = q->tok_ratio,
                         .max_logit = q->max_logit,
                         .D = PD,
                         .key_alpha = q->key_alpha,
                         .bos_cosine = q->bos_cos,
                         .resid_share = q->resid,
                         .key_norm = q->knorm,
                         .value_norm = q->vnorm,
                         .head_out_norm = q->onorm,
                         .gate_first = q->gfirst,
                         .gate_rest = q->grest,
                         .ov_erank = q->erank,
                         .grad_in_norm = q->grad_in,
                         .targets = q->targets,
                         .gate_w_norm = q->gate_wn};
}

/* ---- plain-HDF5 readers ---- */

/* Read a whole dataset converted to mtype; checks rank and dims. */
static void *read_ds(hid_t f, const char *path, hid_t mtype, int rank, const hsize_t *want) {
    hid_t ds = H5Dopen2(f, path, H5P_DEFAULT);
    if (ds < 0) fail_msg("missing dataset %s", path);
    hid_t sp = H5Dget_space(ds);
    hsize_t dims[8];
    assert_int_equal(H5Sget_simple_extent_ndims(sp), rank);
    H5Sget_simple_extent_dims(sp, dims, NULL);
    size_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] != want[i])
            fail_msg("%s dim %d is %llu, want %llu", path, i, (unsigned long long)dims[i],
                     (unsigned long long)want[i]);
        n *= (size_t)dims[i];
    }
    void *buf = calloc(n ? n : 1, H5Tget_size(mtype));
    if (n) assert_true(H5Dread(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
    H5Sclose(sp);
    H5Dclose(ds);
    return buf;
}

/* Every dataset we write must be chunked with shuffle + deflate, carry a
 * Fletcher-32 checksum per chunk and a description. */
static void assert_compressed(hid_t f, const char *path) {
    hid_t ds = H5Dopen2(f, path, H5P_DEFAULT);
    assert_true(ds >= 0);
    hid_t dcpl = H5Dget_create_plist(ds);
    if (H5Pget_layout(dcpl) != H5D_CHUNKED) fail_msg("%s is not chunked", path);
    assert_int_equal(H5Pget_nfilters(dcpl), 3);
    unsigned flags, cd[4];
    size_t ncd = 4;
    assert_int_equal(H5Pget_filter2(dcpl, 0, &flags, &ncd, cd, 0, NULL, NULL), H5Z_FILTER_SHUFFLE);
    ncd = 4;
    assert_int_equal(H5Pget_filter2(dcpl, 1, &flags, &ncd, cd, 0, NULL, NULL), H5Z_FILTER_DEFLATE);
    ncd = 4;
    assert_int_equal(H5Pget_filter2(dcpl, 2, &flags, &ncd, cd, 0, NULL, NULL),
                     H5Z_FILTER_FLETCHER32);
    if (H5Aexists(ds, "description") <= 0) fail_msg("%s has no description", path);
    H5Pclose(dcpl);
    H5Dclose(ds);
}

static long long attr_i64(hid_t obj, const char *name) {
    long long v = -999;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) fail_msg("missing attribute %s", name);
    assert_true(H5Aread(a, H5T_NATIVE_LLONG, &v) >= 0);
    H5Aclose(a);
    return v;
}

static unsigned long long attr_u64(hid_t obj, const char *name) {
    unsigned long long v = 0;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) fail_msg("missing attribute %s", name);
    assert_true(H5Aread(a, H5T_NATIVE_ULLONG, &v) >= 0);
    H5Aclose(a);
    return v;
}

static double attr_f64(hid_t obj, const char *name) {
    double v = -999;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) fail_msg("missing attribute %s", name);
    hid_t t = H5Aget_type(a);
    assert_int_equal(H5Tget_class(t), H5T_FLOAT);
    H5Tclose(t);
    assert_true(H5Aread(a, H5T_NATIVE_DOUBLE, &v) >= 0);
    H5Aclose(a);
    return v;
}

/* Variable-length string attribute into buf. */
static void attr_str(hid_t obj, const char *name, char *buf, size_t len) {
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) fail_msg("missing attribute %s", name);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    char *s = NULL;
    assert_true(H5Aread(a, t, &s) >= 0);
    snprintf(buf, len, "%s", s);
    H5free_memory(s);
    H5Tclose(t);
    H5Aclose(a);
}

static int has_link(hid_t f, const char *path) { return H5Lexists(f, path, H5P_DEFAULT) > 0; }

static void assert_one_line(const char *msg) {
    assert_true(strlen(msg) > 0);
    assert_null(strchr(msg, '\n'));
}

/* ---- run file ---- */

static void check_root(hid_t f, const Config *cfg) {
    char s[256];
    attr_str(f, "schema", s, sizeof s);
    assert_string_equal(s, "gatelab-run");
    assert_int_equal(attr_i64(f, "schema_version"), RUNFILE_SCHEMA_VERSION);
    attr_str(f, "variant", s, sizeof s);
    assert_string_equal(s, cfg->variant);
    assert_true(attr_u64(f, "seed") == 1234);
    assert_true(attr_u64(f, "data_seed") == 18446744073709551615ull);
    attr_str(f, "gatelab_version", s, sizeof s);
    /* "0.1.0 (git <describe>)": the version, then the exact commit */
    assert_true(strncmp(s, GATELAB_VERSION " (git ", strlen(GATELAB_VERSION) + 6) == 0);
    assert_true(s[strlen(s) - 1] == ')');
    attr_str(f, "created", s, sizeof s);
    assert_int_equal(strlen(s), 20); /* 2025-01-02T03:04:05Z */
    assert_int_equal(s[10], 'T');
    assert_int_equal(s[19], 'Z');
    assert_int_equal(attr_i64(f, "n_params"), 10);
    assert_int_equal(attr_i64(f, "n_params_added"), 4);
    attr_str(f, "status", s, sizeof s);
    assert_string_equal(s, "done");
}

static void check_config(hid_t f, const Config *cfg) {
    hid_t g = H5Gopen2(f, "config", H5P_DEFAULT);
    assert_true(g >= 0);
    assert_int_equal(attr_i64(g, "n_layers"), 2);
    assert_int_equal(attr_i64(g, "d_model"), cfg->d_model);
    assert_true(fabs(attr_f64(g, "lr") - 3e-4) < 1e-9);
    assert_true(attr_u64(g, "data_seed") == 18446744073709551615ull);
    char s[256];
    attr_str(g, "norm", s, sizeof s); /* enums are strings */
    assert_string_equal(s, "rms");
    char *text = malloc(1 << 16);
    attr_str(g, "text", text, 1 << 16);
    assert_non_null(strstr(text, "n_layers = 2"));
    assert_non_null(strstr(text, "[train]"));
    free(text);
    H5Gclose(g);
}

static void check_metrics(hid_t f) {
    hsize_t n3[1] = {3}, n2[1] = {2};
    long long *step = read_ds(f, "/metrics/train/step", H5T_NATIVE_LLONG, 1, n3);
    double *loss = read_ds(f, "/metrics/train/loss", H5T_NATIVE_DOUBLE, 1, n3);
    double *lr = read_ds(f, "/metrics/train/lr", H5T_NATIVE_DOUBLE, 1, n3);
    double *gn = read_ds(f, "/metrics/train/grad_norm", H5T_NATIVE_DOUBLE, 1, n3);
    long long *tok = read_ds(f, "/metrics/train/tokens", H5T_NATIVE_LLONG, 1, n3);
    double *sec = read_ds(f, "/metrics/train/seconds", H5T_NATIVE_DOUBLE, 1, n3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(step[i], i);
        assert_true(loss[i] == 5.0 - i);
        assert_true(lr[i] == 1e-3 * (i + 1));
        assert_true(gn[i] == 0.5 * i);
        assert_int_equal(tok[i], 1024 * (i + 1));
        assert_true(sec[i] == 0.1 * i);
    }
    free(step), free(loss), free(lr), free(gn), free(tok), free(sec);
    long long *es = read_ds(f, "/metrics/eval/step", H5T_NATIVE_LLONG, 1, n2);
    double *vl = read_ds(f, "/metrics/eval/val_loss", H5T_NATIVE_DOUBLE, 1, n2);
    double *vb = read_ds(f, "/metrics/eval/val_bpb", H5T_NATIVE_DOUBLE, 1, n2);
    assert_int_equal(es[0], 0);
    assert_int_equal(es[1], 2);
    assert_true(vl[0] == 4.5 && vl[1] == 3.5);
    assert_true(vb[0] == 6.5 && vb[1] == 5.0);
    free(es), free(vl), free(vb);
    const char *all[] = {"train/step",      "train/loss",    "train/lr",
                         "train/grad_norm", "train/tokens",  "train/seconds",
                         "eval/step",       "eval/val_loss", "eval/val_bpb"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        char p[64];
        snprintf(p, sizeof p, "/metrics/%s", all[i]);
        assert_compressed(f, p);
        hid_t ds = H5Dopen2(f, p, H5P_DEFAULT);
        assert_true(H5Aexists(ds, "units") > 0);
        H5Dclose(ds);
    }
}

/* Compare a float dataset against the expected array exactly. */
static void check_f32(hid_t f, const char *path, int rank, const hsize_t *dims, const float *want,
                      size_t n) {
    float *got = read_ds(f, path, H5T_NATIVE_FLOAT, rank, dims);
    if (memcmp(got, want, n * sizeof(float))) fail_msg("%s values differ", path);
    hid_t ds = H5Dopen2(f, path, H5P_DEFAULT);
    hid_t t = H5Dget_type(ds);
    assert_true(H5Tequal(t, H5T_IEEE_F32LE) > 0);
    H5Tclose(t);
    H5Dclose(ds);
    free(got);
    assert_compressed(f, path);
}

static void check_f64(hid_t f, const char *path, int rank, const hsize_t *dims, const double *want,
                      size_t n) {
    double *got = read_ds(f, path, H5T_NATIVE_DOUBLE, rank, dims);
    if (memcmp(got, want, n * sizeof(double))) fail_msg("%s values differ", path);
    free(got);
    assert_compressed(f, path);
}

static void check_probe(hid_t f, const Probe *q) {
    const char *g = "/probe/step_0000002";
    char p[128];
#define P(name) (snprintf(p, sizeof p, "%s/%s", g, name), p)
    int *tok = read_ds(f, P("tokens"), H5T_NATIVE_INT, 2, (hsize_t[]){PN, PT});
    assert_memory_equal(tok, q->tokens, sizeof q->tokens);
    free(tok);
    hid_t ds = H5Dopen2(f, P("tokens"), H5P_DEFAULT);
    hid_t t = H5Dget_type(ds);
    assert_true(H5Tequal(t, H5T_STD_I32LE) > 0);
    H5Tclose(t), H5Dclose(ds);
    check_f32(f, P("attention"), 4, (hsize_t[]){PL, PH, PT, PT}, q->attention, PL * PH * PT * PT);
    check_f32(f, P("attention_slot"), 3, (hsize_t[]){PL, PH, PT}, q->slot, PL * PH * PT);
    check_f32(f, P("first_col"), 4, (hsize_t[]){PN, PL, PH, PT}, q->first_col, PN * PL * PH * PT);
    check_f32(f, P("alpha0"), 2, (hsize_t[]){PL, PH}, q->alpha0, PL * PH);
    check_f32(f, P("gate_sample"), 4, (hsize_t[]){PL, PNS, PT, PC}, q->gate_sample,
              PL * PNS * PT * PC);
    check_f64(f, P("gate_hist"), 2, (hsize_t[]){PL, 50}, q->hist, PL * 50);
    check_f64(f, P("gate_channel_mean"), 2, (hsize_t[]){PL, PC}, q->cmean, PL * PC);
    check_f64(f, P("gate_below"), 2, (hsize_t[]){PL, 4}, q->below, PL * 4);
    check_f64(f, P("gate_stats"), 2, (hsize_t[]){PL, 4}, q->stats, PL * 4);
    check_f64(f, P("hidden/max"), 1, (hsize_t[]){PL}, q->hmax, PL);
    check_f64(f, P("hidden/median"), 1, (hsize_t[]){PL}, q->hmed, PL);
    check_f64(f, P("hidden/top3"), 2, (hsize_t[]){PL, 3}, q->htop3, PL * 3);
    check_f64(f, P("hidden/kurtosis"), 1, (hsize_t[]){PL}, q->hkurt, PL);
    check_f64(f, P("hidden/norm_ratio"), 1, (hsize_t[]){PL}, q->hratio, PL);
    ds = H5Dopen2(f, P("gate_below"), H5P_DEFAULT);
    hid_t a = H5Aopen(ds, "thresholds", H5P_DEFAULT);
    double th[4];
    assert_true(H5Aread(a, H5T_NATIVE_DOUBLE, th) >= 0);
    assert_true(th[0] == 0.5 && th[1] == 0.1 && th[2] == 1e-2 && th[3] == 1e-3);
    H5Aclose(a), H5Dclose(ds);
#undef P
    hid_t gr = H5Gopen2(f, g, H5P_DEFAULT);
    assert_int_equal(attr_i64(gr, "step"), 2);
    assert_int_equal(attr_i64(gr, "proxy"), 1);
    assert_int_equal(attr_i64(gr, "gate_channels"), PC);
    assert_int_equal(attr_i64(gr, "gate_heads"), 2);
    assert_int_equal(attr_i64(gr, "gate_bounded"), 1);
    assert_int_equal(attr_i64(gr, "probe_n"), PN);
    assert_int_equal(attr_i64(gr, "probe_len"), PT);
    char s[64];
    attr_str(gr, "normaliser", s, sizeof s);
    assert_string_equal(s, "softmax");
    H5Gclose(gr);
}

static void check_params(hid_t f, const TinyModel *t) {
    check_f32(f, "/params/tok_embed", 2, (hsize_t[]){3, 2}, t->arena, 6);
    check_f32(f, "/params/layers.0.attn.gate.b", 1, (hsize_t[]){4}, t->arena + 6, 4);
    hid_t ds = H5Dopen2(f, "/params/layers.0.attn.gate.b", H5P_DEFAULT);
    assert_int_equal(attr_i64(ds, "added"), 1);
    assert_int_equal(attr_i64(ds, "decay"), 0);
    H5Dclose(ds);
}

/* Write a full small run: 3 train rows, 2 evals, a probe at step 2. */
static RunFile *write_run(const char *path, const Config *cfg, TinyModel *t, Probe *q) {
    char err[512] = "";
    RunFile *rf = runfile_create(path, cfg, &t->m, 0, err, sizeof err);
    if (!rf) fail_msg("create: %s", err);
    for (int i = 0; i < 3; i++)
        assert_int_equal(runfile_append_train(rf, i, 5.0 - i, 1e-3 * (i + 1), 0.5 * i,
                                              1024 * (i + 1), 0.1 * i, rf_err, sizeof rf_err),
                         0);
    assert_int_equal(runfile_append_eval(rf, 0, 4.5, 6.5, rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_append_eval(rf, 2, 3.5, 5.0, rf_err, sizeof rf_err), 0);
    make_probe(q, 2);
    /* written twice: the second write replaces the first whole */
    snprintf(q->p.normaliser, sizeof q->p.normaliser, "stale");
    assert_int_equal(runfile_write_probe(rf, &q->p, rf_err, sizeof rf_err), 0);
    snprintf(q->p.normaliser, sizeof q->p.normaliser, "softmax");
    assert_int_equal(runfile_write_probe(rf, &q->p, rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_write_params(rf, &t->m, rf_err, sizeof rf_err), 0);
    return rf;
}

/* write_run's file on test_config and a tiny model, closed. */
static void write_closed_run(const char *path, Probe *q) {
    Config cfg = test_config();
    TinyModel t;
    tiny_model(&t, &cfg);
    RunFile *rf = write_run(path, &cfg, &t, q);
    assert_int_equal(runfile_close(rf, rf_err, sizeof rf_err), 0);
}

static void test_write_and_read_back(void **state) {
    (void)state;
    char path[512];
    tpath(path, sizeof path, "run.h5");
    Config cfg = test_config();
    TinyModel t;
    tiny_model(&t, &cfg);
    Probe q;
    RunFile *rf = write_run(path, &cfg, &t, &q);
    assert_int_equal(runfile_set_summary(rf, "steps_done", 3, rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_set_summary(rf, "final_val_loss", 3.5, rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_set_summary(rf, "final_val_loss", 3.25, rf_err, sizeof rf_err),
                     0); /* overwrite */
    assert_int_equal(runfile_set_status(rf, "done", rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_close(rf, rf_err, sizeof rf_err), 0);

    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    check_root(f, &cfg);
    check_config(f, &cfg);
    check_metrics(f);
    check_probe(f, &q);
    check_params(f, &t);
    hid_t s = H5Gopen2(f, "summary", H5P_DEFAULT);
    assert_true(attr_f64(s, "steps_done") == 3.0);
    assert_true(attr_f64(s, "final_val_loss") == 3.25);
    H5Gclose(s);
    H5Fclose(f);
}

/* One byte of the first chunk of dataset name in run file path inverted,
 * in place (the chunk's file address from HDF5's chunk index). */
static void corrupt_chunk(const char *path, const char *name) {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
    if (ds < 0) fail_msg("no dataset %s", name);
    haddr_t addr = HADDR_UNDEF;
    hsize_t size = 0;
    unsigned mask = 0;
    hid_t sp = H5Dget_space(ds);
    assert_true(H5Dget_chunk_info(ds, sp, 0, NULL, &mask, &addr, &size) >= 0);
    H5Sclose(sp);
    H5Dclose(ds);
    H5Fclose(f);
    assert_true(addr != HADDR_UNDEF && size > 4);
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char b;
    off_t at = (off_t)addr + (off_t)(size / 2);
    assert_int_equal(pread(fd, &b, 1, at), 1);
    b ^= 0xff;
    assert_int_equal(pwrite(fd, &b, 1, at), 1);
    close(fd);
}

/* A byte changed inside a stored chunk is caught by its checksum: the
 * probe read is refused in one line naming the dataset. */
static void test_corrupt_chunk_detected(void **state) {
    (void)state;
    char path[512], name[128], err[512] = "";
    tpath(path, sizeof path, "corrupt.h5");
    Probe q;
    write_closed_run(path, &q);
    snprintf(name, sizeof name, "/" RS_PROBE_PATH_FMT "/%s", 2LL, RS_TOKENS);
    corrupt_chunk(path, name);
    RunReader *r = runread_open(path, err, sizeof err);
    if (!r) fail_msg("open: %s", err);
    ProbeRecord p;
    assert_int_equal(runread_probe(r, -1, &p, err, sizeof err), -1);
    runread_close(r);
    if (!strstr(err, "cannot read dataset " RS_TOKENS) || !strstr(err, "checksum"))
        fail_msg("got: %s", err);
    assert_one_line(err);
}

static void test_null_model(void **state) {
    (void)state;
    char path[512], err[512] = "";
    tpath(path, sizeof path, "nullmodel.h5");
    Config cfg = test_config();
    RunFile *rf = runfile_create(path, &cfg, NULL, 0, err, sizeof err);
    assert_non_null(rf);
    assert_int_equal(runfile_close(rf, rf_err, sizeof rf_err), 0);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_int_equal(attr_i64(f, "n_params"), 0);
    assert_int_equal(attr_i64(f, "n_params_added"), 0);
    char s[32];
    attr_str(f, "status", s, sizeof s);
    assert_string_equal(s, "running");
    H5Fclose(f);
}

/* A reader labels a run by its /config fields, not by the label stored
 * beside them: a gated config written under "baseline" reads as g1-elem,
 * one no catalog id describes as custom, and variant_fields names what
 * differs from the baseline. */
static void test_label_from_fields(void **state) {
    (void)state;
    char path[512], err[512] = "";
    struct {
        const char *name, *sets[2], *label, *fields;
    } cases[] = {
        {"lab_g1.h5", {"gate_pos=g1", NULL}, "g1-elem", "gate_pos=g1"},
        {"lab_custom.h5", {"gate_pos=g3", "gate_act=silu"}, "custom", "gate_pos=g3 gate_act=silu"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tpath(path, sizeof path, cases[i].name);
        Config cfg = test_config();
        for (int k = 0; k < 2 && cases[i].sets[k]; k++)
            assert_int_equal(config_set(&cfg, cases[i].sets[k], err, sizeof err), 0);
        assert_string_equal(cfg.variant, "baseline"); /* the stored label lies */
        RunFile *rf = runfile_create(path, &cfg, NULL, 0, err, sizeof err);
        assert_non_null(rf);
        assert_int_equal(runfile_close(rf, rf_err, sizeof rf_err), 0);
        RunReader *r = runread_open(path, err, sizeof err);
        assert_non_null(r);
        assert_string_equal(runread_meta(r)->variant, cases[i].label);
        runread_close(r);
        hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        char s[256];
        attr_str(f, "variant_fields", s, sizeof s);
        assert_string_equal(s, cases[i].fields);
        H5Fclose(f);
    }
}

static void test_never_overwrite(void **state) {
    (void)state;
    char path[512], err[512] = "";
    tpath(path, sizeof path, "keep.h5");
    Config cfg = test_config();
    TinyModel t;
    tiny_model(&t, &cfg);
    Probe q;
    RunFile *rf = write_run(path, &cfg, &t, &q);
    assert_int_equal(runfile_set_status(rf, "done", rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_close(rf, rf_err, sizeof rf_err), 0);
    struct stat st0, st1;
    size_t n0, n1;
    assert_int_equal(stat(path, &st0), 0);
    char *b0 = tu_slurp_ok(path, &n0);

    assert_null(runfile_create(path, &cfg, &t.m, 0, err, sizeof err));
    char want[700];
    snprintf(want, sizeof want, "%s exists (finished results are never overwritten; use --force)",
             path);
    assert_string_equal(err, want);
    assert_int_equal(stat(path, &st1), 0);
    char *b1 = tu_slurp_ok(path, &n1);
    assert_int_equal(n0, n1);
    assert_memory_equal(b0, b1, n0);
    assert_true(st0.st_mtim.tv_sec == st1.st_mtim.tv_sec &&
                st0.st_mtim.tv_nsec == st1.st_mtim.tv_nsec);
    free(b1);

    rf = runfile_create(path, &cfg, &t.m, 1, err, sizeof err);
    assert_non_null(rf);
    assert_int_equal(runfile_close(rf, rf_err, sizeof rf_err), 0);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_false(has_link(f, "/probe")); /* a fresh file, not the old one */
    assert_false(has_link(f, "/params"));
    H5Fclose(f);
    free(b0);
}

static void test_reopen_truncates(void **state) {
    (void)state;
    char path[512], err[512] = "";
    tpath(path, sizeof path, "resume.h5");
    Config cfg = test_config();
    RunFile *rf = runfile_create(path, &cfg, NULL, 0, err, sizeof err);
    assert_non_null(rf);
    Probe q;
    for (int s = 0; s < 10; s++) {
        assert_int_equal(runfile_append_train(rf, s, s, 0, 0, 100 * s, s, rf_err, sizeof rf_err),
                         0);
        if (s % 4 == 0) {
            assert_int_equal(runfile_append_eval(rf, s, s, s, rf_err, sizeof rf_err), 0);
            make_probe(&q, s);
            assert_int_equal(runfile_write_probe(rf, &q.p, rf_err, sizeof rf_err), 0);
        }
    }
    assert_int_equal(runfile_set_status(rf, "diverged", rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_close(rf, rf_err, sizeof rf_err), 0);

    rf = runfile_reopen(path, 6, err, sizeof err); /* 6 steps done: rows 0..5 */
    if (!rf) fail_msg("reopen: %s", err);
    /* appending continues right after the kept rows */
    assert_int_equal(runfile_append_train(rf, 6, 60, 0, 0, 600, 6, rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_close(rf, rf_err, sizeof rf_err), 0);

    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    long long *st = read_ds(f, "/metrics/train/step", H5T_NATIVE_LLONG, 1, (hsize_t[]){7});
    double *loss = read_ds(f, "/metrics/train/loss", H5T_NATIVE_DOUBLE, 1, (hsize_t[]){7});
    for (int i = 0; i < 6; i++) assert_int_equal(st[i], i);
    assert_int_equal(st[6], 6);
    assert_true(loss[5] == 5.0 && loss[6] == 60.0);
    free(st), free(loss);
    long long *es = read_ds(f, "/metrics/eval/step", H5T_NATIVE_LLONG, 1, (hsize_t[]){2});
    assert_int_equal(es[0], 0);
    assert_int_equal(es[1], 4);
    free(es);
    double *vb = read_ds(f, "/metrics/eval/val_bpb", H5T_NATIVE_DOUBLE, 1, (hsize_t[]){2});
    free(vb);
    assert_true(has_link(f, "/probe/step_0000000"));
    assert_true(has_link(f, "/probe/step_0000004"));
    assert_false(has_link(f, "/probe/step_0000008"));
    char s[32];
    attr_str(f, "status", s, sizeof s);
    assert_string_equal(s, "running");
    H5Fclose(f);
}

/* runfile_reopen with stderr redirected and HDF5's printer on; assert nothing was printed (HDF5's
 * error stack must not leak through). */
static RunFile *quiet_reopen(const char *path, char *err, size_t errlen) {
    char cap[512];
    tpath(cap, sizeof cap, "stderr.txt");
    fflush(stderr);
    int saved = dup(2);
    int fd = open(cap, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    dup2(fd, 2);
    close(fd);
    H5Eset_auto2(H5E_DEFAULT, h5_default_fn, h5_default_data); /* would print */
    RunFile *rf = runfile_reopen(path, 0, err, errlen);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    struct stat sb;
    assert_int_equal(stat(cap, &sb), 0);
    assert_int_equal(sb.st_size, 0);
    return rf;
}

static void test_reopen_bad_files(void **state) {
    (void)state;
    char path[512], err[512];
    /* garbage */
    tpath(path, sizeof path, "garbage.h5");
    unsigned char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)(i * 131 + 7);
    tu_write_file(path, junk, sizeof junk);
    assert_null(quiet_reopen(path, err, sizeof err));
    assert_one_line(err);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "not a gatelab run file"));

    /* a real run file cut in half */
    char full[512];
    tpath(full, sizeof full, "whole.h5");
    Probe q;
    write_closed_run(full, &q);
    size_t n;
    char *b = tu_slurp_ok(full, &n);
    tpath(path, sizeof path, "half.h5");
    tu_write_file(path, b, n / 2);
    free(b);
    assert_null(quiet_reopen(path, err, sizeof err));
    assert_one_line(err);
    assert_non_null(strstr(err, path));

    /* a valid HDF5 file that is not ours */
    tpath(path, sizeof path, "foreign.h5");
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Fclose(f);
    assert_null(quiet_reopen(path, err, sizeof err));
    char want[700];
    snprintf(want, sizeof want, "%s: not a gatelab run file (no schema attribute)", path);
    assert_string_equal(err, want);

    /* missing */
    tpath(path, sizeof path, "absent.h5");
    assert_null(runfile_reopen(path, 0, err, sizeof err));
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
    assert_string_equal(err, want);
}

/* ---- checkpoints ---- */

static void fill_bits(float *a, size_t n, unsigned seed) {
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        uint32_t bits = x & 0xbfffffffu; /* no NaN/inf exponents: values only */
        memcpy(&a[i], &bits, 4);
    }
}

typedef struct {
    size_t n;
    float *p, *m, *v;
} Arrays;

static Arrays arrays(size_t n, unsigned seed) {
    Arrays a = {n, malloc(n * 4), malloc(n * 4), malloc(n * 4)};
    fill_bits(a.p, n, seed);
    fill_bits(a.m, n, seed + 1);
    fill_bits(a.v, n, seed + 2);
    return a;
}

static void arrays_free(Arrays *a) { free(a->p), free(a->m), free(a->v); }

static int save(const char *run, const Arrays *a, long long step, char *err, size_t errlen) {
    CheckpointOut c = {step, 1000 * step, 1.5 * step, a->p, a->m, a->v, a->n};
    return checkpoint_save(run, &c, "[model]\nn_layers = 2\n", err, errlen);
}

/* Load and compare bit for bit with a. */
static void assert_loads(const char *run, const Arrays *a, long long step) {
    Arrays b = arrays(a->n, 99);
    long long st = -1, tok = -1;
    double sec = -1;
    char *text = NULL, err[512] = "";
    int rc = checkpoint_load(run, b.p, b.m, b.v, a->n, &st, &tok, &sec, &text, err, sizeof err);
    if (rc) fail_msg("load: %s", err);
    assert_memory_equal(a->p, b.p, a->n * 4);
    assert_memory_equal(a->m, b.m, a->n * 4);
    assert_memory_equal(a->v, b.v, a->n * 4);
    assert_int_equal(st, step);
    assert_int_equal(tok, 1000 * step);
    assert_true(sec == 1.5 * step);
    assert_string_equal(text, "[model]\nn_layers = 2\n");
    free(text);
    arrays_free(&b);
}

static void test_checkpoint_roundtrip(void **state) {
    (void)state;
    char run[512], tmp[600], err[512] = "";
    tpath(run, sizeof run, "ck.h5");
    snprintf(tmp, sizeof tmp, "%s.ckpt.tmp", run);
    assert_false(checkpoint_exists(run));
    Arrays a = arrays(1000, 1);
    assert_int_equal(save(run, &a, 7, err, sizeof err), 0);
    assert_true(checkpoint_exists(run));
    assert_false(access(tmp, F_OK) == 0);
    assert_loads(run, &a, 7);
    /* a second save replaces the first */
    Arrays a2 = arrays(1000, 5);
    assert_int_equal(save(run, &a2, 8, err, sizeof err), 0);
    assert_loads(run, &a2, 8);

    /* n mismatch is refused with the exact message */
    Arrays b = arrays(999, 2);
    assert_int_equal(
        checkpoint_load(run, b.p, b.m, b.v, 999, NULL, NULL, NULL, NULL, err, sizeof err), -1);
    char want[700];
    snprintf(want, sizeof want, "checkpoint %s.ckpt holds 1000 parameters, the model has 999", run);
    assert_string_equal(err, want);
    arrays_free(&b), arrays_free(&a), arrays_free(&a2);
}

static void test_checkpoint_corrupt(void **state) {
    (void)state;
    char run[512], ck[600], err[512];
    tpath(run, sizeof run, "bad.h5");
    snprintf(ck, sizeof ck, "%s.ckpt", run);
    Arrays a = arrays(4096, 3);
    assert_int_equal(save(run, &a, 1, err, sizeof err), 0);
    size_t n;
    char *b = tu_slurp_ok(ck, &n);
    /* truncated */
    tu_write_file(ck, b, n / 2);
    char *text = (char *)1;
    assert_int_equal(
        checkpoint_load(run, a.p, a.m, a.v, a.n, NULL, NULL, NULL, &text, err, sizeof err), -1);
    assert_one_line(err);
    assert_non_null(strstr(err, ck));
    assert_null(text);
    /* garbage */
    memset(b, 0x5a, n);
    tu_write_file(ck, b, n);
    assert_int_equal(
        checkpoint_load(run, a.p, a.m, a.v, a.n, NULL, NULL, NULL, NULL, err, sizeof err), -1);
    assert_one_line(err);
    assert_non_null(strstr(err, ck));
    /* a run file is not a checkpoint */
    char rpath[512];
    tpath(rpath, sizeof rpath, "notckpt");
    snprintf(ck, sizeof ck, "%s.ckpt", rpath);
    Config cfg = test_config();
    RunFile *rf = runfile_create(ck, &cfg, NULL, 0, err, sizeof err);
    assert_non_null(rf);
    runfile_close(rf, rf_err, sizeof rf_err);
    assert_int_equal(
        checkpoint_load(rpath, a.p, a.m, a.v, a.n, NULL, NULL, NULL, NULL, err, sizeof err), -1);
    char want[700];
    snprintf(want, sizeof want, "%s: not a gatelab checkpoint (schema attribute)", ck);
    assert_string_equal(err, want);
    free(b);
    arrays_free(&a);
}

/* A full disk, simulated honestly even as root: RLIMIT_FSIZE makes every
 * write past the limit fail with EFBIG (SIGXFSZ ignored), exactly the
 * failure path of ENOSPC inside HDF5's write. */
static struct rlimit limit_file_size(rlim_t bytes) {
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = bytes;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    return old;
}

/* Files in tmpdir whose name starts with prefix and ends in ".tmp": the
 * temporaries a writer of prefix left behind. */
static int leftover_tmps(const char *prefix) {
    DIR *d = opendir(tmpdir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t k = strlen(e->d_name);
        n += !strncmp(e->d_name, prefix, strlen(prefix)) && k > 4 &&
             !strcmp(e->d_name + k - 4, ".tmp");
    }
    if (d) closedir(d);
    return n;
}

static void test_checkpoint_failed_save(void **state) {
    (void)state;
    char run[512], ck[600], err[512] = "";
    tpath(run, sizeof run, "full.h5");
    snprintf(ck, sizeof ck, "%s.ckpt", run);
    Arrays a = arrays(1000, 11);
    assert_int_equal(save(run, &a, 3, err, sizeof err), 0);

    Arrays big = arrays(200000, 12); /* 800 KB per array */
    struct rlimit old = limit_file_size(256 * 1024);
    int rc = save(run, &big, 4, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &old);
    assert_int_equal(rc, -1);
    assert_one_line(err);
    assert_non_null(strstr(err, ck));
    assert_int_equal(leftover_tmps("full.h5.ckpt"), 0); /* the partial temporary is gone */
    assert_loads(run, &a, 3);                           /* the old checkpoint is intact */
    arrays_free(&a), arrays_free(&big);
}

/* A checkpoint is written to a fresh temporary: a user's file hard-linked
 * at any name beside it ("RUN.h5.ckpt.tmp" included) keeps
 * its content. */
static void test_checkpoint_never_through_links(void **state) {
    (void)state;
    char run[512], victim[600], link1[600], err[512] = "";
    tpath(run, sizeof run, "linked.h5");
    tpath(victim, sizeof victim, "victim.txt");
    snprintf(link1, sizeof link1, "%s.ckpt.tmp", run);
    tu_write_text(victim, "precious\n");
    assert_int_equal(link(victim, link1), 0);
    Arrays a = arrays(1000, 21);
    assert_int_equal(save(run, &a, 2, err, sizeof err), 0);
    assert_loads(run, &a, 2);
    size_t n;
    char *got = tu_slurp_ok(victim, &n);
    assert_string_equal(got, "precious\n");
    free(got);
    arrays_free(&a);
}

/* The same simulated full disk while writing a run file's params. */
static void test_runfile_full_disk(void **state) {
    (void)state;
    char path[512], err[512] = "";
    tpath(path, sizeof path, "fullrun.h5");
    Config cfg = test_config();
    RunFile *rf = runfile_create(path, &cfg, NULL, 0, err, sizeof err);
    assert_non_null(rf);
    Arrays big = arrays(300000, 13);
    ParamInfo info = {.offset = 0, .numel = 300000, .ndim = 2, .shape = {300, 1000}};
    snprintf(info.name, PARAM_NAME, "lm_head");
    Model m;
    memset(&m, 0, sizeof m);
    m.table = (ParamTable){&info, 1, 300000};
    m.params = big.p;
    struct rlimit old = limit_file_size(256 * 1024);
    int rc = runfile_write_params(rf, &m, rf_err, sizeof rf_err);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", rf_err);
    /* the failed write left the file consistent: it still closes cleanly */
    int rc2 = runfile_close(rf, rf_err, sizeof rf_err);
    setrlimit(RLIMIT_FSIZE, &old);
    assert_int_equal(rc, -1);
    assert_one_line(msg);
    assert_non_null(strstr(msg, path));
    assert_non_null(strstr(msg, "reserve"));
    assert_int_equal(rc2, 0);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    char s[32];
    attr_str(f, "status", s, sizeof s);
    assert_string_equal(s, "running");
    assert_false(has_link(f, "/params/lm_head"));
    H5Fclose(f);
    arrays_free(&big);
}

/* Elements of one RS_PROBE_ARRAYS entry for this probe (its dims letters). */
static size_t table_elems(const ProbeRecord *p, const char *dims) {
    size_t n = 1;
    for (const char *c = dims; *c; c++) {
        switch (*c) {
        case 'L': n *= (size_t)p->L; break;
        case 'H': n *= (size_t)p->H; break;
        case 'T': n *= (size_t)p->T; break;
        case 'P': n *= (size_t)(p->M > 0 ? p->M : p->T); break;
        case 'N': n *= (size_t)p->N; break;
        case 'C': n *= (size_t)p->gate_channels; break;
        case 'S': n *= (size_t)p->gate_sample_n; break;
        case 'D': n *= (size_t)p->D; break;
        case 'B': n *= RS_GATE_BINS; break;
        case 'K': n *= RS_GATE_NBELOW; break;
        case 'M': n *= RS_GATE_NSTATS; break;
        case '3': n *= RS_HIDDEN_TOP; break;
        case 'G': n *= (size_t)p->gate_heads; break;
        default: fail_msg("unknown dims letter %c", *c);
        }
    }
    return n;
}

/* Every table array of got equals w's (w from make_probe, which must set
 * them all), with the same shape. */
static void assert_same_probe(const ProbeRecord *got, const ProbeRecord *w) {
    assert_int_equal(got->L, w->L), assert_int_equal(got->H, w->H);
    assert_int_equal(got->N, w->N), assert_int_equal(got->T, w->T);
    assert_int_equal(got->gate_channels, w->gate_channels);
    assert_int_equal(got->gate_sample_n, w->gate_sample_n);
#define RS_CHECK(member, ctype, cls, hid, name, dims, kind, desc)                                  \
    if (!w->member) fail_msg("make_probe leaves %s unset", name);                                  \
    if (!got->member) fail_msg("%s not read back", name);                                          \
    if (memcmp(got->member, w->member, table_elems(w, dims) * sizeof(ctype)))                      \
        fail_msg("%s differs after the round trip", name);
    RS_PROBE_ARRAYS(RS_CHECK)
#undef RS_CHECK
}

/* Every array of the schema table comes back from the reader as written
 * (so a new table line is covered once make_probe fills it). */
static void test_probe_table_roundtrip(void **state) {
    (void)state;
    char path[512], err[512];
    tpath(path, sizeof path, "table.h5");
    Probe q;
    write_closed_run(path, &q);
    RunReader *r = runread_open(path, err, sizeof err);
    if (!r) fail_msg("open: %s", err);
    ProbeRecord got;
    assert_int_equal(runread_probe(r, -1, &got, err, sizeof err), 0);
    assert_same_probe(&got, &q.p);
    runread_probe_free(&got);
    runread_close(r);
}

/* /intervene/<kind>: every probe array, loss, loss_n and clip_k written by
 * runfile_write_interventions (copy and rename) read back unchanged; a
 * second write replaces a kind; a missing kind is an error naming it; the
 * rest of the file (the probe) is kept. */
static void test_intervention_roundtrip(void **state) {
    (void)state;
    char path[512], err[512];
    tpath(path, sizeof path, "iv.h5");
    Probe q;
    write_closed_run(path, &q);
    InterventionOut out[3] = {
        {RS_IV_NONE, &q.p, 1.5, 40, 0, NULL, -1, NAN, NULL, 1.5, NAN, NAN},
        {RS_IV_BOS_CLIP, &q.p, 9.0, 1, 3, NULL, -1, NAN, NULL, 1.5, NAN, NAN},
        {RS_IV_MACT_ZERO, &q.p, 4.0, 40, 0, "mact-zero-L1", 1, 0.25, "0.1,1.0", 1.5, 7.5, 30}};
    assert_int_equal(runfile_write_interventions(path, out, 3, err, sizeof err), 0);
    out[1].loss = 2.25; /* rewritten: the new value wins */
    assert_int_equal(runfile_write_interventions(path, out + 1, 1, err, sizeof err), 0);
    RunReader *r = runread_open(path, err, sizeof err);
    if (!r) fail_msg("open: %s", err);
    for (int k = 0; k < 2; k++) {
        RunIntervention iv;
        if (runread_intervention(r, out[k].kind, &iv, err, sizeof err) != 0) fail_msg("%s", err);
        assert_true(iv.loss == out[k].loss);
        assert_int_equal(iv.loss_n, out[k].loss_n);
        assert_int_equal(iv.clip_k, out[k].clip_k);
        assert_int_equal(iv.probe.step, q.p.step);
        assert_same_probe(&iv.probe, &q.p);
        assert_string_equal(iv.kind, out[k].kind);
        assert_int_equal(iv.layer, -1);
        assert_true(isnan(iv.gate_const));
        assert_true(iv.loss_none == 1.5);
        assert_true(isnan(iv.mact_abs) && isnan(iv.mact_ratio));
        runread_intervention_free(&iv);
    }
    RunIntervention iv;
    /* a named group keeps its kind, layer, c and heads */
    if (runread_intervention(r, "mact-zero-L1", &iv, err, sizeof err) != 0) fail_msg("%s", err);
    assert_string_equal(iv.kind, RS_IV_MACT_ZERO);
    assert_int_equal(iv.layer, 1);
    assert_true(iv.gate_const == 0.25 && iv.loss == 4.0);
    assert_string_equal(iv.heads, "0.1,1.0");
    assert_true(iv.mact_abs == 7.5 && iv.mact_ratio == 30);
    runread_intervention_free(&iv);
    char **names;
    assert_int_equal(runread_intervention_names(r, &names, err, sizeof err), 3);
    assert_string_equal(names[0], RS_IV_BOS_CLIP);
    assert_string_equal(names[1], "mact-zero-L1");
    assert_string_equal(names[2], RS_IV_NONE);
    runread_names_free(names, 3);
    assert_int_equal(runread_has_intervention(r, RS_IV_NO_BOS), 0);
    assert_int_equal(runread_intervention(r, RS_IV_NO_BOS, &iv, err, sizeof err), -1);
    assert_non_null(strstr(err, "intervene/no-bos"));
    ProbeRecord p;
    assert_int_equal(runread_probe(r, -1, &p, err, sizeof err), 0);
    runread_probe_free(&p);
    runread_close(r);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_false(access(tmp, F_OK) == 0);
}

/* Set (replacing) the int64 attribute name of obj. */
static void set_attr_i64(hid_t obj, const char *name, long long v) {
    if (H5Aexists(obj, name) > 0) assert_true(H5Adelete(obj, name) >= 0);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, name, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Awrite(a, H5T_NATIVE_LLONG, &v) >= 0);
    H5Aclose(a);
    H5Sclose(sp);
}

/* Older files: a version-1 probe without gate_shared takes /config's (the
 * upgrade); the current version must carry it; versions outside 1..2 are
 * refused by the reader and by the writers that reopen a file. */
static void test_schema_versions(void **state) {
    (void)state;
    char path[512], err[512] = "", g[64];
    tpath(path, sizeof path, "versions.h5");
    Probe q;
    write_closed_run(path, &q);
    snprintf(g, sizeof g, RS_PROBE_PATH_FMT, 2LL);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t pg = H5Gopen2(f, g, H5P_DEFAULT), cg = H5Gopen2(f, RS_G_CONFIG, H5P_DEFAULT);
    assert_true(pg >= 0 && cg >= 0);
    assert_true(H5Adelete(pg, RS_P_GATE_SHARED) >= 0);
    set_attr_i64(cg, RS_CFG_GATE_SHARED, 1);
    H5Gclose(pg);
    H5Gclose(cg);
    H5Fclose(f);

    /* the current version: the missing attribute is refused, naming it */
    ProbeRecord p;
    RunReader *r = runread_open(path, err, sizeof err);
    if (!r) fail_msg("%s", err);
    assert_int_equal(runread_probe(r, -1, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "gate_shared"));
    assert_one_line(err);
    runread_close(r);

    /* version 1: upgraded from /config */
    static const long long versions[] = {1, 0, RUNFILE_SCHEMA_VERSION + 1};
    for (int i = 0; i < 3; i++) {
        f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
        assert_true(f >= 0);
        set_attr_i64(f, RS_SCHEMA_VERSION, versions[i]);
        H5Fclose(f);
        r = runread_open(path, err, sizeof err);
        if (i > 0) {
            assert_null(r);
            assert_non_null(strstr(err, "schema_version"));
            assert_null(runfile_reopen(path, -1, err, sizeof err));
            assert_non_null(strstr(err, "schema_version"));
            continue;
        }
        if (!r) fail_msg("%s", err);
        assert_int_equal(runread_meta(r)->schema_version, 1);
        if (runread_probe(r, -1, &p, err, sizeof err) != 0) fail_msg("%s", err);
        assert_int_equal(p.gate_shared, 1);
        runread_probe_free(&p);
        runread_close(r);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_and_read_back),
        cmocka_unit_test(test_null_model),
        cmocka_unit_test(test_label_from_fields),
        cmocka_unit_test(test_corrupt_chunk_detected),
        cmocka_unit_test(test_never_overwrite),
        cmocka_unit_test(test_reopen_truncates),
        cmocka_unit_test(test_reopen_bad_files),
        cmocka_unit_test(test_probe_table_roundtrip),
        cmocka_unit_test(test_intervention_roundtrip),
        cmocka_unit_test(test_checkpoint_roundtrip),
        cmocka_unit_test(test_checkpoint_corrupt),
        cmocka_unit_test(test_checkpoint_failed_save),
        cmocka_unit_test(test_checkpoint_never_through_links),
        cmocka_unit_test(test_runfile_full_disk),
        cmocka_unit_test(test_schema_versions),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
