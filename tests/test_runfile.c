/* test_runfile.c: the HDF5 run file (its probe tables, interventions and
 * schema versions: test_runfile_probe.c; checkpoints: test_checkpoint.c).
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
#include "runfile_fixture.h"
#include "runfile_read.h"
#include "testutil.h"

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
    tu_assert_msg_line(err);
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
    tu_assert_msg_line(err);
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
    tu_assert_msg_line(err);
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

/* The same simulated full disk while writing a run file's params. */
static void test_runfile_full_disk(void **state) {
    (void)state;
    char path[512], err[512] = "";
    tpath(path, sizeof path, "fullrun.h5");
    Config cfg = test_config();
    RunFile *rf = runfile_create(path, &cfg, NULL, 0, err, sizeof err);
    assert_non_null(rf);
    float *big = malloc(300000 * sizeof *big); /* varied values: deflate cannot shrink them */
    assert_non_null(big);
    for (unsigned i = 0; i < 300000; i++) big[i] = (float)(i * 2654435761u % 1000003u) / 1000003.0f;
    ParamInfo info = {.offset = 0, .numel = 300000, .ndim = 2, .shape = {300, 1000}};
    snprintf(info.name, PARAM_NAME, "lm_head");
    Model m;
    memset(&m, 0, sizeof m);
    m.table = (ParamTable){&info, 1, 300000};
    m.params = big;
    struct rlimit old = tu_limit_file_size(256 * 1024);
    int rc = runfile_write_params(rf, &m, rf_err, sizeof rf_err);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", rf_err);
    /* the failed write left the file consistent: it still closes cleanly */
    int rc2 = runfile_close(rf, rf_err, sizeof rf_err);
    setrlimit(RLIMIT_FSIZE, &old);
    assert_int_equal(rc, -1);
    tu_assert_msg_line(msg);
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
    free(big);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_and_read_back), cmocka_unit_test(test_null_model),
        cmocka_unit_test(test_label_from_fields),   cmocka_unit_test(test_corrupt_chunk_detected),
        cmocka_unit_test(test_never_overwrite),     cmocka_unit_test(test_reopen_truncates),
        cmocka_unit_test(test_reopen_bad_files),    cmocka_unit_test(test_runfile_full_disk),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
