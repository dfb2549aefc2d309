/* test_plot.c: gnuplot figures. With gnuplot on PATH, synthetic series and
 * bars must give a real PNG plus its .dat and .gp; with PATH pointing at an
 * empty directory the error must say how to install gnuplot. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

#include "testutil.h"
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "commands.h"
#include "metrics.h"
#include "plot.h"

static char dir[256];

static int setup(void **state) {
    (void)state;
    const char *d = tu_tmpdir();
    return d ? snprintf(dir, sizeof dir, "%s", d), 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    tu_rmtree(dir);
    return 0;
}

/* Remove the files of a flat directory, then the directory. */
static void rm_flat(const char *d) {
    DIR *dp = opendir(d);
    if (!dp) return;
    struct dirent *e;
    char p[1024];
    while ((e = readdir(dp)))
        if (e->d_name[0] != '.') {
            snprintf(p, sizeof p, "%s/%s", d, e->d_name);
            unlink(p);
        }
    closedir(dp);
    rmdir(d);
}

/* ---- tiny run files, written with the HDF5 API (schema: src/runfile/runfile.h) */

static void h5_attr_str(hid_t loc, const char *name, const char *v) {
    hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
    H5Tset_size(t, strlen(v) + 1);
    hid_t a = H5Acreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Awrite(a, t, v) >= 0);
    H5Aclose(a), H5Sclose(sp), H5Tclose(t);
}

static void h5_attr_i64(hid_t loc, const char *name, long long v) {
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, H5T_NATIVE_LLONG, sp, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Awrite(a, H5T_NATIVE_LLONG, &v) >= 0);
    H5Aclose(a), H5Sclose(sp);
}

static void h5_ds(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims,
                  const void *data) {
    hid_t sp = H5Screate_simple(rank, dims, NULL);
    hid_t d = H5Dcreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(d >= 0);
    assert_true(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
    H5Dclose(d), H5Sclose(sp);
}

enum { RL = 2, RT = 16 };

typedef struct {
    long long seed;
    double loss_add; /* added to every train and val loss */
    double mact1;    /* layer-1 max |h| (0: 700 with a sink, else 7) */
    const char *status;
} RunOpt;

static void make_run_opt(const char *path, const char *variant, int sink, const RunOpt *o);

/* One run, one probe at step 20. sink: every query attends to token 0
 * only; else uniform causal attention, plus a gate. */
static void make_run(const char *path, const char *variant, int sink) {
    RunOpt o = {1, 0, 0, "done"};
    make_run_opt(path, variant, sink, &o);
}

static void make_run_opt(const char *path, const char *variant, int sink, const RunOpt *o) {
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    h5_attr_str(f, "schema", "gatelab-run");
    h5_attr_i64(f, "schema_version", 1);
    h5_attr_str(f, "variant", variant);
    h5_attr_i64(f, "seed", o->seed);
    h5_attr_str(f, "status", o->status);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    long long step[4] = {0, 10, 20, 30}, tok[4] = {0, 160, 320, 480};
    double loss[4] = {5.5, 3.0, 2.5, 2.2}, one[4] = {1, 1, 1, 1};
    for (int k = 0; k < 4; k++) loss[k] += o->loss_add;
    hsize_t d4[1] = {4}, d2[1] = {2};
    hid_t g = H5Gcreate2(f, "metrics/train", lcpl, H5P_DEFAULT, H5P_DEFAULT);
    h5_ds(g, "step", H5T_NATIVE_LLONG, 1, d4, step);
    h5_ds(g, "loss", H5T_NATIVE_DOUBLE, 1, d4, loss);
    h5_ds(g, "lr", H5T_NATIVE_DOUBLE, 1, d4, one);
    h5_ds(g, "grad_norm", H5T_NATIVE_DOUBLE, 1, d4, one);
    h5_ds(g, "seconds", H5T_NATIVE_DOUBLE, 1, d4, one);
    h5_ds(g, "tokens", H5T_NATIVE_LLONG, 1, d4, tok);
    H5Gclose(g);
    g = H5Gcreate2(f, "metrics/eval", lcpl, H5P_DEFAULT, H5P_DEFAULT);
    long long es[2] = {0, 30};
    double vl[2] = {5.6 + o->loss_add, 2.4 + o->loss_add};
    h5_ds(g, "step", H5T_NATIVE_LLONG, 1, d2, es);
    h5_ds(g, "val_loss", H5T_NATIVE_DOUBLE, 1, d2, vl);
    h5_ds(g, "val_bpb", H5T_NATIVE_DOUBLE, 1, d2, vl);
    H5Gclose(g);

    g = H5Gcreate2(f, "probe/step_0000020", lcpl, H5P_DEFAULT, H5P_DEFAULT);
    h5_attr_i64(g, "step", 20);
    h5_attr_str(g, "normaliser", "softmax"); /* every writer records it; the reader requires it */
    static float A[RL][RT][RT], fc[RL][RT], a0[RL];
    for (int l = 0; l < RL; l++) {
        for (int t = 0; t < RT; t++)
            for (int j = 0; j < RT; j++)
                A[l][t][j] = j > t ? 0.0f : sink ? (j == 0) : 1.0f / (t + 1);
        for (int t = 0; t < RT; t++) fc[l][t] = A[l][t][0];
        a0[l] = (float)alpha0_from_col(fc[l], RT);
    }
    int tokens[RT] = {0};
    hsize_t da[4] = {RL, 1, RT, RT}, df[4] = {1, RL, 1, RT}, dt[2] = {1, RT}, d0[2] = {RL, 1};
    h5_ds(g, "attention", H5T_NATIVE_FLOAT, 4, da, A);
    h5_ds(g, "first_col", H5T_NATIVE_FLOAT, 4, df, fc);
    h5_ds(g, "tokens", H5T_NATIVE_INT, 2, dt, tokens);
    h5_ds(g, "alpha0", H5T_NATIVE_FLOAT, 2, d0, a0);
    if (sink) { /* key norms: 4 (l + 1) at position 0, 1 past it */
        static float kn[RL][1][RT];
        for (int l = 0; l < RL; l++)
            for (int t = 0; t < RT; t++) kn[l][0][t] = t ? 1.0f : 4.0f * (l + 1);
        hsize_t dk[3] = {RL, 1, RT};
        h5_ds(g, "key_norm", H5T_NATIVE_FLOAT, 3, dk, kn);
    }
    if (!sink) { /* a bounded gate: all scores in bin 2 (layer 0), 40 (1) */
        h5_attr_i64(g, "gate_channels", 4);
        h5_attr_i64(g, "gate_heads", 1);
        h5_attr_i64(g, "gate_bounded", 1);
        double cm[RL * 4] = {0}, hist[RL * 50] = {0}, z[RL * 4] = {0};
        hist[2] = 64, hist[50 + 40] = 64;
        hsize_t dc[2] = {RL, 4}, dh[2] = {RL, 50};
        h5_ds(g, "gate_channel_mean", H5T_NATIVE_DOUBLE, 2, dc, cm);
        h5_ds(g, "gate_hist", H5T_NATIVE_DOUBLE, 2, dh, hist);
        h5_ds(g, "gate_below", H5T_NATIVE_DOUBLE, 2, dc, z);
        h5_ds(g, "gate_stats", H5T_NATIVE_DOUBLE, 2, dc, z);
    }
    hid_t h = H5Gcreate2(g, "hidden", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    double mx[RL] = {3, o->mact1 > 0 ? o->mact1 : sink ? 700 : 7};
    double one2[RL] = {1, 1}, t3[RL * 3] = {0};
    hsize_t dl[1] = {RL}, d3[2] = {RL, 3};
    h5_ds(h, "max", H5T_NATIVE_DOUBLE, 1, dl, mx);
    h5_ds(h, "median", H5T_NATIVE_DOUBLE, 1, dl, one2);
    h5_ds(h, "top3", H5T_NATIVE_DOUBLE, 2, d3, t3);
    h5_ds(h, "kurtosis", H5T_NATIVE_DOUBLE, 1, dl, one2);
    h5_ds(h, "norm_ratio", H5T_NATIVE_DOUBLE, 1, dl, one2);
    H5Gclose(h), H5Gclose(g), H5Pclose(lcpl), H5Fclose(f);
}

/* The numbers on the line of path that starts with `key` (up to max). */
static int read_row(const char *path, const char *key, double *v, int max) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, strlen(key))) continue;
        char *p = line + strlen(key), *end;
        while (n < max) {
            double x = strtod(p, &end);
            if (end == p) break;
            v[n++] = x, p = end;
        }
        break;
    }
    fclose(f);
    return n;
}

static void test_report_figures_from_runs(void **state) {
    (void)state;
    if (!plot_have_gnuplot()) skip();
    char a[512], b[512], out[512], p[600], err[1024] = "";
    snprintf(a, sizeof a, "%s/sinky.h5", dir);
    snprintf(b, sizeof b, "%s/gated.h5", dir);
    snprintf(out, sizeof out, "%s/fig", dir);
    make_run(a, "baseline", 1);
    make_run(b, "g1-elem", 0);
    char *runs[2] = {a, b};
    int rc = plot_report_figures(out, runs, 2, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    const char *names[5] = {"loss", "first_share_layers", "gate_hist_g1-elem", "mact_layers",
                            "sink_vs_step"};
    for (int i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s/%s.png", out, names[i]);
        tu_assert_png(p);
    }
    /* the baseline has no gate, so no figure for it */
    snprintf(p, sizeof p, "%s/gate_hist_baseline.png", out);
    assert_int_equal(access(p, F_OK), -1);
    /* layer 1: sink share 1, uniform share (H_16 - 1)/15 */
    double v[4];
    snprintf(p, sizeof p, "%s/first_share_layers.dat", out);
    assert_int_equal(read_row(p, "1\t", v, 4), 2);
    assert_float_equal(v[0], 1.0, 1e-6);
    assert_float_equal(v[1], uniform_first_share(RT), 1e-6);
    snprintf(p, sizeof p, "%s/mact_layers.dat", out);
    assert_int_equal(read_row(p, "1\t", v, 4), 2);
    assert_float_equal(v[0], 700.0, 1e-9);
    assert_float_equal(v[1], 7.0, 1e-9);
    /* the key norm ratio of the run that stores key norms: 4 (l + 1) / 1 */
    snprintf(p, sizeof p, "%s/key_norm_layers.png", out);
    tu_assert_png(p);
    snprintf(p, sizeof p, "%s/key_norm_layers.dat", out);
    assert_true(read_row(p, "0\t", v, 4) >= 1);
    assert_float_equal(v[0], 4.0, 1e-6);
    assert_true(read_row(p, "1\t", v, 4) >= 1);
    assert_float_equal(v[0], 8.0, 1e-6);
    /* no run stores value norms: that figure is skipped */
    snprintf(p, sizeof p, "%s/value_norm_layers.png", out);
    assert_int_equal(access(p, F_OK), -1);
    /* sink rate: alpha_0 = 1 for the sink, H_16/16 = 0.211 < 0.3 else */
    snprintf(p, sizeof p, "%s/sink_vs_step.dat", out);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char line[256];
    double rows[4][2];
    int nr = 0;
    while (fgets(line, sizeof line, f) && nr < 4)
        if (line[0] != '#' && line[0] != '\n' &&
            sscanf(line, "%lf %lf", &rows[nr][0], &rows[nr][1]) == 2)
            nr++;
    fclose(f);
    assert_int_equal(nr, 4); /* 2 runs x 2 panels, one probe each */
    assert_float_equal(rows[0][0], 20.0, 0);
    assert_float_equal(rows[0][1], 1.0, 0);    /* baseline sink rate */
    assert_float_equal(rows[1][1], 1.0, 1e-6); /* baseline first share */
    assert_float_equal(rows[2][1], 0.0, 0);    /* g1-elem sink rate */
    assert_float_equal(rows[3][1], uniform_first_share(RT), 1e-6);
    /* gate histogram: layer 0 all in bin 2 (centre 0.05) */
    snprintf(p, sizeof p, "%s/gate_hist_g1-elem.dat", out);
    assert_int_equal(read_row(p, "0.05 ", v, 1), 1);
    assert_float_equal(v[0], 1.0, 1e-9);
    /* a missing run names itself */
    char missing[600];
    snprintf(missing, sizeof missing, "%s/none.h5", dir);
    char *bad[2] = {a, missing};
    assert_int_equal(plot_report_figures(out, bad, 2, err, sizeof err), -1);
    assert_non_null(strstr(err, "none.h5"));
    /* gate-hist of an ungated run is refused with a reason */
    snprintf(p, sizeof p, "%s/g.png", out);
    assert_int_equal(plot_figure("gate-hist", runs, 1, p, err, sizeof err), PLOT_BAD_INPUT);
    assert_non_null(strstr(err, "no gate"));
    /* clean up */
    rm_flat(out);
    unlink(a), unlink(b);
}

static void test_series_png(void **state) {
    (void)state;
    if (!plot_have_gnuplot()) skip();
    double x[50], y[50], y2[50];
    for (int i = 0; i < 50; i++) {
        x[i] = i * 10;
        y[i] = 5.5 * exp(-i / 15.0) + 1.0;
        y2[i] = i % 7 == 0 ? NAN : y[i] + 0.2;
    }
    PlotSeries s[3] = {
        {"run a", x, y, 50, PLOT_LINES, 1, 0},
        {"run 'b'", x, y2, 50, PLOT_POINTS, 2, 0},
        {"empty", x, y, 0, PLOT_LINES, 3, 0}, /* left out */
    };
    PlotAxes ax = {"synthetic loss", "step", {"loss", NULL}, 1, NULL, 0, 0};
    char png[512], dat[512], gp[512], err[512] = "";
    snprintf(png, sizeof png, "%s/series.png", dir);
    snprintf(dat, sizeof dat, "%s/series.dat", dir);
    snprintf(gp, sizeof gp, "%s/series.gp", dir);
    int rc = plot_lines(png, &ax, s, 3, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    tu_assert_png(png);
    /* two blocks of 50 rows, NaN gaps kept, the quote escaped */
    assert_int_equal(tu_count_needle(dat, "NaN"), 8);
    assert_int_equal(tu_count_needle(gp, "index 1 using"), 2); /* the points and their rim */
    assert_int_equal(tu_count_needle(gp, "index 2 using"), 0);
    assert_int_equal(tu_count_needle(gp, "'run ''b'''"), 1);
    /* by hand the script draws series.png (or .svg, .pdf by gatelab_fmt);
     * gatelab passes a temporary */
    assert_int_equal(tu_count_needle(gp, "gatelab_out = 'series.'.gatelab_fmt"), 1);
    assert_int_equal(tu_count_needle(gp, "gatelab_fmt = 'png'"), 1);
    assert_int_equal(tu_count_needle(gp, "set output gatelab_out"), 1);
}

static void test_two_panels_and_bars(void **state) {
    (void)state;
    if (!plot_have_gnuplot()) skip();
    double x[4] = {0, 100, 200, 300}, a[4] = {0, 0.25, 0.5, 1}, b[4] = {0.06, 0.2, 0.4, 0.7};
    PlotSeries s[2] = {{"r", x, a, 4, PLOT_LINES, 1, 0}, {"r", x, b, 4, PLOT_LINES, 1, 1}};
    PlotAxes ax = {"sinks", "step", {"sink rate", "first share"}, 2, NULL, 0, 0};
    char png[512], err[512] = "";
    snprintf(png, sizeof png, "%s/two.png", dir);
    assert_int_equal(plot_lines(png, &ax, s, 2, err, sizeof err), 0);
    tu_assert_png(png);

    const char *groups[2] = {"baseline", "g1-elem"};
    double v[2 * 3] = {0.4, 0.6, 0.5, 0.05, NAN, 0.04};
    double ref[1] = {0.0586};
    const char *refl[1] = {"uniform (T=64)"};
    PlotBars bars = {"first share", "layer", "share", 3, 2, groups, v, 1, ref, refl};
    snprintf(png, sizeof png, "%s/bars.png", dir);
    assert_int_equal(plot_bars(png, &bars, err, sizeof err), 0);
    tu_assert_png(png);
    char dat[512];
    snprintf(dat, sizeof dat, "%s/bars.dat", dir);
    assert_int_equal(tu_count_needle(dat, "g1-elem"), 1); /* header */
    assert_int_equal(tu_count_needle(dat, "NaN"), 1);
    char gp[512];
    snprintf(gp, sizeof gp, "%s/bars.gp", dir);
    assert_int_equal(tu_count_needle(gp, "set key below"), 0); /* short labels: at the right */
    /* a checkpoint's variant is too long for a key at the right: below */
    const char *long_groups[2] = {"baseline",
                                  "pretrained:LagunaForCausalLM:gate-g_proj-headwise-softplus"};
    bars.group_labels = long_groups;
    assert_int_equal(plot_bars(png, &bars, err, sizeof err), 0);
    tu_assert_png(png);
    assert_int_equal(tu_count_needle(gp, "set key below"), 1);
}

static void test_missing_gnuplot(void **state) {
    (void)state;
    char empty[300], png[512], err[512] = "";
    snprintf(empty, sizeof empty, "%s/emptybin", dir);
    mkdir(empty, 0777);
    const char *old = getenv("PATH");
    char *saved = old ? strdup(old) : NULL;
    setenv("PATH", empty, 1);
    assert_int_equal(plot_have_gnuplot(), 0);
    double x[2] = {0, 1}, y[2] = {1, 2};
    PlotSeries s = {"a", x, y, 2, PLOT_LINES, 0, 0};
    PlotAxes ax = {"t", "x", {"y", NULL}, 1, NULL, 0, 0};
    snprintf(png, sizeof png, "%s/series.png", dir);
    int rc = plot_lines(png, &ax, &s, 1, err, sizeof err);
    char run[] = "nonexistent.h5";
    char *runs[] = {run};
    char err2[512] = "";
    int rc2 = plot_report_figures(dir, runs, 1, err2, sizeof err2);
    if (saved) setenv("PATH", saved, 1);
    else unsetenv("PATH");
    free(saved);
    rmdir(empty);
    assert_int_equal(rc, -1);
    assert_string_equal(err, "gnuplot not found: install it with apt-get "
                             "install gnuplot-nox");
    assert_int_equal(rc2, -1);
    assert_string_equal(err2, err);
}

static void test_bad_outputs(void **state) {
    (void)state;
    double x[2] = {0, 1}, y[2] = {1, 2};
    PlotSeries s = {"a", x, y, 2, PLOT_LINES, 0, 0};
    PlotAxes ax = {"t", "x", {"y", NULL}, 1, NULL, 0, 0};
    char err[512] = "";
    /* not a .png */
    assert_int_equal(plot_lines("/tmp/x.jpg", &ax, &s, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "/tmp/x.jpg"));
    /* a quote would break the script */
    assert_int_equal(plot_lines("/tmp/it's.png", &ax, &s, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "quote"));
    /* a missing directory names the data file it could not write */
    const char *bad = "/nonexistent-gatelab-dir/fig.png";
    assert_int_equal(plot_lines(bad, &ax, &s, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent-gatelab-dir/fig.dat"));
    /* nothing to draw */
    char png[512];
    snprintf(png, sizeof png, "%s/nodata.png", dir);
    s.n = 0;
    assert_int_equal(plot_lines(png, &ax, &s, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "no data"));
    assert_int_equal(access(png, F_OK), -1);
}

static void test_cmd_plot_usage(void **state) {
    (void)state;
    char a0[] = "plot", k[] = "loss", bogus[] = "bogus", run[] = "/nonexistent/r.h5";
    char o[] = "--out", f[] = "/tmp/x.png", help[] = "--help";
    char *v1[] = {a0, help, NULL};
    assert_int_equal(cmd_plot(2, v1), 0);
    char *v2[] = {a0, bogus, run, o, f, NULL};
    assert_int_equal(cmd_plot(5, v2), 2); /* unknown kind */
    char *v3[] = {a0, k, run, NULL};
    assert_int_equal(cmd_plot(3, v3), 2); /* no --out */
    char *v4[] = {a0, k, run, o, f, NULL};
    assert_int_equal(cmd_plot(5, v4), 2); /* missing run file */
    char *v5[] = {a0, k, o, f, NULL};
    assert_int_equal(cmd_plot(4, v5), 2); /* no runs */
}

/* The first data value after the block headed "# label" in a lines .dat. */
static int block_first_y(const char *path, const char *label, double *y) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512], head[300];
    snprintf(head, sizeof head, "# %s\n", label);
    int in = 0, ok = 0;
    while (!ok && fgets(line, sizeof line, f)) {
        if (line[0] == '#') in = !strcmp(line, head) || (in && line[2] == 'x');
        else if (in && sscanf(line, "%*f %lf", y) == 1) ok = 1;
    }
    fclose(f);
    return ok;
}

/* Two seeds of one run name become one series: the mean, with min..max
 * error bars on the bar figures. */
static void test_report_aggregates_seeds(void **state) {
    (void)state;
    if (!plot_have_gnuplot()) skip();
    char d[300], a[400], b[400], c[400], out[400], p[500], err[1024] = "";
    snprintf(d, sizeof d, "%s/agg", dir);
    snprintf(out, sizeof out, "%s/fig", d);
    mkdir(d, 0777);
    snprintf(a, sizeof a, "%s/base_s1.h5", d);
    snprintf(b, sizeof b, "%s/base_s2.h5", d);
    snprintf(c, sizeof c, "%s/gate_s1.h5", d);
    RunOpt o1 = {1, 0, 700, "done"}, o2 = {2, 1, 900, "done"};
    make_run_opt(a, "baseline", 1, &o1);
    make_run_opt(b, "baseline", 1, &o2);
    make_run(c, "g1-elem", 0);
    char *runs[3] = {a, b, c};
    int rc = plot_report_figures(out, runs, 3, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    /* layer 1 of mact: base mean 800 in [700, 900], gate 7 in [7, 7] */
    double v[8];
    snprintf(p, sizeof p, "%s/mact_layers.dat", out);
    assert_int_equal(read_row(p, "1\t", v, 8), 6);
    assert_float_equal(v[0], 800.0, 1e-9);
    assert_float_equal(v[1], 700.0, 1e-9);
    assert_float_equal(v[2], 900.0, 1e-9);
    assert_float_equal(v[3], 7.0, 1e-9);
    assert_float_equal(v[5], 7.0, 1e-9);
    assert_int_equal(tu_count_needle(p, "base min"), 1); /* labelled by run name */
    snprintf(p, sizeof p, "%s/mact_layers.gp", out);
    assert_int_equal(tu_count_needle(p, "errorbars"), 1);
    snprintf(p, sizeof p, "%s/first_share_layers.dat", out);
    assert_int_equal(read_row(p, "1\t", v, 8), 6);
    assert_float_equal(v[0], 1.0, 1e-6);
    assert_float_equal(v[3], uniform_first_share(RT), 1e-6);
    /* loss: one line per run name; the 20-step average of 4 points is
     * their mean, (5.5+3+2.5+2.2)/4 = 3.3, plus the seeds' mean offset 0.5 */
    snprintf(p, sizeof p, "%s/loss.dat", out);
    assert_int_equal(tu_count_needle(p, "# base\n"), 1);
    assert_int_equal(tu_count_needle(p, "# gate\n"), 1);
    assert_int_equal(tu_count_needle(p, "seed"), 0);
    double y;
    assert_true(block_first_y(p, "base", &y));
    assert_float_equal(y, 3.8, 1e-9);
    assert_true(block_first_y(p, "base (val)", &y));
    assert_float_equal(y, 6.1, 1e-9);
    assert_true(block_first_y(p, "gate", &y));
    assert_float_equal(y, 3.3, 1e-9);
    snprintf(p, sizeof p, "%s/sink_vs_step.dat", out);
    assert_int_equal(tu_count_needle(p, "# base\n"), 2); /* one per panel */
    /* gatelab plot keeps one series per file */
    snprintf(p, sizeof p, "%s/one.png", out);
    assert_int_equal(plot_figure("mact", runs, 3, p, err, sizeof err), 0);
    snprintf(p, sizeof p, "%s/one.dat", out);
    assert_int_equal(read_row(p, "1\t", v, 8), 3);
    assert_float_equal(v[0], 700.0, 1e-9);
    assert_float_equal(v[1], 900.0, 1e-9);
    rm_flat(out);
    rm_flat(d);
}

/* More than 8 run names: line figures keep baseline, g1-elem, g1-head and
 * diverged runs and say so; bar figures put the run names on x. */
static void test_report_key_subset(void **state) {
    (void)state;
    if (!plot_have_gnuplot()) skip();
    char d[300], out[400], p[500], err[1024] = "";
    char paths[10][400], *runs[10];
    snprintf(d, sizeof d, "%s/many", dir);
    snprintf(out, sizeof out, "%s/fig", d);
    mkdir(d, 0777);
    for (int i = 0; i < 10; i++) {
        const char *var = i == 0 ? "baseline" : i == 1 ? "g1-head" : "g2-elem";
        RunOpt o = {1, 0, 0, i == 5 ? "diverged" : "done"};
        snprintf(paths[i], sizeof paths[i], "%s/r%d_s1.h5", d, i);
        make_run_opt(paths[i], var, i == 0, &o);
        runs[i] = paths[i];
    }
    int rc = plot_report_figures(out, runs, 10, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    snprintf(p, sizeof p, "%s/loss.dat", out);
    assert_int_equal(tu_count_needle(p, "# r0\n"), 1);
    assert_int_equal(tu_count_needle(p, "# r1\n"), 1);
    assert_int_equal(tu_count_needle(p, "# r5\n"), 1);
    assert_int_equal(tu_count_needle(p, "# r2\n"), 0);
    assert_int_equal(tu_count_needle(p, "# x y"), 6); /* 3 runs, train + val */
    snprintf(p, sizeof p, "%s/loss.gp", out);
    /* the title says so (broken into lines at the page's width) */
    assert_int_equal(tu_count_needle(p, "key runs;"), 1);
    assert_int_equal(tu_count_needle(p, "results.csv"), 1);
    snprintf(p, sizeof p, "%s/sink_vs_step.dat", out);
    assert_int_equal(tu_count_needle(p, "# x y"), 6);
    /* bars: one row per run name, one bar per layer, names rotated */
    snprintf(p, sizeof p, "%s/first_share_layers.dat", out);
    double v[4];
    assert_int_equal(read_row(p, "\"r0\"\t", v, 4), 2);
    assert_float_equal(v[0], 1.0, 1e-6);
    assert_float_equal(v[1], 1.0, 1e-6);
    assert_int_equal(read_row(p, "\"r9\"\t", v, 4), 2);
    assert_float_equal(v[0], uniform_first_share(RT), 1e-6);
    snprintf(p, sizeof p, "%s/first_share_layers.gp", out);
    assert_int_equal(tu_count_needle(p, "rotate by -45"), 1);
    char ulab[64]; /* the reference's value and its pattern */
    snprintf(ulab, sizeof ulab, "uniform %.3f (T=16)", uniform_first_share(RT));
    assert_int_equal(tu_count_needle(p, ulab), 1);
    /* its own 1600 x 640 pixels, a page wide: 6.9 x 2.76 in */
    assert_int_equal(tu_count_needle(p, "pdfcairo size 6.9 in,2.76 in"), 1);
    rm_flat(out);
    rm_flat(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_series_png),
        cmocka_unit_test(test_two_panels_and_bars),
        cmocka_unit_test(test_missing_gnuplot),
        cmocka_unit_test(test_bad_outputs),
        cmocka_unit_test(test_cmd_plot_usage),
        cmocka_unit_test(test_report_figures_from_runs),
        cmocka_unit_test(test_report_aggregates_seeds),
        cmocka_unit_test(test_report_key_subset),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
