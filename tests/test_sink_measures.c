/* test_sink_measures.c: the probe's measures beyond position 0 (key
 * alphas, distance profile, secondary sinks, cosine to position 0,
 * residual sinks) against numpy values computed from the plain-PyTorch
 * forward of two tiny Hugging Face checkpoints
 * (tests/reference/make_sink_measures_fixture.py -> hf/NAME/sinks.h5):
 * end to end through `gatelab inspect` and the run file, and through the
 * reducer with a planted residual sink; for a trained-architecture model
 * (fixtures/sinks/trained.h5, from gatelab.ref's forward) through the
 * trainer's probe; then an older run file without
 * the arrays, whose measures `sinks` and `acts` report as absent; and the
 * two dormant-head rules on a hand-built probe. */
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

#include "config_args.h"
#include "metrics_sinks.h"
#include "model.h"
#include "plot.h"
#include "probe.h"
#include "probe_reduce.h"
#include "runfile_read.h"
#include "runstats.h"
#include "sinkstats.h"
#include "testutil.h"

#define TOL 1e-4
static const char *FIXTURES[] = {"qwen2-bf16", "llama-f32"};

/* A whole dataset of file path as doubles (malloc'd); *n its size. */
static double *read_d(const char *path, const char *name, size_t *n) {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) fail_msg("cannot open %s", path);
    double *buf = tu_h5_read(f, name, H5T_NATIVE_DOUBLE, sizeof(double), n);
    H5Fclose(f);
    return buf;
}

/* |got - want| / (1 + |want|) <= TOL, naming the measure and index. */
static void near(const char *fix, const char *what, size_t i, double got, double want) {
    if (!(fabs(got - want) / (1.0 + fabs(want)) <= TOL))
        fail_msg("%s: %s[%zu] = %.7g, numpy %.7g", fix, what, i, got, want);
}

/* The fixture's tokens as two identical windows of a --tokens file. */
static void write_ids(const char *fix, const char *ids) {
    size_t n;
    char path[2048];
    snprintf(path, sizeof path, "%s/expected.h5", fix);
    double *tok = read_d(path, "tokens", &n);
    FILE *f = fopen(ids, "w");
    assert_non_null(f);
    for (int w = 0; w < 2; w++)
        for (size_t i = 0; i < n; i++) fprintf(f, "%d%c", (int)tok[i], i + 1 < n ? ' ' : '\n');
    fclose(f);
    free(tok);
}

static void check_profiles(const char *name, const char *ref, const ProbeRecord *p) {
    size_t n;
    double *ka = read_d(ref, "key_alpha", &n), *w = read_d(ref, "dist_weight", &n);
    double *m = read_d(ref, "dist_mass", &n), *cs = read_d(ref, "bos_cosine", &n);
    double *rs = read_d(ref, "resid_share", &n);
    const size_t LHT = (size_t)p->L * p->H * p->T, LT = (size_t)p->L * p->T;
    for (int s = 0; s < p->N; s++) { /* both windows are the reference's one */
        for (size_t i = 0; i < LHT; i++)
            near(name, "key_alpha", i, p->key_alpha[s * LHT + i], ka[i]);
        for (size_t i = 0; i < LT; i++)
            near(name, "bos_cosine", i, p->bos_cosine[s * LT + i], cs[i]);
    }
    assert_int_equal(n, (size_t)p->L * p->D);
    for (size_t i = 0; i < n; i++) near(name, "resid_share", i, p->resid_share[i], rs[i]);
    double *gw = malloc((size_t)p->M * sizeof *gw), *gm = malloc((size_t)p->M * sizeof *gm);
    for (int l = 0; l < p->L; l++) {
        assert_int_equal(ss_distance(p, l, gw, gm), 0);
        for (int d = 0; d < p->M; d++) {
            near(name, "dist_weight", (size_t)l * p->M + d, gw[d], w[l * p->M + d]);
            near(name, "dist_mass", (size_t)l * p->M + d, gm[d], m[l * p->M + d]);
        }
    }
    free(gw), free(gm), free(ka), free(w), free(m), free(cs), free(rs);
}

static void check_secondary(const char *name, const char *ref, const ProbeRecord *p) {
    size_t n, np;
    double *want = read_d(ref, "secsinks", &n), *peak = read_d(ref, "secsink_peak", &np);
    SecSink got[16];
    for (int s = 0; s < p->N; s++) {
        int k = ss_secondary(p, s, got, 16);
        if (k != (int)np)
            fail_msg("%s: %d secondary sinks on sequence %d, numpy %zu", name, k, s, np);
        for (int i = 0; i < k; i++) {
            assert_int_equal(got[i].pos, (int)want[3 * i]);
            assert_int_equal(got[i].layer, (int)want[3 * i + 1]);
            assert_int_equal(got[i].lifetime, (int)want[3 * i + 2]);
            near(name, "secsink_peak", (size_t)i, got[i].peak, peak[i]);
        }
    }
    free(want), free(peak);
}

/* The first series of a figure's NAME.dat (after the header comments)
 * into y[max]; returns how many values. */
static int dat_first_series(const char *path, double *y, int max) {
    char *text = tu_slurp_ok(path, NULL), *line = strtok(text, "\n");
    int n = 0, started = 0;
    for (; line; line = strtok(NULL, "\n")) {
        double x, v;
        if (line[0] == '#') {
            if (started) break; /* the next series */
            continue;
        }
        if (sscanf(line, "%lf %lf", &x, &v) == 2 && n < max) y[n++] = v, started = 1;
    }
    free(text);
    return n;
}

/* `gatelab plot key-share` and `distance` draw the means over layers and
 * heads of numpy's alpha_k and w(d). */
static void check_plots(const char *name, const char *ref, const char *run, const char *dir) {
    if (!plot_have_gnuplot()) {
        printf("gnuplot missing: the figures are not checked\n");
        return;
    }
    assert_int_equal(tu_run(tu_join(dir, "plot.log"), "plot key-share %s --out %s/k.png", run, dir),
                     0);
    assert_int_equal(tu_run(tu_join(dir, "plot.log"), "plot distance %s --out %s/d.png", run, dir),
                     0);
    size_t n, nw;
    double *ka = read_d(ref, "key_alpha", &n), *w = read_d(ref, "dist_weight", &nw), y[64];
    const int T = dat_first_series(tu_join(dir, "k.dat"), y, 64), LH = (int)(n / (size_t)T);
    assert_int_equal((size_t)T * LH, n);
    for (int k = 0; k < T; k++) {
        double want = 0.0;
        for (int i = 0; i < LH; i++) want += ka[(size_t)i * T + k] / LH;
        near(name, "key-share figure", (size_t)k, y[k], want);
    }
    const int L = (int)(nw / (size_t)T);
    assert_int_equal(dat_first_series(tu_join(dir, "d.dat"), y, 64), T);
    for (int d = 0; d < T; d++) {
        double want = 0.0;
        for (int l = 0; l < L; l++) want += w[(size_t)l * T + d] / L;
        near(name, "distance figure", (size_t)d, y[d], want);
    }
    free(ka), free(w);
}

/* `gatelab inspect` on the checkpoint, then the run file's arrays and the
 * profiles the analysis derives from them, against numpy. */
static void check_inspect(const char *name, const char *dir) {
    char fix[2048], ref[2100], ids[1100], run[1100], log[1100], err[512];
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/%s", tu_src(), name);
    snprintf(ref, sizeof ref, "%s/sinks.h5", fix);
    snprintf(ids, sizeof ids, "%s/%s.ids", dir, name);
    snprintf(run, sizeof run, "%s/%s.h5", dir, name);
    snprintf(log, sizeof log, "%s/%s.log", dir, name);
    write_ids(fix, ids);
    assert_int_equal(tu_run(log, "inspect %s --tokens %s --out %s", fix, ids, run), 0);
    RunReader *r = runread_open(run, err, sizeof err);
    if (!r) fail_msg("%s", err);
    ProbeRecord p;
    if (runread_probe(r, -1, &p, err, sizeof err) < 0) fail_msg("%s", err);
    assert_int_equal(p.N, 2), assert_int_equal(p.M, p.T);
    assert_non_null(p.key_alpha), assert_non_null(p.bos_cosine), assert_non_null(p.resid_share);
    check_profiles(name, ref, &p);
    check_secondary(name, ref, &p);
    runread_probe_free(&p);
    runread_close(r);
    check_plots(name, ref, run, dir);
}

/* The reducer fed the reference's own maps and block outputs, with one
 * feature multiplied by the fixture's boost: resid_share as numpy's. */
static void check_boost(const char *name) {
    char ref[2100], exp[2100];
    snprintf(ref, sizeof ref, "%s/tests/reference/hf/%s/sinks.h5", tu_src(), name);
    snprintf(exp, sizeof exp, "%s/tests/reference/hf/%s/expected.h5", tu_src(), name);
    size_t na, nh, nw, nt;
    double *att = read_d(exp, "attention", &na), *hid = read_d(exp, "hidden", &nh);
    double *want = read_d(ref, "resid_share_boost", &nw), *tok = read_d(exp, "tokens", &nt);
    const int T = (int)nt, L = 2, H = (int)(na / ((size_t)L * T * T)),
              d = (int)(nh / ((size_t)L * T));
    const int dim = 5; /* the script's BOOST_DIM, boost 50 */
    ProbeAcc a;
    ProbeShape s = {
        .L = L, .H = H, .N = 1, .T = T, .M = T, .d = d, .rows_normalised = 1, .threads = 1};
    assert_int_equal(probe_acc_init(&a, &s), 0);
    float *maps = malloc((size_t)H * T * T * sizeof *maps),
          *col = malloc((size_t)H * T * sizeof *col);
    float *h = malloc((size_t)T * d * sizeof *h);
    for (int l = 0; l < L; l++) {
        for (size_t i = 0; i < (size_t)H * T * T; i++)
            maps[i] = (float)att[(size_t)l * H * T * T + i];
        for (int i = 0; i < H * T; i++) col[i] = maps[(size_t)i * T];
        for (size_t i = 0; i < (size_t)T * d; i++)
            h[i] = (float)hid[(size_t)l * T * d + i] * (i % d == (size_t)dim ? 50.0f : 1.0f);
        ProbeLayer pl = {.layer = l,
                         .T = T,
                         .H = H,
                         .M = T,
                         .d = d,
                         .first_col = col,
                         .maps = maps,
                         .hidden = h};
        probe_acc_layer(&a, 0, &pl);
    }
    ProbeRecord p;
    probe_acc_finish(&a, &p);
    p.L = L;
    assert_int_equal(nw, (size_t)L * d);
    for (size_t i = 0; i < nw; i++) near(name, "resid_share_boost", i, p.resid_share[i], want[i]);
    for (int l = 0; l < L; l++) { /* the planted dimension is a residual sink */
        int dims[4];
        assert_true(ss_resid_dims(&p, l, dims, 4) >= 1);
        assert_int_equal(dims[0], dim);
    }
    runread_probe_free(&p);
    probe_acc_free(&a);
    free(maps), free(col), free(h), free(att), free(hid), free(want), free(tok);
}

/* The trainer's probe (probe_collect) on the two sequences of the case
 * the script used (its attr "case", var-g1-add-id) against gatelab.ref's
 * float64 forward. */
static void test_trained(void **st) {
    (void)st;
    char fx[2048], ref[2048], err[512];
    snprintf(fx, sizeof fx, "%s/tests/reference/fixtures/intervene/intervene.h5", tu_src());
    snprintf(ref, sizeof ref, "%s/tests/reference/fixtures/sinks/trained.h5", tu_src());
    hid_t f = H5Fopen(fx, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) fail_msg("cannot open %s", fx);
    TuFxCase c;
    tu_fx_case_open(&c, f, "var-g1-add-id");
    const int T = c.T, N = c.N;
    size_t n;
    ProbeInput in = {.tokens = c.tok, .N = N, .T = T, .step = 0};
    ProbeRecord p;
    if (probe_collect(&c.m, &c.s, &in, &p, NULL, err, sizeof err) != 0) fail_msg("%s", err);
    double *ka = read_d(ref, "key_alpha", &n);
    assert_int_equal(n, (size_t)N * p.L * p.H * T);
    for (size_t i = 0; i < n; i++) near("trained", "key_alpha", i, p.key_alpha[i], ka[i]);
    double prof[64]; /* from the mean maps: the mean over sequences of numpy's alpha_k */
    for (int l = 0; l < p.L; l++)
        for (int h = 0; h < p.H; h++) {
            assert_int_equal(ss_key_head(&p, l, h, prof), 0);
            for (int k = 0; k < T; k++) {
                double want = 0.0;
                for (int q = 0; q < N; q++)
                    want += ka[(((size_t)q * p.L + l) * p.H + h) * T + k] / N;
                near("trained", "alpha_k of the mean map", (size_t)k, prof[k], want);
            }
        }
    double *cs = read_d(ref, "bos_cosine", &n);
    for (size_t i = 0; i < n; i++) near("trained", "bos_cosine", i, p.bos_cosine[i], cs[i]);
    double *rs = read_d(ref, "resid_share", &n);
    assert_int_equal(n, (size_t)p.L * p.D);
    for (size_t i = 0; i < n; i++) near("trained", "resid_share", i, p.resid_share[i], rs[i]);
    double *w = read_d(ref, "dist_weight", &n), *ms = read_d(ref, "dist_mass", &n);
    double gw[64], gm[64];
    for (int l = 0; l < p.L; l++) {
        assert_int_equal(ss_distance(&p, l, gw, gm), 0);
        for (int d = 0; d < T; d++) {
            near("trained", "dist_weight", (size_t)l * T + d, gw[d], w[l * T + d]);
            near("trained", "dist_mass", (size_t)l * T + d, gm[d], ms[l * T + d]);
        }
    }
    double *ss = read_d(ref, "secsinks", &n), *peak = read_d(ref, "secsink_peak", &n);
    int total = 0;
    for (int q = 0; q < N; q++) {
        SecSink got[16];
        int k = ss_secondary(&p, q, got, 16);
        for (int i = 0; i < k; i++, total++) {
            assert_true(total < (int)n);
            assert_int_equal((int)ss[4 * total], q),
                assert_int_equal(got[i].pos, (int)ss[4 * total + 1]);
            assert_int_equal(got[i].layer, (int)ss[4 * total + 2]);
            assert_int_equal(got[i].lifetime, (int)ss[4 * total + 3]);
            near("trained", "secsink_peak", (size_t)total, got[i].peak, peak[total]);
        }
    }
    assert_int_equal(total, (int)n);
    assert_true(total > 0); /* the case has secondary sinks, so the test can fail */
    free(ka), free(cs), free(rs), free(w), free(ms), free(ss), free(peak);
    runread_probe_free(&p);
    tu_fx_case_close(&c);
    H5Fclose(f);
}

static void test_reference(void **st) {
    (void)st;
    char dir[64];
    snprintf(dir, sizeof dir, "%s", tu_tmpdir());
    for (size_t i = 0; i < sizeof FIXTURES / sizeof *FIXTURES; i++) {
        check_inspect(FIXTURES[i], dir);
        check_boost(FIXTURES[i]);
    }
    tu_rmtree(dir);
}

/* A run file written before the arrays: the profiles from the maps are
 * still there; secondary sinks, cosines and residual sinks are absent
 * (null in JSON, "absent" in text), never zero. */
static void test_old_file(void **st) {
    (void)st;
    char dir[64], fix[2048], ids[128], run[128], log[128];
    snprintf(dir, sizeof dir, "%s", tu_tmpdir());
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/%s", tu_src(), FIXTURES[0]);
    snprintf(ids, sizeof ids, "%s/ids", dir), snprintf(run, sizeof run, "%s/run.h5", dir);
    snprintf(log, sizeof log, "%s/log", dir);
    write_ids(fix, ids);
    assert_int_equal(tu_run(log, "inspect %s --tokens %s --out %s", fix, ids, run), 0);
    hid_t f = H5Fopen(run, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    assert_true(H5Ldelete(f, "/probe/step_0000000/key_alpha", H5P_DEFAULT) >= 0);
    assert_true(H5Ldelete(f, "/probe/step_0000000/hidden/bos_cosine", H5P_DEFAULT) >= 0);
    assert_true(H5Ldelete(f, "/probe/step_0000000/hidden/resid_share", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    assert_int_equal(tu_run(log, "sinks %s --json", run), 0);
    char *out = tu_slurp_ok(log, NULL);
    assert_non_null(strstr(out, "\"secondary_sinks\":null"));
    assert_non_null(strstr(out, "\"bos_cosine\":null"));
    assert_non_null(strstr(out, "\"alpha_k\":{"));
    free(out);
    assert_int_equal(tu_run(log, "acts %s --json", run), 0);
    out = tu_slurp_ok(log, NULL);
    assert_non_null(strstr(out, "\"residual_sinks\":null"));
    free(out);
    assert_int_equal(tu_run(log, "sinks %s", run), 0);
    out = tu_slurp_ok(log, NULL);
    assert_non_null(strstr(out, "absent: this run file has no per-sequence key alphas"));
    free(out);
    tu_rmtree(dir);
}

/* A resid_share whose width is not /config d_model is refused, naming it
 * (a tiny trained run: its /config has d_model). */
static void test_bad_width(void **st) {
    (void)st;
    char dir[64], run[128], log[128], err[512] = "";
    snprintf(dir, sizeof dir, "%s", tu_tmpdir());
    snprintf(run, sizeof run, "%s/run.h5", dir), snprintf(log, sizeof log, "%s/log", dir);
    assert_int_equal(
        tu_run(log, "train --config %s/experiments/tiny.ini --quiet --out %s", tu_src(), run), 0);
    hid_t f = H5Fopen(run, H5F_ACC_RDWR, H5P_DEFAULT);
    const char *ds = "/probe/step_0000060/hidden/resid_share";
    assert_true(f >= 0 && H5Ldelete(f, ds, H5P_DEFAULT) >= 0);
    hsize_t dims[2] = {2, 7};
    double zero[14] = {0};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t d = H5Dcreate2(f, ds, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, zero) >= 0);
    H5Dclose(d), H5Sclose(sp), H5Fclose(f);
    RunReader *r = runread_open(run, err, sizeof err);
    ProbeRecord p;
    assert_true(!r || runread_probe(r, 60, &p, err, sizeof err) < 0);
    if (!strstr(err, "D (residual width) = 7")) fail_msg("refused with: %s", err);
    if (r) runread_close(r);
    tu_rmtree(dir);
}

/* The two dormant-head rules (docs/metrics.md "Head probes") on a
 * hand-built probe of 2 layers x 2 heads, T = 3. Head 0 of each layer
 * outputs almost nothing (||o_t|| = 1e-4 against head 1's 1, score
 * 2e-4 / 1.0001 < 0.5); in layer 0 it attends each token to itself (no
 * first-token mass), in layer 1 every query to position 0 (share 1). The
 * norm rule finds both silent heads, the sink rule only the one with a
 * sink; head 1 is active under both. */
static void test_dormant_rules(void **st) {
    (void)st;
    enum { L = 2, H = 2, T = 3 };
    float att[L * H * T * T] = {0}, on[L * H * T];
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                float *row = att + (((size_t)l * H + h) * T + t) * T;
                row[l == 1 && h == 0 ? 0 : t] = 1.0f; /* the sink, else the diagonal */
                on[((size_t)l * H + h) * T + t] = h == 0 ? 1e-4f : 1.0f;
            }
    ProbeRecord p = {.L = L, .H = H, .N = 1, .T = T, .M = T, .attention = att, .head_out_norm = on};
    const int want_norm[L][H] = {{1, 0}, {1, 0}}, want_sink[L][H] = {{0, 0}, {1, 0}};
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            double score;
            assert_int_equal(rs_head_dormant(&p, l, h, DORMANT_BY_NORM, &score), want_norm[l][h]);
            assert_float_equal(score, h == 0 ? 2e-4 / 1.0001 : 2.0 / 1.0001, 1e-6);
            assert_int_equal(rs_head_dormant(&p, l, h, DORMANT_BY_SINK, &score), want_sink[l][h]);
        }
    assert_float_equal(rs_head_share(&p, 0, 0), 0.0, 1e-12);
    assert_float_equal(rs_head_share(&p, 1, 0), 1.0, 1e-12);
    assert_int_equal(ss_dormant_count(&p, DORMANT_BY_NORM), 2);
    assert_int_equal(ss_dormant_count(&p, DORMANT_BY_SINK), 1);
    p.head_out_norm = NULL; /* no output norms: neither rule can class a head */
    assert_int_equal(ss_dormant_count(&p, DORMANT_BY_NORM), -1);
    assert_int_equal(ss_dormant_count(&p, DORMANT_BY_SINK), -1);
}

/* Each probe records its extra slots (the slots attribute): 4 for the
 * registers' sink tokens, 0 for a plain run; the uniform reference counts
 * what the probe says (set to 2, it counts 2), and a file written before
 * the attribute takes the run's /config (4 again). */
static void set_slots(const char *run, long long v) {
    hid_t f = H5Fopen(run, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t g = H5Gopen2(f, "/probe/step_0000060", H5P_DEFAULT);
    assert_true(g >= 0 && H5Adelete(g, "slots") >= 0);
    if (v >= 0) {
        hid_t sp = H5Screate(H5S_SCALAR);
        hid_t a = H5Acreate2(g, "slots", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
        assert_true(a >= 0 && H5Awrite(a, H5T_NATIVE_LLONG, &v) >= 0);
        H5Aclose(a), H5Sclose(sp);
    }
    H5Gclose(g), H5Fclose(f);
}

static int probe_slots(const char *run, int *uniform) {
    char err[512];
    RunReader *r = runread_open(run, err, sizeof err);
    if (!r) fail_msg("%s", err);
    ProbeRecord p;
    if (runread_probe(r, 60, &p, err, sizeof err) != 0) fail_msg("%s", err);
    const int slots = p.slots;
    *uniform = rs_uniform_slots(r, &p, -1);
    for (int l = 0; l < p.L; l++) assert_int_equal(rs_uniform_slots(r, &p, l), *uniform);
    assert_null(p.layer_slots); /* every layer the same */
    runread_probe_free(&p);
    runread_close(r);
    return slots;
}

static void test_slots(void **st) {
    (void)st;
    char dir[64], run[128], base[128], log[128];
    int u;
    snprintf(dir, sizeof dir, "%s", tu_tmpdir());
    snprintf(run, sizeof run, "%s/reg.h5", dir), snprintf(base, sizeof base, "%s/base.h5", dir);
    snprintf(log, sizeof log, "%s/log", dir);
    assert_int_equal(tu_run(log,
                            "train --config %s/experiments/tiny.ini --set variant=registers "
                            "--quiet --out %s",
                            tu_src(), run),
                     0);
    assert_int_equal(
        tu_run(log, "train --config %s/experiments/tiny.ini --quiet --out %s", tu_src(), base), 0);
    assert_int_equal(probe_slots(base, &u), 0);
    assert_int_equal(u, 0);
    assert_int_equal(probe_slots(run, &u), 4);
    assert_int_equal(u, 4);
    set_slots(run, 2);
    assert_int_equal(probe_slots(run, &u), 2);
    assert_int_equal(u, 2);
    set_slots(run, -1); /* removed: a file from before the attribute */
    assert_int_equal(probe_slots(run, &u), -1);
    assert_int_equal(u, 4);
    tu_rmtree(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference),     cmocka_unit_test(test_trained),
        cmocka_unit_test(test_old_file),      cmocka_unit_test(test_bad_width),
        cmocka_unit_test(test_dormant_rules), cmocka_unit_test(test_slots)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
