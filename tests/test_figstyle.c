/* test_figstyle.c: a command's figure size and font (analysis/figures/figstyle.h)
 * in the gnuplot figures and the heatmaps, and the log axes of the line
 * figures (analysis/figures/gnuplot_axes.h): decades that end at the data,
 * labelled 10^k. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figstyle.h"
#include "gnuplot_axes.h"
#include "heatmap.h"
#include "plot.h"
#include "testutil.h"

/* --size takes WxH inches in bounds, --font points in bounds; a refusal
 * names the option and the value. */
static void test_take(void **state) {
    (void)state;
    FigStyle s = {0};
    char err[256];
    assert_int_equal(figstyle_take(&s, FIG_OPT_SIZE, "3.3x2.5", err, sizeof err), 0);
    assert_true(s.w_in == 3.3 && s.h_in == 2.5);
    assert_int_equal(figstyle_take(&s, FIG_OPT_FONT, "8", err, sizeof err), 0);
    assert_true(s.font_pt == 8.0);
    static const char *const bad_size[] = {"3x",      "x2",      "0.5x2", "3.3x2.5x",
                                           "3.3*2.5", "nanxnan", "41x2",  ""};
    for (size_t i = 0; i < sizeof bad_size / sizeof *bad_size; i++) {
        assert_int_equal(figstyle_take(&s, FIG_OPT_SIZE, bad_size[i], err, sizeof err), -1);
        assert_non_null(strstr(err, "--size"));
        tu_assert_msg_line(err);
    }
    static const char *const bad_font[] = {"3", "49", "8pt", "", "inf"};
    for (size_t i = 0; i < sizeof bad_font / sizeof *bad_font; i++) {
        assert_int_equal(figstyle_take(&s, FIG_OPT_FONT, bad_font[i], err, sizeof err), -1);
        assert_non_null(strstr(err, "--font"));
    }
    assert_true(s.w_in == 3.3 && s.h_in == 2.5 && s.font_pt == 8.0); /* refusals keep it */
    /* own: every figure at its own pixels, a later WxH replaces it */
    assert_int_equal(figstyle_take(&s, FIG_OPT_SIZE, "own", err, sizeof err), 0);
    assert_true(s.own && s.w_in == 0 && s.h_in == 0);
    figstyle_set(&s);
    figstyle_begin(900, 540, 1);
    assert_true(figstyle_get()->w_in == 0);
    int w, h;
    figstyle_px(900, 540, &w, &h);
    assert_int_equal(w, 900), assert_int_equal(h, 540);
    figstyle_set(&(FigStyle){0}); /* fitted: 900 px is wider than a page, 400 px is not */
    figstyle_begin(900, 540, 1);
    assert_true(figstyle_get()->w_in == FIG_PAGE_IN);
    figstyle_begin(400, 400, 1);
    assert_true(figstyle_get()->w_in == FIG_COLUMN_IN && figstyle_get()->h_in == FIG_COLUMN_IN);
    assert_int_equal(figstyle_take(&s, FIG_OPT_SIZE, "3x2", err, sizeof err), 0);
    assert_true(!s.own && s.w_in == 3.0);
}

/* The decades of a log axis end at the data, and their labels are 10 with
 * a superscript exponent. */
static void test_log_decades(void **state) {
    (void)state;
    int lo, hi;
    const double v[] = {NAN, 0.0, -1.0, 2e-5, 0.7, 3e-3};
    assert_int_equal(gp_log_decades(v, 6, &lo, &hi), 1);
    assert_int_equal(lo, -5), assert_int_equal(hi, 0);
    const double w[] = {1e-3, 0.001, 1e-3}; /* one power: one decade above it */
    assert_int_equal(gp_log_decades(w, 3, &lo, &hi), 1);
    assert_int_equal(lo, -3), assert_int_equal(hi, -2);
    const double none[] = {0.0, -2.0, NAN};
    assert_int_equal(gp_log_decades(none, 3, &lo, &hi), 0);
    char lab[48];
    gp_pow10_label(-4, lab, sizeof lab);
    assert_string_equal(lab, "10\u207b\u2074");
    gp_pow10_label(12, lab, sizeof lab);
    assert_string_equal(lab, "10\u00b9\u00b2");
    gp_pow10_label(0, lab, sizeof lab);
    assert_string_equal(lab, "10\u2070");
}

/* A log figure of values 2e-5 .. 0.7: its axis runs 1e-5 .. 1 with a tic
 * at each power of ten labelled 10^k; with no --size it is a page wide
 * (6.9 in), as high as its own 900 x 540 shape makes it (4.14 in), in the
 * page-fitted font, its PNG at 300 dpi. */
static void test_log_axis_script(void **state) {
    (void)state;
    if (!plot_have_gnuplot()) skip();
    figstyle_set(&(FigStyle){0});
    double x[3] = {0, 1, 2}, y[3] = {2e-5, 0.7, 3e-3};
    PlotSeries s = {"a", x, y, 3, PLOT_STEPS, 0, 0};
    PlotAxes ax = {"log", "x", {"share (log scale)", NULL}, 1, NULL, 0, 1};
    char png[512], gp[512], err[512] = "";
    tu_scratch_path(png, sizeof png, "log.png");
    tu_scratch_path(gp, sizeof gp, "log.gp");
    assert_int_equal(plot_lines(png, &ax, &s, 1, err, sizeof err), 0);
    tu_assert_png(png);
    assert_int_equal(tu_count_needle(gp, "set yrange [1e-5:1]"), 1);
    assert_int_equal(tu_count_needle(gp, "'10\u207b\u2075' 1e-5"), 1);
    assert_int_equal(tu_count_needle(gp, "'10\u2070' 1e0)"), 1);
    assert_int_equal(tu_count_needle(gp, "pdfcairo size 6.9 in,4.14 in noenhanced font 'sans,8'"),
                     1);
    assert_int_equal(tu_count_needle(gp, "pngcairo size 2070,1242 noenhanced font 'sans,8'"), 1);
    assert_int_equal(tu_count_needle(gp, "set key outside right top"), 1);
    /* a --font alone keeps the page width */
    figstyle_set(&(FigStyle){0, 0, 10, 0});
    assert_int_equal(plot_lines(png, &ax, &s, 1, err, sizeof err), 0);
    figstyle_set(&(FigStyle){0});
    assert_int_equal(tu_count_needle(gp, "pngcairo size 2070,1242 noenhanced font 'sans,10'"), 1);
}

/* --size 3.3x2.5 --font 8: the PDF 3.3 x 2.5 inches, the PNG at 300 dpi
 * (990 x 750), the font 8 points, the key below, the long title broken
 * into lines that fit. */
static void test_sized_script(void **state) {
    (void)state;
    if (!plot_have_gnuplot()) skip();
    figstyle_set(&(FigStyle){3.3, 2.5, 8, 0});
    double x[3] = {0, 1, 2}, y[3] = {1, 2, 3};
    PlotSeries s = {"a", x, y, 3, PLOT_LINES, 0, 0};
    PlotAxes ax = {"a title long enough that a column-wide figure cannot hold it on one line",
                   "x",
                   {"y", NULL},
                   1,
                   NULL,
                   0,
                   0};
    char png[512], gp[512], err[512] = "";
    tu_scratch_path(png, sizeof png, "sized.png");
    tu_scratch_path(gp, sizeof gp, "sized.gp");
    int rc = plot_lines(png, &ax, &s, 1, err, sizeof err);
    figstyle_set(&(FigStyle){0});
    assert_int_equal(rc, 0);
    assert_int_equal(tu_count_needle(gp, "pdfcairo size 3.3 in,2.5 in noenhanced font 'sans,8'"),
                     1);
    assert_int_equal(tu_count_needle(gp, "pngcairo size 990,750 noenhanced font 'sans,8'"), 1);
    assert_int_equal(tu_count_needle(gp, "set key below"), 1);
    assert_int_equal(tu_count_needle(gp, ".\"\\n\"."), 1); /* two lines of title */
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    assert_true(png_image_begin_read_from_file(&im, png));
    assert_int_equal(im.width, 990), assert_int_equal(im.height, 750);
    png_image_free(&im);
}

/* A T x T map with every query on token 0. */
static float *sink_map(int T) {
    float *A = calloc((size_t)T * T, sizeof *A);
    assert_non_null(A);
    for (int t = 0; t < T; t++) A[(size_t)t * T] = 1.0f;
    return A;
}

/* The PDF's page size in points, from its MediaBox. */
static void pdf_page(const char *path, double *w, double *h) {
    size_t n;
    char *d = tu_slurp(path, &n);
    assert_non_null(d);
    char *m = NULL;
    for (size_t i = 0; i + 10 < n && !m; i++)
        if (!memcmp(d + i, "/MediaBox", 9)) m = d + i;
    assert_non_null(m);
    assert_int_equal(sscanf(m, "/MediaBox [ 0 0 %lf %lf", w, h), 2);
    free(d);
}

/* A heatmap at a --size fits its box with square panels: one panel in a
 * 3.3 x 3.3 box fills its width (a 237.6-point PDF page, a 990-pixel PNG at
 * 300 dpi); a row of 8 panels in a 6.9 x 4 box fills the width and is
 * lower than the box; a box too small for the grid is refused in one line
 * naming --size. */
static void test_heatmap_sized(void **state) {
    (void)state;
    float *A = sink_map(16);
    HeatPanel p[8];
    for (int k = 0; k < 8; k++) p[k] = (HeatPanel){A, 16, "L0 H0", 0};
    HeatmapStyle st = {0, 0, 0.0f, 0.0f, 1, "a heatmap", 1, NULL};
    char pdf[512], png[512], err[512] = "";
    tu_scratch_path(pdf, sizeof pdf, "hm.pdf");
    tu_scratch_path(png, sizeof png, "hm.png");
    figstyle_set(&(FigStyle){3.3, 3.3, 8, 0});
    assert_int_equal(heatmap_write(pdf, p, 1, 1, &st, err, sizeof err), 0);
    assert_int_equal(heatmap_write(png, p, 1, 1, &st, err, sizeof err), 0);
    double w, h;
    pdf_page(pdf, &w, &h);
    assert_true(fabs(w - 237.6) < 0.01 && h <= 237.6 + 0.01);
    tu_assert_png(png);
    figstyle_set(&(FigStyle){6.9, 4, 9, 0});
    assert_int_equal(heatmap_write(pdf, p, 1, 8, &st, err, sizeof err), 0);
    pdf_page(pdf, &w, &h);
    assert_true(fabs(w - 6.9 * 72) < 0.01 && h < 4 * 72);
    figstyle_set(&(FigStyle){1, 1, 11, 0});
    assert_int_equal(heatmap_write(pdf, p, 1, 8, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, "--size 1x1"));
    tu_assert_msg_line(err);
    figstyle_set(&(FigStyle){0});
    free(A);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_take),
        cmocka_unit_test(test_log_decades),
        cmocka_unit_test_setup_teardown(test_log_axis_script, tu_scratch_setup,
                                        tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_sized_script, tu_scratch_setup, tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_heatmap_sized, tu_scratch_setup, tu_scratch_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
