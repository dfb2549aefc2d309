/* test_plot_panels.c: the legibility rules of a line figure with more
 * series than one drawn panel holds (analysis/figures/gnuplot.h): at most
 * PLOT_PER_PANEL series a part, each told apart by colour and by dash or
 * point type; the series spread evenly over the parts, which share one y
 * range and x tics that fit; a line and its points never split; the
 * reference (PLOT_REF) first in every part; points drawn over lines. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "testutil.h"

/* The plot commands of a .gp script, one string each (continuation lines
 * joined); returns the count. */
static int plot_commands(const char *gp, char cmds[][4096], int max) {
    char *text = tu_slurp(gp, NULL);
    assert_non_null(text);
    int n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        static int cont = 0;
        if (!cont && strncmp(line, "plot ", 5)) continue;
        if (!cont) {
            assert_true(n < max);
            cmds[n++][0] = 0;
        }
        strncat(cmds[n - 1], line, 4095 - strlen(cmds[n - 1]));
        size_t k = strlen(line);
        cont = k && line[k - 1] == '\\';
    }
    free(text);
    return n;
}

/* In one plot command: how many distinct colours, and that every series
 * differs from the others of another colour by its dash (lines) or point
 * type (points). Series of one colour: at most one line and one points. */
static int check_styles(const char *cmd) {
    char col[64][16], sty[64][16];
    int n = 0;
    for (const char *p = strstr(cmd, " index "); p; p = strstr(p + 1, " index ")) {
        const char *next = strstr(p + 1, " index "), *nt = strstr(p, "notitle");
        if (nt && (!next || nt < next)) continue; /* a points series' dark rim */
        const char *c = strstr(p, "lc rgb '");
        assert_non_null(c);
        snprintf(col[n], sizeof col[n], "%.7s", c + 8);
        const char *d = strstr(p, " dt "), *q = strstr(p, " pt ");
        int is_pts = q && (!next || q < next) && (!d || d > q);
        snprintf(sty[n], sizeof sty[n], "%c%.6s", is_pts ? 'p' : 'd', is_pts ? q + 4 : d + 4);
        n++;
    }
    int ncol = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++) {
            if (strcmp(col[i], col[j])) {
                /* another series: its dash or point type differs too */
                if (sty[i][0] == sty[j][0]) assert_string_not_equal(sty[i], sty[j]);
            } else {
                seen = 1;
                assert_true(sty[i][0] != sty[j][0]); /* a line and its points */
            }
        }
        ncol += !seen;
    }
    return ncol;
}

/* 13 runs in one panel (and, stacked, 8 runs each with a line and its
 * points): every drawn panel holds at most 6 series, each told apart by
 * colour and by dash or point type; the 13 spread 4 + 4 + 5 over parts
 * that share one y range (values 0..14, padded by 5%) and x tics 0.5
 * apart (x 0..2 cut into 4). */
static void test_panel_split(void **state) {
    (void)state;
    if (!plot_have_gnuplot()) skip();
    double x[3] = {0, 1, 2}, y[13][3];
    char lab[13][16];
    PlotSeries s[13 + 16];
    for (int i = 0; i < 13; i++) {
        for (int k = 0; k < 3; k++) y[i][k] = i + k;
        snprintf(lab[i], sizeof lab[i], "run %d", i);
        s[i] = (PlotSeries){lab[i], x, y[i], 3, PLOT_LINES, 0, 0};
    }
    PlotAxes ax = {"thirteen", "step", {"y", NULL}, 1, NULL, 0, 0};
    char png[512], gp[512], err[512] = "", cmds[16][4096];
    snprintf(png, sizeof png, "%s/split.png", tu_scratch);
    snprintf(gp, sizeof gp, "%s/split.gp", tu_scratch);
    int rc = plot_lines(png, &ax, s, 13, err, sizeof err);
    if (rc) fprintf(stderr, "plot_lines: %s\n", err);
    assert_int_equal(rc, 0);
    tu_assert_png(png);
    int n = plot_commands(gp, cmds, 16);
    assert_int_equal(n, 3);
    for (int i = 0; i < n; i++) assert_int_equal(check_styles(cmds[i]), i < 2 ? 4 : 5);
    assert_int_equal(tu_count_needle(gp, "(part 3 of 3)"), 1);
    assert_int_equal(tu_count_needle(gp, "set yrange [-0.7:14.7]"), 1); /* before the parts */
    assert_int_equal(tu_count_needle(gp, "set autoscale y"), 1);        /* after them */
    assert_int_equal(tu_count_needle(gp, "set xtics 0.5"), 1);

    /* two stacked panels, 8 runs each drawn as a line plus points of the
     * same colour key: 2 parts per panel, a run's pair never split */
    for (int i = 0; i < 8; i++) {
        s[2 * i] = (PlotSeries){lab[i], x, y[i], 3, PLOT_LINES, i + 1, i % 2};
        s[2 * i + 1] = (PlotSeries){lab[i], x, y[i + 1], 3, PLOT_POINTS, i + 1, i % 2};
    }
    for (int i = 0; i < 8; i++)
        s[16 + i] = (PlotSeries){lab[i], x, y[i], 3, PLOT_LINES, 100 + i, 1};
    PlotAxes ax2 = {"stacked", "step", {"a", "b"}, 2, NULL, 0, 0};
    snprintf(png, sizeof png, "%s/split2.png", tu_scratch);
    snprintf(gp, sizeof gp, "%s/split2.gp", tu_scratch);
    assert_int_equal(plot_lines(png, &ax2, s, 24, err, sizeof err), 0);
    tu_assert_png(png);
    n = plot_commands(gp, cmds, 16);
    assert_int_equal(n, 3); /* panel 0: 4 keys; panel 1: 4 + 8 keys -> 2 parts */
    for (int i = 0; i < n; i++) assert_true(check_styles(cmds[i]) <= PLOT_PER_PANEL);
}

/* 13 runs with run 7 the reference: it is drawn first, solid, in each of
 * the 3 parts (the other 12 as 4 + 4 + 4), 5 series a part. */
static void test_panel_reference(void **state) {
    (void)state;
    if (!plot_have_gnuplot()) skip();
    double x[3] = {0, 1, 2}, y[13][3];
    char lab[13][16], png[512], gp[512], err[512] = "", cmds[8][4096];
    PlotSeries s[13];
    for (int i = 0; i < 13; i++) {
        for (int k = 0; k < 3; k++) y[i][k] = i + k;
        snprintf(lab[i], sizeof lab[i], "run %d", i);
        s[i] = (PlotSeries){lab[i], x, y[i], 3, PLOT_LINES, i == 7 ? PLOT_REF : 0, 0};
    }
    PlotAxes ax = {"reference", "step", {"y", NULL}, 1, NULL, 0, 0};
    snprintf(png, sizeof png, "%s/ref.png", tu_scratch);
    snprintf(gp, sizeof gp, "%s/ref.gp", tu_scratch);
    assert_int_equal(plot_lines(png, &ax, s, 13, err, sizeof err), 0);
    tu_assert_png(png);
    int n = plot_commands(gp, cmds, 8);
    assert_int_equal(n, 3);
    for (int i = 0; i < n; i++) {
        assert_int_equal(check_styles(cmds[i]), 5);
        const char *first = strstr(cmds[i], " title ");
        assert_non_null(first);
        if (strncmp(first, " title 'run 7'", 14)) fail_msg("part %d: %.300s", i, cmds[i]);
        assert_non_null(strstr(cmds[i], "dt 1 ")); /* with the first style */
    }
    assert_int_equal(tu_count_needle(gp, "'run 7'"), 3);
}

/* Points are drawn after every line of their panel (a validation point is
 * not hidden under a later run's training line), and the figure has its
 * SVG and PDF twins beside the PNG. */
static void test_points_over_lines(void **state) {
    (void)state;
    if (!plot_have_gnuplot()) skip();
    double x[4] = {0, 1, 2, 3}, y[4] = {1, 2, 3, 4};
    PlotSeries s[3] = {
        {"a (val)", x, y, 4, PLOT_POINTS, 1, 0},
        {"a", x, y, 4, PLOT_LINES, 1, 0},
        {"b", x, y, 4, PLOT_LINES, 2, 0},
    };
    PlotAxes ax = {"order", "step", {"loss", NULL}, 1, NULL, 1, 0};
    char png[512], gp[512], svg[512], pdf[512], err[512] = "";
    const char *dir = tu_scratch;
    snprintf(png, sizeof png, "%s/o.png", dir);
    snprintf(gp, sizeof gp, "%s/o.gp", dir);
    snprintf(svg, sizeof svg, "%s/o.svg", dir);
    snprintf(pdf, sizeof pdf, "%s/o.pdf", dir);
    assert_int_equal(plot_lines(png, &ax, s, 3, err, sizeof err), 0);
    char cmds[4][4096];
    assert_int_equal(plot_commands(gp, cmds, 4), 1);
    const char *pts = strstr(cmds[0], "index 0 using"), *l1 = strstr(cmds[0], "index 1 using"),
               *l2 = strstr(cmds[0], "index 2 using");
    assert_true(pts && l1 && l2 && l1 < pts && l2 < pts);
    assert_int_equal(tu_count_needle(gp, "set yrange [0:*]"), 1);
    char *t = tu_slurp(svg, NULL);
    assert_non_null(t);
    assert_true(strncmp(t, "<?xml", 5) == 0);
    free(t);
    t = tu_slurp(pdf, NULL);
    assert_non_null(t);
    assert_true(strncmp(t, "%PDF-", 5) == 0);
    free(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_panel_split),
        cmocka_unit_test(test_panel_reference),
        cmocka_unit_test(test_points_over_lines),
    };
    return cmocka_run_group_tests(tests, tu_scratch_setup, tu_scratch_teardown);
}
