/* test_needle.c: the needle task, RULER's small analogue. Its accuracy
 * measure on hand-made logits (metrics.h exact_match), lceval's per-depth
 * shares through a fake model whose answers are known, and the rows the
 * data generator makes (data.h data_needle_batch) on the small text files
 * of tests/data (no Brown needed); the report's needle table and its
 * chance rule on hand-built rows. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "forward.h"
#include "lceval.h"
#include "metric_table.h"
#include "metrics.h"
#include "report_priv.h"
#include "runfile_read.h"
#include "testutil.h"

/* ---- the measure on hand-made logits ---- */

static void test_exact_match(void **st) {
    (void)st;
    enum { V = 5 };
    float lg[3 * V] = {0, 2, 1, 0, 0, /* argmax 1 */
                       0, 0, 0, 1, 3, /* argmax 4 */
                       9, 0, 0, 0, 8 /* argmax 0 */};
    const int tg[3] = {1, 4, 0};
    assert_int_equal(exact_match(lg, V, tg, 3), 1);
    assert_int_equal(exact_match(lg, V, tg, 1), 1);
    const int wrong[3] = {1, 3, 0}; /* one position off: no match */
    assert_int_equal(exact_match(lg, V, wrong, 3), 0);
    lg[V + 3] = 3; /* a tie at the maximum is a miss */
    assert_int_equal(exact_match(lg, V, tg, 3), 0);
    const int outside[1] = {-1}; /* no target */
    assert_int_equal(exact_match(lg, V, outside, 1), 0);
}

/* ---- per-depth shares through a fake model ---- */

/* A model that answers a row right when (row + depth index) is even: at
 * each depth with B = 4 rows per batch, two of every four are right. */
enum { FV = 16, FT = 64, FB = 4 };
static float g_logits[FB * FT * FV];
static int g_depth_calls;

static int f_plan(Forward *f, int B, int T, int M, int n, MemPlan *p, char *e, size_t el) {
    (void)f, (void)B, (void)T, (void)M, (void)n, (void)e, (void)el;
    memset(p, 0, sizeof *p);
    return 0;
}
static int f_prepare(Forward *f, int B, int T, double y, char *e, size_t el) {
    (void)f, (void)B, (void)T, (void)y, (void)e, (void)el;
    return 0;
}
static int f_windows(Forward *f, int T, int B, int nb, int i, int *ids, int *tg, char *e,
                     size_t el) {
    (void)f, (void)nb, (void)i, (void)e, (void)el;
    for (int n = 0; n < B * T; n++) ids[n] = tg[n] = n % FV;
    return 0;
}
static int f_losses(Forward *f, const int *ids, const int *tg, int B, int T,
                    const struct Intervention *iv, float *tok_loss, double *mean, float *cols,
                    char *e, size_t el) {
    (void)f, (void)ids, (void)iv, (void)e, (void)el;
    if (tok_loss)
        for (int n = 0; n < B * T; n++) tok_loss[n] = 1.0f;
    if (mean) *mean = 1.0;
    if (cols)
        for (int n = 0; n < B * T; n++) cols[n] = 1.0f / (float)(n % T + 1);
    /* the needle rows' answers: logits peaked at the target or next to it */
    memset(g_logits, 0, sizeof g_logits);
    for (int b = 0; b < B; b++)
        for (int t = T - NEEDLE_VAL_LEN; t < T; t++) {
            int want = tg[b * T + t], right = (b + g_depth_calls) % 2 == 0;
            g_logits[((size_t)b * T + t) * FV + (right ? want : (want + 1) % FV)] = 5.0f;
        }
    return 0;
}
static void f_close(Forward *f) { (void)f; }
static int f_needle(Forward *f, int T, int B, int i, double depth, int *ids, int *tg, char *e,
                    size_t el) {
    (void)f, (void)i, (void)e, (void)el;
    for (int d = 0; d < LCEVAL_NEEDLE_DEPTHS; d++)
        if (depth == LCEVAL_NEEDLE_DEPTH[d]) g_depth_calls = d;
    for (int n = 0; n < B * T; n++) ids[n] = 0, tg[n] = (n * 7) % FV;
    return 0;
}
static const float *f_logits(Forward *f) {
    (void)f;
    return g_logits;
}

static void test_needle_shares(void **st) {
    (void)st;
    static const ForwardOps ops = {f_plan,   f_prepare, f_windows, NULL, f_losses, f_close,
                                   f_needle, f_logits,  NULL,      NULL, NULL,     NULL};
    Forward f = {&ops, {.seq_len = FT, .bucket_len = FT, .L = 1, .H = 1, .V = FV}, "fake", NULL};
    LcEvalOpts o = {.lengths = {FT}, .n_lengths = 1, .batches = 3, .batch_size = FB, .needle = 1};
    LcEvalResult r;
    char err[256] = "";
    if (lceval_run(&f, &o, &r, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(r.n_depths, LCEVAL_NEEDLE_DEPTHS);
    assert_int_equal(r.needle_n, 3 * FB);
    for (int d = 0; d < LCEVAL_NEEDLE_DEPTHS; d++) assert_true(r.needle_acc[d] == 0.5);
    lceval_result_free(&r);
    /* without --needle there is no needle result */
    o.needle = 0;
    if (lceval_run(&f, &o, &r, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(r.n_depths, 0);
    lceval_result_free(&r);
    /* a source without the task (a checkpoint's) is refused before running */
    static const ForwardOps bare = {f_plan, f_prepare, f_windows, NULL, f_losses, f_close,
                                    NULL,   NULL,      NULL,      NULL, NULL,     NULL};
    f.ops = &bare;
    o.needle = 1;
    assert_int_equal(lceval_run(&f, &o, &r, err, sizeof err), -1);
    assert_string_equal(err, "fake: --needle scores trained runs on byte text only");
}

/* ---- the rows the generator makes ---- */

static void open_text(Dataset *ds, DataSource src) {
    Config c;
    config_defaults(&c);
    c.data = src;
    c.bos = 1;
    c.seq_len = 32;
    snprintf(c.train_file, sizeof c.train_file, "%s/tests/data/text_train.txt", tu_src());
    snprintf(c.val_file, sizeof c.val_file, "%s/tests/data/text_val.txt", tu_src());
    c.vocab_size = 0;
    char err[512] = "";
    if (data_open(ds, &c, err, sizeof err) != 0) fail_msg("%s", err);
}

/* The row's elements as text (targets: element k is target k with BOS). */
static void row_text(const int *tg, int T, char *out) {
    for (int k = 0; k < T; k++) out[k] = (char)tg[k];
    out[T] = '\0';
}

static void test_needle_rows(void **st) {
    (void)st;
    enum { T = 128, B = 3 };
    Dataset ds;
    open_text(&ds, DATA_TEXT);
    static int in[2][B * T], tg[2][B * T], hin[B * T], htg[B * T];
    assert_int_equal(data_needle_batch(&ds, in[0], tg[0], B, T, 0.0, 7, 2), 0);
    assert_int_equal(data_needle_batch(&ds, in[1], tg[1], B, T, 1.0, 7, 2), 0);
    data_batch(&ds, hin, htg, B, T, SPLIT_VAL, 7, 2);
    const int q =
        (int)strlen(NEEDLE_LEAD) + NEEDLE_KEY_LEN + (int)strlen(NEEDLE_MID) + NEEDLE_VAL_LEN;
    const int nl = q + (int)strlen(NEEDLE_TAIL);
    assert_int_equal(needle_span(), q + nl);
    for (int b = 0; b < B; b++) {
        char s0[T + 1], s1[T + 1];
        row_text(tg[0] + b * T, T, s0);
        row_text(tg[1] + b * T, T, s1);
        /* the query ends the row: LEAD KEY MID VALUE, VALUE four digits */
        const char *query = s0 + T - q;
        assert_memory_equal(query, NEEDLE_LEAD, strlen(NEEDLE_LEAD));
        const char *key = query + strlen(NEEDLE_LEAD), *val = s0 + T - NEEDLE_VAL_LEN;
        for (int i = 0; i < NEEDLE_KEY_LEN; i++) assert_true(key[i] >= 'a' && key[i] <= 'z');
        for (int i = 0; i < NEEDLE_VAL_LEN; i++) assert_true(val[i] >= '0' && val[i] <= '9');
        /* depth 0: the needle (the query's text and TAIL) right after BOS */
        assert_memory_equal(s0, query, q);
        assert_memory_equal(s0 + q, NEEDLE_TAIL, strlen(NEEDLE_TAIL));
        /* depth 1: just before the query; the same key and value */
        assert_memory_equal(s1 + T - q - nl, query, q);
        assert_memory_equal(s1 + T - q, query, q);
        /* the rest is the haystack data_batch gives, inputs shifted by one */
        for (int k = nl; k < T - q; k++) assert_int_equal(tg[0][b * T + k], htg[b * T + k]);
        for (int k = 0; k + 1 < T; k++) assert_int_equal(in[1][b * T + k + 1], tg[1][b * T + k]);
        assert_int_equal(in[0][b * T], BYTE_BOS);
    }
    /* rows differ in key and value */
    assert_true(memcmp(tg[0] + T - NEEDLE_VAL_LEN - NEEDLE_KEY_LEN - 4,
                       tg[0] + 2 * T - NEEDLE_VAL_LEN - NEEDLE_KEY_LEN - 4,
                       NEEDLE_KEY_LEN * sizeof(int)) != 0);
    /* too short for the needle, the query and one haystack byte; a bad depth */
    assert_int_equal(data_needle_batch(&ds, in[0], tg[0], 1, needle_span(), 0.5, 7, 0), -1);
    assert_int_equal(data_needle_batch(&ds, in[0], tg[0], 1, needle_span() + 1, 0.5, 7, 0), 0);
    assert_int_equal(data_needle_batch(&ds, in[0], tg[0], 1, T, 1.5, 7, 0), -1);
    data_close(&ds);
    /* no task on bigram */
    Config c;
    config_defaults(&c);
    c.data = DATA_BIGRAM;
    c.vocab_size = 0;
    char err[512] = "";
    if (data_open(&ds, &c, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(data_needle_batch(&ds, in[0], tg[0], 1, T, 0.5, 7, 0), -1);
    data_close(&ds);
}

/* needle_share: each training row carries a needle with that chance,
 * drawn on a stream of its own, so the rows without one are the rows of
 * needle_share 0; eval rows never do. */
static void test_needle_training_rows(void **st) {
    (void)st;
    enum { T = 96, B = 64 };
    Dataset ds;
    open_text(&ds, DATA_TEXT);
    static int in0[B * T], tg0[B * T], in[B * T], tg[B * T];
    data_batch(&ds, in0, tg0, B, T, SPLIT_TRAIN, 5, 3);
    const int q =
        (int)strlen(NEEDLE_LEAD) + NEEDLE_KEY_LEN + (int)strlen(NEEDLE_MID) + NEEDLE_VAL_LEN;
    int with = 0;
    for (int k = 0; k < 3; k++) {
        ds.needle_share = k == 0 ? 1.0 : k == 1 ? 0.5 : 0.0;
        data_batch(&ds, in, tg, B, T, SPLIT_TRAIN, 5, 3);
        with = 0;
        for (int b = 0; b < B; b++) {
            int *r = tg + b * T, same = !memcmp(r, tg0 + b * T, T * sizeof(int));
            char s[T + 1];
            row_text(r, T, s);
            int has = !memcmp(s + T - q, NEEDLE_LEAD, strlen(NEEDLE_LEAD));
            assert_true(has != same); /* a needle row differs; the others are untouched */
            for (int t = 0; t + 1 < T; t++) assert_int_equal(in[b * T + t + 1], r[t]);
            with += has;
        }
        if (k == 0) assert_int_equal(with, B);
        if (k == 1) assert_true(with > B / 4 && with < 3 * B / 4);
        if (k == 2) assert_int_equal(with, 0);
    }
    /* val rows never carry one */
    ds.needle_share = 1.0;
    data_batch(&ds, in, tg, B, T, SPLIT_VAL, 5, 3);
    ds.needle_share = 0.0;
    data_batch(&ds, in0, tg0, B, T, SPLIT_VAL, 5, 3);
    assert_memory_equal(tg, tg0, sizeof tg);
    data_close(&ds);
    /* only on byte text with BOS */
    char out[1100];
    snprintf(out, sizeof out, "%s/share.out", tu_tmpdir());
    assert_int_equal(tu_run(out,
                            "train --config %s/experiments/tiny.ini --set needle_share=0.1 "
                            "--out %s/share.h5",
                            tu_src(), tu_tmpdir()),
                     2);
    tu_assert_one_line(out, "needle_share 0.1 needs byte text with BOS", NULL);
}

/* gatelab eval --needle on a tiny run trained on the text files: stored
 * under /lceval beside the loss, and refused in one line on bigram. */
static void test_needle_cli(void **st) {
    (void)st;
    char run[1024], log[1100], err[512];
    snprintf(run, sizeof run, "%s/text.h5", tu_tmpdir());
    snprintf(log, sizeof log, "%s/needle.out", tu_tmpdir());
    assert_int_equal(tu_run(log,
                            "train --config %s/experiments/tiny.ini --set data=text --set "
                            "train_file=%s/tests/data/text_train.txt --set "
                            "val_file=%s/tests/data/text_val.txt --set seq_len=64 --out %s --quiet",
                            tu_src(), tu_src(), tu_src(), run),
                     0);
    assert_int_equal(
        tu_run(log, "eval %s --lengths 1x,2x --needle --batches 1 --batch-size 2", run), 0);
    RunReader *r = runread_open(run, err, sizeof err);
    assert_non_null(r);
    RunLcEval e;
    assert_int_equal(runread_lceval(r, "plain", 128, &e, err, sizeof err), 0);
    assert_int_equal(e.n_depths, LCEVAL_NEEDLE_DEPTHS);
    assert_int_equal(e.needle_n, 2);
    for (int d = 0; d < e.n_depths; d++) {
        assert_true(e.needle_depth[d] == LCEVAL_NEEDLE_DEPTH[d]);
        assert_true(e.needle_acc[d] >= 0.0 && e.needle_acc[d] <= 1.0);
    }
    runread_lceval_free(&e);
    runread_close(r);
    /* without --needle the stored length has none */
    assert_int_equal(tu_run(log, "eval %s --lengths 1x --batches 1 --batch-size 2", run), 0);
    r = runread_open(run, err, sizeof err);
    assert_non_null(r);
    assert_int_equal(runread_lceval(r, "plain", 64, &e, err, sizeof err), 0);
    assert_int_equal(e.n_depths, 0);
    assert_null(e.needle_acc);
    runread_lceval_free(&e);
    runread_close(r);
    /* bigram has no needle task; a length below the needle's is refused */
    snprintf(run, sizeof run, "%s/bigram.h5", tu_tmpdir());
    assert_int_equal(
        tu_run(log, "train --config %s/experiments/tiny.ini --out %s --quiet", tu_src(), run), 0);
    assert_int_equal(tu_run(log, "eval %s --lengths 1x --needle --no-write", run), 2);
    tu_assert_one_line(log, "the needle task needs byte text with BOS", "data = bigram");
}

/* ---- the report's needle table on hand-built rows ---- */

/* Row i of a group: run name run, seed i, share acc at 1x plain over nrows. */
static void hand_row(Row *w, const char *run, int i, double acc, int nrows) {
    memset(w, 0, sizeof *w);
    row_blank(w);
    w->ok = 1;
    snprintf(w->run, sizeof w->run, "%s", run);
    snprintf(w->variant, sizeof w->variant, "%s", run);
    snprintf(w->data, sizeof w->data, "brown");
    w->seed = 9901 + i;
    w->needle[0][0] = acc;
    w->needle_rows = nrows;
}

/* md_needle's text for rows[n] (malloc'd). */
static char *needle_text(const Row *rows, int n) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    md_needle(f, rows, n);
    fclose(f);
    return buf;
}

static void test_needle_report(void **st) {
    (void)st;
    /* the columns' names follow LC_MULT and hold the Row's fields */
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < LC_NMULT; k++) {
            char name[64];
            snprintf(name, sizeof name, "needle_acc_%dx_%s", LC_MULT[k], m ? "yarn" : "plain");
            const MetricCol *c = metric_find(name);
            assert_non_null(c);
            assert_int_equal(c->off, offsetof(Row, needle[m][k]));
        }
    assert_true(fabs(needle_chance() - 1e-4) < 1e-18);
    static Row rows[4];
    /* every share 0: untestable here, never 0 against 0 as a result */
    for (int i = 0; i < 4; i++) hand_row(&rows[i], i < 2 ? "baseline" : "g1-elem", i, 0.0, 80);
    char *t = needle_text(rows, 4);
    assert_non_null(strstr(t, "## Needle retrieval"));
    assert_non_null(strstr(
        t, "| baseline | baseline | brown | plain | 2 | 0.000 ± 0.000 | — | — | — | none |"));
    assert_non_null(strstr(t, "**Retrieval: untestable here.** No arm retrieves above chance"));
    assert_non_null(strstr(t, "not one row retrieved"));
    free(t);
    /* near chance: 1 of 1600 pooled rows (p = 0.148) is not above it */
    for (int i = 0; i < 4; i++) hand_row(&rows[i], i < 2 ? "baseline" : "g1-elem", i, 0.0, 800);
    rows[1].needle[0][0] = 1.0 / 800;
    long long hits, total;
    assert_int_equal(needle_above_chance(rows, 0, 2, 0, 0, &hits, &total), 0);
    assert_true(hits == 1 && total == 1600);
    t = needle_text(rows, 4);
    assert_non_null(strstr(t, "untestable here"));
    assert_non_null(strstr(t, "the most: baseline, plain at 1×, 1 of 1600 rows"));
    free(t);
    /* 4 of 80 rows in each of two seeds: above chance, testable there */
    rows[2].needle[0][0] = rows[3].needle[0][0] = 0.05,
    rows[2].needle_rows = rows[3].needle_rows = 80;
    assert_int_equal(needle_above_chance(rows, 2, 4, 0, 0, &hits, &total), 1);
    assert_true(hits == 8 && total == 160);
    t = needle_text(rows, 4);
    assert_null(strstr(t, "untestable here.**"));
    assert_non_null(
        strstr(t, "| g1-elem | g1-elem | brown | plain | 2 | 0.050 ± 0.000 | — | — | — | 1× |"));
    free(t);
    /* rows not recorded: no test; no needle at all: no section */
    rows[2].needle_rows = rows[3].needle_rows = -1;
    assert_int_equal(needle_above_chance(rows, 2, 4, 0, 0, &hits, &total), -1);
    for (int i = 0; i < 4; i++) rows[i].needle[0][0] = NAN;
    t = needle_text(rows, 4);
    assert_string_equal(t, "");
    free(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_match), cmocka_unit_test(test_needle_shares),
        cmocka_unit_test(test_needle_rows), cmocka_unit_test(test_needle_training_rows),
        cmocka_unit_test(test_needle_cli),  cmocka_unit_test(test_needle_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
