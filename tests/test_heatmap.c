/* test_heatmap.c: the colormap and the heatmap writer, checked by reading
 * the PNG back through libpng and looking at known pixels, and by the
 * leading bytes of its SVG and PDF twins. */
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
#include <unistd.h>

#include "figstyle.h"
#include "heatmap.h"

/* Layout constants of analysis/figures/heatmap.c (documented at its top). */
#define MARGIN 10
#define GAP 16
#define TITLE_H 24
#define BAR_GAP 16
#define BAR_W 16
static const unsigned char MASK_GREY[3] = {160, 160, 160};

typedef struct {
    unsigned char *px; /* [h, w, 3] */
    int w, h;
} Image;

static Image read_png(const char *path) {
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    assert_true(png_image_begin_read_from_file(&im, path));
    im.format = PNG_FORMAT_RGB;
    Image out = {malloc(PNG_IMAGE_SIZE(im)), (int)im.width, (int)im.height};
    assert_non_null(out.px);
    assert_true(png_image_finish_read(&im, NULL, out.px, 0, NULL));
    return out;
}

static const unsigned char *pix(const Image *im, int x, int y) {
    assert_true(x >= 0 && x < im->w && y >= 0 && y < im->h);
    return im->px + ((size_t)y * (size_t)im->w + (size_t)x) * 3;
}

static void assert_rgb(const unsigned char *got, const unsigned char want[3]) {
    assert_int_equal(got[0], want[0]);
    assert_int_equal(got[1], want[1]);
    assert_int_equal(got[2], want[2]);
}

static void tmp_path(char *buf, size_t n, const char *tag) {
    snprintf(buf, n, "/tmp/gatelab_test_heatmap_%ld_%s.png", (long)getpid(), tag);
}

/* A[T,T] with every query attending only to token 0 (the perfect sink). */
static float *sink_map(int T) {
    float *A = calloc((size_t)T * (size_t)T, sizeof(float));
    assert_non_null(A);
    for (int t = 0; t < T; t++) A[(size_t)t * (size_t)T] = 1.0f;
    return A;
}

static double luminance(const unsigned char c[3]) {
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}

static void test_colormap_endpoints(void **state) {
    (void)state;
    unsigned char lo[3], hi[3], c[3];
    colormap_viridis(0.0f, lo);
    colormap_viridis(1.0f, hi);
    /* dark purple: blue and red above green, all dark */
    assert_true(lo[2] > lo[1] && lo[0] > lo[1]);
    assert_true(luminance(lo) < 40.0);
    /* yellow: red and green high, blue low */
    assert_true(hi[0] > 200 && hi[1] > 200 && hi[2] < 80);
    /* out of range and NaN clamp to the ends */
    colormap_viridis(-3.0f, c);
    assert_rgb(c, lo);
    colormap_viridis(NAN, c);
    assert_rgb(c, lo);
    colormap_viridis(7.0f, c);
    assert_rgb(c, hi);
}

static void test_colormap_luminance_monotone(void **state) {
    (void)state;
    unsigned char c[3];
    colormap_viridis(0.0f, c);
    double prev = luminance(c), first = prev;
    for (int i = 1; i <= 1000; i++) {
        colormap_viridis((float)i / 1000.0f, c);
        double L = luminance(c);
        /* per-channel rounding may wobble luminance by < 0.5 */
        assert_true(L >= prev - 0.5);
        prev = L;
    }
    assert_true(prev - first > 150.0);
    /* and strictly increasing at a coarse step */
    colormap_viridis(0.0f, c);
    prev = luminance(c);
    for (int i = 1; i <= 20; i++) {
        colormap_viridis((float)i / 20.0f, c);
        assert_true(luminance(c) > prev);
        prev = luminance(c);
    }
}

static void test_single_panel_pixels(void **state) {
    (void)state;
    const int T = 8, cell = 10;
    float *A = sink_map(T);
    HeatPanel p = {A, T, NULL, 0};
    HeatmapStyle st = {0, cell, 0.0f, 1.0f, 0, NULL, 0, NULL};
    char path[256], err[256] = "";
    tmp_path(path, sizeof path, "single");
    assert_int_equal(heatmap_write(path, &p, 1, 1, &st, err, sizeof err), 0);
    Image im = read_png(path);
    assert_int_equal(im.w, 2 * MARGIN + T * cell);
    assert_int_equal(im.h, 2 * MARGIN + TITLE_H + T * cell);
    int x0 = MARGIN, y0 = MARGIN + TITLE_H;
    unsigned char one[3], zero[3];
    colormap_viridis(1.0f, one);
    colormap_viridis(0.0f, zero);
    /* query 0, key 7: the future, masked */
    assert_rgb(pix(&im, x0 + 7 * cell + 5, y0 + 0 * cell + 5), MASK_GREY);
    /* query 2, key 5: masked too; query 5, key 3: visible zero */
    assert_rgb(pix(&im, x0 + 5 * cell + 5, y0 + 2 * cell + 5), MASK_GREY);
    assert_rgb(pix(&im, x0 + 3 * cell + 5, y0 + 5 * cell + 5), zero);
    /* the sink column, every query, both corners of the cell */
    for (int t = 0; t < T; t++) {
        assert_rgb(pix(&im, x0 + 0, y0 + t * cell), one);
        assert_rgb(pix(&im, x0 + cell - 1, y0 + t * cell + cell - 1), one);
    }
    /* the diagonal of a later query is visible (zero), not masked */
    assert_rgb(pix(&im, x0 + 6 * cell + 5, y0 + 6 * cell + 5), zero);
    /* the margin is white background */
    const unsigned char white[3] = {255, 255, 255};
    assert_rgb(pix(&im, 0, 0), white);
    free(im.px);
    free(A);
    unlink(path);
}

/* Dark ink pixels (the bitmap font's colour) in [x0,x1) x [y0,y1). */
static int ink_in(const Image *im, int x0, int y0, int x1, int y1) {
    int n = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            const unsigned char *c = pix(im, x, y);
            n += c[0] < 60 && c[1] < 60 && c[2] < 60;
        }
    return n;
}

/* An absent head's panel (A NULL, a layer with fewer heads): the grid
 * keeps its slot, drawn white (no masked grey, no colour), while the
 * present panel beside it is coloured as alone. */
static void test_absent_panel_blank(void **state) {
    (void)state;
    const int T = 8, cell = 10;
    float *A = sink_map(T);
    HeatPanel p[2] = {{A, T, "L0 H0", 0}, {NULL, T, "L0 H1 absent", 0}};
    HeatmapStyle st = {0, cell, 0.0f, 1.0f, 0, NULL, 0, NULL};
    char path[256], err[256] = "";
    tmp_path(path, sizeof path, "absent");
    assert_int_equal(heatmap_write(path, p, 1, 2, &st, err, sizeof err), 0);
    Image im = read_png(path);
    const int S = T * cell, y0 = MARGIN + TITLE_H, xb = MARGIN + S + GAP;
    assert_int_equal(im.w, 2 * MARGIN + 2 * S + GAP);
    unsigned char one[3];
    colormap_viridis(1.0f, one);
    const unsigned char white[3] = {255, 255, 255};
    assert_rgb(pix(&im, MARGIN + 2, y0 + 3 * cell + 2), one);       /* sink column */
    assert_rgb(pix(&im, MARGIN + 7 * cell + 5, y0 + 5), MASK_GREY); /* masked future */
    for (int t = 0; t < T; t++)                                     /* absent: blank */
        for (int j = 0; j < T; j++)
            assert_rgb(pix(&im, xb + j * cell + 5, y0 + t * cell + 5), white);
    free(im.px);
    free(A);
    unlink(path);
}

/* A title band above the grid and axis bands left and below: the matrix
 * moves right by the left band (AXIS_W) and down by the title band; the
 * title, "query" and "key position" leave ink there, and the matrix
 * pixels are where the moved layout says. */
static void test_title_and_axis_labels(void **state) {
    (void)state;
    const int T = 32, cell = 8, S = T * cell;
    const int AXW = 56, AXH = 16 + 8;
    float *A = sink_map(T);
    HeatPanel p = {A, T, "L0 H0", 0};
    HeatmapStyle st = {0, cell, 0.0f, 1.0f, 0, "BASELINE S1", 1, NULL};
    char path[256], err[256] = "";
    tmp_path(path, sizeof path, "labels");
    assert_int_equal(heatmap_write(path, &p, 1, 1, &st, err, sizeof err), 0);
    Image im = read_png(path);
    assert_int_equal(im.w, 2 * MARGIN + AXW + S);
    assert_int_equal(im.h, 2 * MARGIN + 2 * TITLE_H + S + AXH);
    int x0 = MARGIN + AXW, y0 = MARGIN + 2 * TITLE_H;
    unsigned char one[3];
    colormap_viridis(1.0f, one);
    assert_rgb(pix(&im, x0 + 1, y0 + 1), one);           /* sink column */
    assert_rgb(pix(&im, x0 + S - 2, y0 + 2), MASK_GREY); /* future */
    assert_true(ink_in(&im, MARGIN, MARGIN, im.w - MARGIN, MARGIN + TITLE_H) > 20);
    assert_true(ink_in(&im, 0, y0, x0, y0 + S) > 50);        /* 0, query, 31 */
    assert_true(ink_in(&im, x0, y0 + S, x0 + S, im.h) > 50); /* 0 key position 31 */
    assert_int_equal(ink_in(&im, x0 + 2, y0 + 2, x0 + S - 2, y0 + S - 2), 0);
    free(im.px);
    /* a title wider than the image wraps onto a second line */
    st.title = "A LONG TITLE THAT CANNOT FIT ON ONE LINE OF THIS NARROW IMAGE AT ALL";
    assert_int_equal(heatmap_write(path, &p, 1, 1, &st, err, sizeof err), 0);
    im = read_png(path);
    assert_int_equal(im.h, 2 * MARGIN + 3 * TITLE_H + S + AXH);
    assert_true(ink_in(&im, MARGIN, MARGIN + TITLE_H, im.w - MARGIN, MARGIN + 2 * TITLE_H) > 20);
    free(im.px);
    free(A);
    unlink(path);
}

/* Token labels for the axes: the bands grow to the longest label (a long
 * one widens them), every row and column gets ink beside it, the matrix
 * stays where the widened layout puts it. */
/* Pixels in [x0,x1) x [y0,y1) of any grey darker than light (antialiased
 * small text leaves few pixels dark enough for ink_in). */
static int shade_in(const Image *im, int x0, int y0, int x1, int y1) {
    int n = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) n += pix(im, x, y)[0] < 160;
    return n;
}

static void test_token_labels(void **state) {
    (void)state;
    const int T = 6, cell = 20, S = T * cell;
    float *A = sink_map(T);
    HeatPanel p = {A, T, "L0 H0", 0};
    const char *shortl[6] = {"<bos>", "a", "\xe2\x90\xa3", "b", "\\n", "c"};
    const char *longl[6] = {"<bos>", "a", "\xe2\x90\xa3", "a-much-longer", "\\n", "c"};
    HeatmapStyle st = {0, cell, 0.0f, 1.0f, 0, NULL, 1, shortl};
    char path[256], err[256] = "";
    tmp_path(path, sizeof path, "tokens");
    assert_int_equal(heatmap_write(path, &p, 1, 1, &st, err, sizeof err), 0);
    Image a = read_png(path);
    st.tokens = longl;
    assert_int_equal(heatmap_write(path, &p, 1, 1, &st, err, sizeof err), 0);
    Image b = read_png(path);
    assert_true(b.w > a.w && b.h > a.h); /* both bands grew */
    int x0 = a.w - MARGIN - S, y0 = MARGIN + TITLE_H;
    unsigned char one[3];
    colormap_viridis(1.0f, one);
    assert_rgb(pix(&a, x0 + 1, y0 + 1), one); /* the sink cell where the layout says */
    for (int t = 0; t < T; t++) {
        assert_true(shade_in(&a, 0, y0 + t * cell, x0, y0 + (t + 1) * cell) > 3);
        assert_true(shade_in(&a, x0 + t * cell, y0 + S, x0 + (t + 1) * cell, a.h) > 3);
    }
    free(a.px), free(b.px), free(A);
    unlink(path);
}

static void test_grid_size_and_shared_scale(void **state) {
    (void)state;
    const int T = 8, cell = 10;
    float *A = sink_map(T), *B = sink_map(T);
    for (int t = 0; t < T; t++) B[(size_t)t * T] = 0.5f; /* half the max */
    HeatPanel p[4] = {
        {A, T, "L0 H0", 0}, {B, T, "L0 H1", 0}, {A, T, "L1 H0", 0}, {B, T, "L1 H1", 0}};
    HeatmapStyle st = {0, cell, 0.0f, 0.0f, 0, NULL, 0, NULL}; /* automatic range */
    char path[256], err[256] = "";
    tmp_path(path, sizeof path, "grid");
    assert_int_equal(heatmap_write(path, p, 2, 2, &st, err, sizeof err), 0);
    Image im = read_png(path);
    int S = T * cell;
    assert_int_equal(im.w, 2 * MARGIN + 2 * S + GAP);
    assert_int_equal(im.h, 2 * MARGIN + 2 * (TITLE_H + S) + GAP);
    /* shared scale 0..1: panel B's sink column is viridis(0.5) */
    unsigned char one[3], half[3];
    colormap_viridis(1.0f, one);
    colormap_viridis(0.5f, half);
    int xb = MARGIN + S + GAP, yb = MARGIN + TITLE_H;
    assert_rgb(pix(&im, MARGIN + 2, yb + 3 * cell + 2), one);
    assert_rgb(pix(&im, xb + 2, yb + 3 * cell + 2), half);
    /* bottom-right panel too */
    int yd = MARGIN + TITLE_H + S + GAP + TITLE_H;
    assert_rgb(pix(&im, xb + 2, yd + 7 * cell + 2), half);
    /* the title drew some ink in the title band of panel 0 */
    int ink = 0;
    for (int y = MARGIN; y < MARGIN + TITLE_H; y++)
        for (int x = MARGIN; x < MARGIN + S; x++)
            if (pix(&im, x, y)[0] < 100) ink++;
    assert_true(ink > 20);
    free(im.px);
    free(A);
    free(B);
    unlink(path);
}

static void test_colorbar_and_log_scale(void **state) {
    (void)state;
    const int T = 8, cell = 10;
    float *A = sink_map(T);
    HeatPanel p = {A, T, "log", 0};
    HeatmapStyle st = {1, cell, 0.0f, 0.0f, 1, NULL, 0, NULL}; /* log, auto, bar */
    char path[256], err[256] = "";
    tmp_path(path, sizeof path, "bar");
    assert_int_equal(heatmap_write(path, &p, 1, 1, &st, err, sizeof err), 0);
    Image im = read_png(path);
    int S = T * cell;
    assert_true(im.w > 2 * MARGIN + S + BAR_GAP + BAR_W);
    assert_int_equal(im.h, 2 * MARGIN + TITLE_H + S);
    unsigned char one[3], zero[3];
    colormap_viridis(1.0f, one);
    colormap_viridis(0.0f, zero);
    /* log10(1 + 1e-4) is the max, log10(0 + 1e-4) the min */
    int x0 = MARGIN, y0 = MARGIN + TITLE_H;
    assert_rgb(pix(&im, x0 + 5, y0 + 4 * cell + 5), one);
    assert_rgb(pix(&im, x0 + 2 * cell + 5, y0 + 4 * cell + 5), zero);
    /* colour bar: top is the max colour, bottom the min colour */
    int bx = MARGIN + S + BAR_GAP + BAR_W / 2;
    assert_rgb(pix(&im, bx, y0), one);
    assert_rgb(pix(&im, bx, im.h - MARGIN - 1), zero);
    free(im.px);
    free(A);
    unlink(path);
}

static void test_auto_cell_and_downsample(void **state) {
    (void)state;
    const int T = 1000;
    float *A = sink_map(T);
    HeatPanel p = {A, T, NULL, 0};
    HeatmapStyle st = {0, 0, 0.0f, 1.0f, 0, NULL, 0, NULL};
    char path[256], err[256] = "";
    tmp_path(path, sizeof path, "big");
    assert_int_equal(heatmap_write(path, &p, 1, 1, &st, err, sizeof err), 0);
    Image im = read_png(path);
    assert_int_equal(im.w, 2 * MARGIN + 512); /* capped panel */
    unsigned char one[3];
    colormap_viridis(1.0f, one);
    /* the one-entry sink column survives downsampling (block max) */
    assert_rgb(pix(&im, MARGIN, MARGIN + TITLE_H + 300), one);
    assert_rgb(pix(&im, MARGIN + 511, MARGIN + TITLE_H), MASK_GREY);
    free(im.px);
    free(A);
    unlink(path);
    /* small T: automatic cells make a panel of a few hundred pixels */
    float *B = sink_map(8);
    HeatPanel q = {B, 8, NULL, 0};
    tmp_path(path, sizeof path, "small");
    assert_int_equal(heatmap_write(path, &q, 1, 1, &st, err, sizeof err), 0);
    im = read_png(path);
    int P = im.w - 2 * MARGIN;
    assert_true(P >= 256 && P <= 512 && P % 8 == 0);
    free(im.px);
    free(B);
    unlink(path);
}

static void test_bad_inputs(void **state) {
    (void)state;
    float *A = sink_map(8);
    HeatPanel p = {A, 8, "x", 0};
    HeatmapStyle st = {0, 4, 0.0f, 1.0f, 1, NULL, 0, NULL};
    char err[256] = "";
    const char *bad = "/nonexistent-dir-gatelab/sub/out.png";
    assert_int_equal(heatmap_write(bad, &p, 1, 1, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, bad));
    assert_null(strchr(err, '\n'));

    char path[256];
    tmp_path(path, sizeof path, "never");
    HeatPanel z = {A, 0, "zero", 0};
    err[0] = 0;
    assert_int_equal(heatmap_write(path, &z, 1, 1, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, "T = 0"));
    HeatPanel huge = {A, 100000, "huge", 0};
    assert_int_equal(heatmap_write(path, &huge, 1, 1, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, "T = 100000"));
    HeatPanel none = {NULL, 8, "none", 0};
    assert_int_equal(heatmap_write(path, &none, 1, 1, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, "no panel has data"));
    assert_int_equal(heatmap_write(path, &p, 0, 1, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, "grid"));
    /* too many pixels: 2000 entries at 64 px each */
    HeatmapStyle fat = {0, 64, 0.0f, 1.0f, 0, NULL, 0, NULL};
    float *big = calloc((size_t)2000 * 2000, sizeof(float));
    assert_non_null(big);
    HeatPanel b = {big, 2000, "big", 0};
    assert_int_equal(heatmap_write(path, &b, 1, 1, &fat, err, sizeof err), -1);
    assert_non_null(strstr(err, "too large"));
    free(big);
    /* none of the failures left a file behind */
    assert_int_equal(access(path, F_OK), -1);
    free(A);
}

/* The first n bytes of path equal want. */
static int starts_with(const char *path, const char *want) {
    char buf[16] = "";
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(buf, 1, strlen(want), f);
    fclose(f);
    return n == strlen(want) && memcmp(buf, want, n) == 0;
}

/* heatmap_write_figure writes STEM.png, STEM.svg and STEM.pdf, whichever
 * of the three the path names; heatmap_write writes the one named. */
static void test_figure_three_formats(void **state) {
    (void)state;
    float *A = sink_map(8);
    HeatPanel p = {A, 8, "L0 H0", 0};
    HeatmapStyle st = {1, 4, 0.0f, 1.0f, 1, "proxy |a|/sum|a| maps", 1, NULL};
    char base[200], png[256], svg[256], pdf[256], err[256] = "";
    snprintf(base, sizeof base, "/tmp/gatelab_test_heatmap_%ld_fig", (long)getpid());
    snprintf(png, sizeof png, "%s.png", base);
    snprintf(svg, sizeof svg, "%s.svg", base);
    snprintf(pdf, sizeof pdf, "%s.pdf", base);
    assert_int_equal(heatmap_write_figure(svg, &p, 1, 1, &st, err, sizeof err), 0);
    assert_true(starts_with(png, "\x89PNG"));
    assert_true(starts_with(svg, "<?xml"));
    assert_true(starts_with(pdf, "%PDF-"));
    Image im = read_png(png); /* a whole PNG */
    assert_true(im.w > 2 * MARGIN + 56 + 8 * 4 + BAR_GAP + BAR_W);
    free(im.px);
    unlink(png), unlink(svg), unlink(pdf);
    assert_int_equal(heatmap_write(pdf, &p, 1, 1, &st, err, sizeof err), 0);
    assert_true(starts_with(pdf, "%PDF-"));
    assert_int_equal(access(png, F_OK), -1);
    unlink(pdf);
    free(A);
}

/* An extension none of the three formats has is refused in one line,
 * writing nothing; so is a figure whose SVG twin is not ours. */
static void test_refuses_other_extensions(void **state) {
    (void)state;
    float *A = sink_map(8);
    HeatPanel p = {A, 8, "x", 0};
    HeatmapStyle st = {0, 4, 0.0f, 1.0f, 0, NULL, 0, NULL};
    char path[256], err[256] = "";
    snprintf(path, sizeof path, "/tmp/gatelab_test_heatmap_%ld_x.jpg", (long)getpid());
    assert_int_equal(heatmap_write_figure(path, &p, 1, 1, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, ".png, .svg or .pdf"));
    assert_null(strchr(err, '\n'));
    assert_int_equal(heatmap_write(path, &p, 1, 1, &st, err, sizeof err), -1);
    assert_int_equal(access(path, F_OK), -1);
    char png[256], svg[256];
    snprintf(png, sizeof png, "/tmp/gatelab_test_heatmap_%ld_y.png", (long)getpid());
    snprintf(svg, sizeof svg, "/tmp/gatelab_test_heatmap_%ld_y.svg", (long)getpid());
    FILE *f = fopen(svg, "w");
    assert_non_null(f);
    fputs("not a figure\n", f);
    fclose(f);
    assert_int_equal(heatmap_write_figure(png, &p, 1, 1, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, svg));
    assert_int_equal(access(png, F_OK), -1);
    unlink(svg);
    free(A);
}

/* heatmap_auto_range is the range an automatic style colours by. */
static void test_auto_range(void **state) {
    (void)state;
    float A[4] = {0.25f, 0.0f, 0.5f, 0.75f}; /* [1][0] = 0.5 visible, [0][1] masked */
    HeatPanel p = {A, 2, NULL, 0};
    float lo, hi;
    heatmap_auto_range(&p, 1, 0, &lo, &hi);
    assert_true(lo == 0.0f && hi == 0.75f);
    heatmap_auto_range(&p, 1, 1, &lo, &hi);
    assert_true(fabsf(lo - 0.25f) < 1e-5f && fabsf(hi - 0.75f) < 1e-5f);
}

/* A windowed panel (W = 3 of T = 8): every cell is masked grey exactly
 * when the query does not see the key, j > t or t - j >= W, counted here
 * cell by cell; the sink column outside the window is masked, not drawn
 * as the value 1 it holds; the automatic range sees no masked entry. */
static void test_window_masked(void **state) {
    (void)state;
    const int T = 8, cell = 10, W = 3;
    float *A = sink_map(T);
    A[7 * T + 6] = 0.5f; /* inside query 7's window */
    A[7 * T + 2] = 0.9f; /* outside it */
    HeatPanel p = {A, T, NULL, W};
    HeatmapStyle st = {0, cell, 0.0f, 1.0f, 0, NULL, 0, NULL};
    char path[256], err[256] = "";
    tmp_path(path, sizeof path, "window");
    assert_int_equal(heatmap_write(path, &p, 1, 1, &st, err, sizeof err), 0);
    Image im = read_png(path);
    int x0 = MARGIN, y0 = MARGIN + TITLE_H, masked = 0;
    for (int t = 0; t < T; t++)
        for (int j = 0; j < T; j++) {
            const unsigned char *c = pix(&im, x0 + j * cell + 5, y0 + t * cell + 5);
            int grey = !memcmp(c, MASK_GREY, 3), want = j > t || t - j >= W;
            assert_int_equal(grey, want);
            masked += grey;
        }
    assert_int_equal(masked, T * T - (3 * T - 3)); /* visible: t+1 keys, at most W */
    unsigned char one[3];
    colormap_viridis(1.0f, one);
    assert_rgb(pix(&im, x0 + 5, y0 + 2 * cell + 5), one); /* query 2 still sees key 0 */
    free(im.px);
    float lo, hi;
    heatmap_auto_range(&p, 1, 0, &lo, &hi);
    assert_true(hi == 1.0f);                   /* 0.9 at (7, 2) is outside the window */
    A[0] = 0.0f, A[T] = 0.0f, A[2 * T] = 0.0f; /* the sink's visible cells */
    heatmap_auto_range(&p, 1, 0, &lo, &hi);
    assert_true(hi == 0.5f);
    free(A);
    unlink(path);
}

/* With no --size a figure fits a paper: one panel, whose own size is
 * narrower than a page, a column (3.3 in, 990 pixels at 300 dpi); a grid
 * of 16 panels a row, which no page holds at 24 points a panel, keeps
 * its own size. */
static void test_default_fits_column_or_own(void **state) {
    (void)state;
    const int T = 32;
    float *A = sink_map(T);
    HeatPanel p[16];
    for (int k = 0; k < 16; k++) p[k] = (HeatPanel){A, T, NULL, 0};
    HeatmapStyle st = {0, 0, 0.0f, 1.0f, 1, NULL, 1, NULL};
    char path[256], err[256] = "";
    tmp_path(path, sizeof path, "fit");
    figstyle_set(&(FigStyle){0});
    int rc1 = heatmap_write(path, p, 1, 1, &st, err, sizeof err);
    Image one = rc1 == 0 ? read_png(path) : (Image){NULL, 0, 0};
    int rc16 = heatmap_write(path, p, 1, 16, &st, err, sizeof err);
    Image row = rc16 == 0 ? read_png(path) : (Image){NULL, 0, 0};
    figstyle_set(&(FigStyle){.own = 1}); /* the other tests' layout */
    assert_int_equal(rc1, 0), assert_int_equal(rc16, 0);
    assert_int_equal(one.w, 990);
    assert_true(row.w > 16 * T); /* own size: the panels at their data pixels, not squeezed */
    assert_true(row.w < 16 * (384 + GAP) + 400);
    free(one.px), free(row.px), free(A);
    unlink(path);
}

int main(void) {
    /* the layout these tests mirror is a figure's own size (--size own) */
    figstyle_set(&(FigStyle){.own = 1});
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_fits_column_or_own),
        cmocka_unit_test(test_colormap_endpoints),
        cmocka_unit_test(test_colormap_luminance_monotone),
        cmocka_unit_test(test_single_panel_pixels),
        cmocka_unit_test(test_grid_size_and_shared_scale),
        cmocka_unit_test(test_absent_panel_blank),
        cmocka_unit_test(test_title_and_axis_labels),
        cmocka_unit_test(test_colorbar_and_log_scale),
        cmocka_unit_test(test_auto_cell_and_downsample),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_figure_three_formats),
        cmocka_unit_test(test_refuses_other_extensions),
        cmocka_unit_test(test_auto_range),
        cmocka_unit_test(test_window_masked),
        cmocka_unit_test(test_token_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
