/* test_report_probes.c: the probe measures across seeds. The ratios and
 * summaries of sinkstats.h on a hand-built probe record, the results.csv
 * columns they make on run files built by hand (report_fixture.h) with
 * known key and value norms, input-gradient norms, W_V W_O ranks, gate
 * and head output norms, each against a recomputation here, and the
 * REPORT.md section "Probe measures across seeds" of two arms of two seeds,
 * from the run files and from results.csv alone. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <gsl/gsl_cdf.h>

#include "metric_table.h"
#include "report.h"
#include "runfile_read.h"
#include "sinkstats.h"
#include "testutil.h"
#include "report_fixture.h"

/* got within tol of want, or the test fails naming both */
#define assert_close(got, want, tol) near_at((got), (want), (tol), __LINE__)
static void near_at(double got, double want, double tol, int line) {
    if (!(fabs(got - want) <= tol)) fail_msg("line %d: got %.10g, want %.10g", line, got, want);
}

/* The median of v[n] (n odd or even: the mean of the middle two), by a
 * selection sort of a copy: kept apart from metrics.h median_sort. */
static double median_of(const double *v, int n) {
    double c[64];
    for (int i = 0; i < n; i++) c[i] = v[i];
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (c[j] < c[i]) {
                double x = c[i];
                c[i] = c[j], c[j] = x;
            }
    return n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
}

/* v[0] / median(v[1..n-1]) of a float or a double profile. */
static double ratio_f(const float *v, int n) {
    double r[64];
    for (int t = 1; t < n; t++) r[t - 1] = v[t];
    return v[0] / median_of(r, n - 1);
}
static double ratio_d(const double *v, int n) { return v[0] / median_of(v + 1, n - 1); }

/* The residual width of the fixture's runs (config_defaults' d_model):
 * resid_share's D must match it. */
enum { DM = 128 };

/* The profiles of one run: v 0 (baseline) or 1 (gated), seed s. */
static float g_knorm[L * H * T], g_vnorm[L * H * T], g_onorm[L * H * T];
static double g_grad[L * T], g_erank[L * H], g_gfirst[L], g_grest[L], g_resid[L * DM];

static void fill_profiles(int v, int s) {
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                const int i = (l * H + h) * T + t;
                g_knorm[i] = t == 0 ? 2.0f + v + 0.5f * s + 0.25f * l + 0.125f * h
                                    : 1.0f + 0.1f * (float)((t * 7 + h) % 5) + 0.05f * s;
                g_vnorm[i] = t == 0 ? 0.2f + 0.1f * v + 0.05f * s + 0.01f * (l + h)
                                    : 1.0f + 0.3f * (T - t) + 0.1f * l;
                g_onorm[i] = l == 0 && h == 0 && s == 2 ? 0.1f : 1.0f;
            }
    for (int l = 0; l < L; l++) {
        for (int t = 0; t < T; t++)
            g_grad[l * T + t] = t == 0 ? 5.0 + v + s + l : 1 + 0.5 * t * (l + 1);
        for (int h = 0; h < H; h++)
            g_erank[l * H + h] = 1.5 + 0.1 * (l * H + h) + 0.2 * s + 0.3 * v;
        g_gfirst[l] = 0.05 + 0.01 * s + 0.01 * l;
        g_grest[l] = 0.2 + 0.01 * l;
        for (int i = 0; i < DM; i++)
            g_resid[l * DM + i] = i == 1 || (l == 1 && i == 2 && s == 2) ? 0.9 : 0.1;
    }
}

/* g_probe_hook: the profiles of this run into its record. */
static void add_profiles(ProbeRecord *p, const char *variant, int seed) {
    fill_profiles(strcmp(variant, "baseline") != 0, seed);
    p->key_norm = g_knorm, p->value_norm = g_vnorm, p->head_out_norm = g_onorm;
    p->grad_in_norm = g_grad, p->ov_erank = g_erank;
    p->D = DM, p->resid_share = g_resid;
    if (p->gate_channels > 0) p->gate_first = g_gfirst, p->gate_rest = g_grest;
}

/* Each summary of sinkstats.h on a record of L = 2, H = 2, T = M = 6 with
 * known arrays, against the same sums taken here; a distance window of 3. */
static void test_summaries(void **state) {
    (void)state;
    enum { LL = 2, HH = 2, TT = 6 };
    float kn[LL * HH * TT], A[LL * HH * TT * TT];
    double gr[LL * TT], er[LL * HH];
    for (int i = 0; i < LL * HH * TT; i++) kn[i] = 0.5f + (float)((i * 5) % 7);
    for (int i = 0; i < LL * TT; i++) gr[i] = 1.0 + (i * 3) % 4;
    for (int i = 0; i < LL * HH; i++) er[i] = 2.0 + i;
    for (int lh = 0; lh < LL * HH; lh++) /* row t: weight (1 + j + lh) on j <= t, normalised */
        for (int t = 0; t < TT; t++) {
            double z = 0.0;
            for (int j = 0; j <= t; j++) z += 1 + j + lh;
            for (int j = 0; j < TT; j++)
                A[(lh * TT + t) * TT + j] = j <= t ? (float)((1 + j + lh) / z) : 0.0f;
        }
    ProbeRecord p = {.L = LL, .H = HH, .T = TT, .M = TT, .N = 1};
    p.key_norm = kn, p.grad_in_norm = gr, p.ov_erank = er, p.attention = A;
    double want = 0.0, near = 0.0, gw = 0.0, ew = 0.0;
    for (int lh = 0; lh < LL * HH; lh++) {
        want += ratio_f(kn + lh * TT, TT) / (LL * HH);
        double in = 0.0, all = 0.0;
        for (int t = 0; t < TT; t++)
            for (int j = 0; j <= t; j++) {
                all += A[(lh * TT + t) * TT + j];
                if (t - j < 3) in += A[(lh * TT + t) * TT + j];
            }
        near += in / all / (LL * HH);
        ew += er[lh] / (LL * HH);
    }
    for (int l = 0; l < LL; l++) gw += ratio_d(gr + l * TT, TT) / LL;
    assert_close(ss_lh_first_over_median(&p, kn, -1), want, 1e-6);
    for (int l = 0; l < LL; l++) { /* one layer: the mean over its heads alone */
        double wl = 0.0;
        for (int h = 0; h < HH; h++) wl += ratio_f(kn + (l * HH + h) * TT, TT) / HH;
        assert_close(ss_lh_first_over_median(&p, kn, l), wl, 1e-6);
    }
    assert_true(isnan(ss_lh_first_over_median(&p, kn, LL)));
    assert_close(ss_grad_first_over_median(&p), gw, 1e-12);
    assert_close(ss_distance_mass_near(&p, 3), near, 1e-6);
    assert_close(ss_ov_erank_mean(&p), ew, 1e-12);
    assert_close(ss_distance_mass_near(&p, SS_NEAR_DIST), 1.0, 1e-6); /* 8 > T */
    /* not stored, or a median of 0: NaN, never 0 */
    assert_true(isnan(ss_lh_first_over_median(&p, NULL, -1)));
    p.grad_in_norm = NULL, p.ov_erank = NULL;
    assert_true(isnan(ss_grad_first_over_median(&p)) && isnan(ss_ov_erank_mean(&p)));
    for (int t = 1; t < TT; t++) kn[t] = 0.0f;
    assert_true(isnan(ss_lh_first_over_median(&p, kn, -1)));
}

/* The section's text from its heading to the next one. */
static char *section(const char *md) {
    return tu_md_section(md, "## Probe measures across seeds (exploratory)");
}

/* " mean ± std |" of x[2] as the section prints it. */
static void cell2(char *out, size_t n, const double *x) {
    double m = 0.5 * (x[0] + x[1]), sd = fabs(x[0] - x[1]) / sqrt(2.0);
    snprintf(out, n, " %.4g ± %.2g |", m, sd);
}

static const char *const NEW_COLS[] = {"bos_key_norm_ratio",   "bos_value_norm_ratio",
                                       "gate_first_over_rest", "distance_mass_8",
                                       "bos_grad_norm_ratio",  "wvwo_rank_mean"};

/* Each new column of one run against the recomputation from its arrays. */
static void check_columns(const char *csv, const char *file, int v, int s) {
    const char *row = csv_row(csv, file);
    fill_profiles(v, s);
    double k = 0.0, val = 0.0, g = 0.0, e = 0.0, gf = 0.0, gr = 0.0;
    for (int lh = 0; lh < L * H; lh++) {
        k += ratio_f(g_knorm + lh * T, T) / (L * H);
        val += ratio_f(g_vnorm + lh * T, T) / (L * H);
        e += g_erank[lh] / (L * H);
    }
    for (int l = 0; l < L; l++) {
        g += ratio_d(g_grad + l * T, T) / L;
        gf += g_gfirst[l] / L, gr += g_grest[l] / L;
    }
    assert_close(csv_num(csv, row, "bos_key_norm_ratio"), k, 1e-6);
    assert_close(csv_num(csv, row, "bos_value_norm_ratio"), val, 1e-6);
    assert_close(csv_num(csv, row, "bos_grad_norm_ratio"), g, 1e-9);
    assert_close(csv_num(csv, row, "wvwo_rank_mean"), e, 1e-9);
    /* T = 4 < 8: every key is near, the whole mass of each map */
    assert_close(csv_num(csv, row, "distance_mass_8"), 1.0, 1e-6);
    if (v) assert_close(csv_num(csv, row, "gate_first_over_rest"), gf / gr, 1e-9);
    else assert_true(csv_blank(csv, row, "gate_first_over_rest"));
    assert_int_equal((int)csv_num(csv, row, "residual_sinks"), 2 + (s == 2));
    assert_int_equal((int)csv_num(csv, row, "dormant_heads_norm"), s == 2);
}

/* The arm's means line and the comparison line of measure name, the
 * col-th of the section, from the values of results.csv. */
static void check_measure(const char *sec, const char *csv, const char *name, int col) {
    const char *files[2][2] = {{"base_s1.h5", "base_s2.h5"}, {"g1_s1.h5", "g1_s2.h5"}};
    const char *lead[2] = {"\n| base | bigram | 2 |", "\n| g1 | bigram | 2 |"};
    double x[2][2];
    int have[2] = {1, 1};
    for (int a = 0; a < 2; a++)
        for (int s = 0; s < 2; s++) {
            const char *row = csv_row(csv, files[a][s]);
            if (csv_blank(csv, row, name)) have[a] = 0;
            else x[a][s] = csv_num(csv, row, name);
        }
    char want[512], cell[128], line[1024];
    for (int a = 0; a < 2; a++) { /* the col-th measure cell of the arm's line */
        const char *at = strstr(sec, lead[a]);
        assert_non_null(at);
        at += strlen(lead[a]);
        for (int c = 0; c < col; c++) at = strchr(at, '|') + 1;
        if (have[a]) cell2(cell, sizeof cell, x[a]);
        else snprintf(cell, sizeof cell, " — |");
        assert_memory_equal(at, cell, strlen(cell));
    }
    const MetricCol *m = metric_find(name);
    assert_non_null(m);
    if (m->anchor)
        snprintf(want, sizeof want, "| g1 | base | bigram | [%s](#%s) |", name, m->anchor);
    else snprintf(want, sizeof want, "| g1 | base | bigram | `%s` |", name);
    const char *cmp = strstr(sec, want);
    if (!have[0] && !have[1]) {
        assert_null(cmp);
        return;
    }
    assert_non_null(cmp);
    snprintf(line, sizeof line, "%.*s", (int)strcspn(cmp, "\n"), cmp);
    if (!have[0] || !have[1]) {
        snprintf(want, sizeof want, " %d / %d | – |", have[1] ? 2 : 0, have[0] ? 2 : 0);
        assert_non_null(strstr(line, want));
        return;
    }
    /* the seeds pair (1 and 2 in both arms): the mean paired difference
     * and the paired t-test's p of it, computed here (df = 1) */
    const double d0 = x[1][0] - x[0][0], d1 = x[1][1] - x[0][1], md = 0.5 * (d0 + d1);
    const double sd = fabs(d0 - d1) / sqrt(2.0);
    snprintf(want, sizeof want, "| paired t, Wilcoxon | 2 / 2 | %+.4g | [", md);
    assert_non_null(strstr(line, want));
    const double pt = sd > 0      ? 2.0 * gsl_cdf_tdist_Q(fabs(md) / (sd / sqrt(2.0)), 1.0)
                      : md != 0.0 ? 0.0
                                  : 1.0; /* all differences equal: t = +-inf, or 0 */
    if (pt < 1e-4) snprintf(want, sizeof want, "] | < 1e-4 | ");
    else snprintf(want, sizeof want, "] | %.3g | ", pt);
    assert_non_null(strstr(line, want));
    /* the smallest exact Wilcoxon p of 2 pairs is 1/2: never shown */
    assert_non_null(strstr(line, "| no difference shown |"));
}

static void make_arms(void) {
    g_probe_hook = add_profiles;
    make_run("base_s1.h5", "baseline", 1, 2.0, 0.5f, 0, 0);
    make_run("base_s2.h5", "baseline", 2, 2.1, 0.5f, 0, 0);
    make_run("g1_s1.h5", "g1-elem", 1, 1.9, 0.05f, 1, 0);
    make_run("g1_s2.h5", "g1-elem", 2, 1.95, 0.05f, 1, 0);
    g_probe_hook = NULL;
}

/* Two arms of two seeds: each new column against its recomputation, and
 * the section's means and comparisons from the columns; results.csv alone
 * gives the same section. */
static void test_section(void **state) {
    (void)state;
    char saved[256], path[600];
    enter_subdir(saved, sizeof saved, "probes");
    make_arms();
    char *md = report_in_subdir(saved);
    snprintf(path, sizeof path, "%s/probes/out/results.csv", saved);
    char *csv = tu_slurp_ok(path, NULL);
    check_columns(csv, "base_s1.h5", 0, 1);
    check_columns(csv, "base_s2.h5", 0, 2);
    check_columns(csv, "g1_s1.h5", 1, 1);
    check_columns(csv, "g1_s2.h5", 1, 2);
    char *sec = section(md);
    assert_non_null(sec);
    if (getenv("GATELAB_TEST_SHOW")) fprintf(stderr, "%s\n", sec);
    const MetricCol *mc[16];
    int nm = metric_seeds_columns(mc, 16);
    assert_int_equal(nm, 10);
    for (int j = 0; j < nm; j++) {
        char name[128];
        metric_name(mc[j], name, sizeof name);
        if (j < 6) assert_string_equal(name, NEW_COLS[j]);
        check_measure(sec, csv, name, j);
    }
    /* results.csv alone: the same section */
    snprintf(tu_scratch, sizeof tu_scratch, "%s", saved);
    enter_subdir(saved, sizeof saved, "probes_csv");
    snprintf(path, sizeof path, "%s/results.csv", tu_scratch);
    tu_write_text(path, csv);
    char *md2 = report_in_subdir(saved);
    char *sec2 = section(md2);
    assert_non_null(sec2);
    assert_string_equal(sec2, sec);
    free(sec2), free(md2), free(sec), free(csv), free(md);
}

/* Arms whose seeds do not pair (1, 2 against 3, 4) are compared by the
 * unpaired tests, every measure. */
static void test_section_unpaired(void **state) {
    (void)state;
    char saved[256];
    enter_subdir(saved, sizeof saved, "unpaired");
    g_probe_hook = add_profiles;
    make_run("base_s1.h5", "baseline", 1, 2.0, 0.5f, 0, 0);
    make_run("base_s2.h5", "baseline", 2, 2.1, 0.5f, 0, 0);
    make_run("g1_s3.h5", "g1-elem", 3, 1.9, 0.05f, 1, 0);
    make_run("g1_s4.h5", "g1-elem", 4, 1.95, 0.05f, 1, 0);
    g_probe_hook = NULL;
    char *md = report_in_subdir(saved), *sec = section(md);
    assert_non_null(sec);
    assert_null(strstr(sec, "| paired t, Wilcoxon |"));
    assert_non_null(strstr(sec, "| `bos_key_norm_ratio` | Welch, Mann–Whitney | 2 / 2 |"));
    free(sec), free(md);
}

/* csv with column col (0-based) of every record after the header
 * emptied; fields hold no quotes here. To be freed. */
static char *blank_column(const char *csv, int col) {
    char *out = malloc(strlen(csv) + 1), *o = out;
    int line = 0, field = 0;
    for (const char *c = csv; *c; c++) {
        if (*c == '\n') line++, field = 0;
        else if (*c == ',') field++;
        else if (line > 0 && field == col) continue;
        *o++ = *c;
    }
    *o = '\0';
    return out;
}

/* Run files whose probes store no head arrays still have the section, by
 * distance_mass_8 alone (the maps are always stored), every other measure
 * "—"; a results.csv in which no run has any of the measures has none. */
static void test_section_without_arrays(void **state) {
    (void)state;
    char saved[256], path[600];
    enter_subdir(saved, sizeof saved, "noarrays");
    make_run("base_s1.h5", "baseline", 1, 2.0, 0.5f, 0, 0);
    make_run("g1_s1.h5", "g1-elem", 1, 1.9, 0.05f, 1, 0);
    char *md = report_in_subdir(saved);
    char *sec = section(md);
    assert_non_null(sec);
    assert_non_null(strstr(sec, "| base | bigram | 1 | — | — | — | 1 | — | — | — | — | — | — |"));
    assert_non_null(strstr(sec, "| 1 / 1 | – | – | – | – | too few seeds (needs 2 per side) |"));
    snprintf(path, sizeof path, "%s/noarrays/out/results.csv", saved);
    char *csv = tu_slurp_ok(path, NULL);
    int col = 0; /* distance_mass_8's place in the header */
    for (const char *h = csv; strncmp(h, "distance_mass_8,", 16); h++) {
        assert_true(*h && *h != '\n');
        col += *h == ',';
    }
    char *none = blank_column(csv, col);
    snprintf(tu_scratch, sizeof tu_scratch, "%s", saved);
    enter_subdir(saved, sizeof saved, "noarrays_csv");
    snprintf(path, sizeof path, "%s/results.csv", tu_scratch);
    tu_write_text(path, none);
    char *md2 = report_in_subdir(saved);
    assert_null(strstr(md2, "## Probe measures across seeds"));
    assert_non_null(strstr(md2, "## Exploratory comparisons with the baseline"));
    free(md2), free(none), free(csv), free(sec), free(md);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summaries),
        cmocka_unit_test(test_section),
        cmocka_unit_test(test_section_unpaired),
        cmocka_unit_test(test_section_without_arrays),
    };
    report_set_figures(0); /* none of these looks at a figure */
    return cmocka_run_group_tests(tests, tu_scratch_setup, tu_scratch_teardown);
}
