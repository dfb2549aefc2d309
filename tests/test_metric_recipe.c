/* test_metric_recipe.c: the two files of docs/ARCHITECTURE.md's recipe
 * "Adding a metric" that the compiler does not hold. Every row of the
 * metric table (metric_table.c) is read from a run file by the report's
 * row reader (report_rows.c row_read, then fill_dppl for the rows that
 * compare a run with its baseline group): two run files built by hand hold
 * every group the reader reads, and a row that both leave at its blank
 * value has no read. And every row a study may declare, or whose
 * definition sends the reader to docs/metrics.md, is named there by its
 * results.csv name. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <glob.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakequant.h"
#include "metric_table.h"
#include "report_priv.h"
#include "runfile.h"
#include "runfile_fixture.h"
#include "runschema.h"
#include "testutil.h"

/* /lceval of the closed run file at path, trained at T: every LC_MULT
 * multiple under both modes, each with the needle at every LC_DEPTH. */
static void add_lceval(const char *path, int T) {
    char err[512];
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < LC_NMULT; k++) {
            double buckets[8], acc[LC_NDEPTH];
            for (int b = 0; b < LC_MULT[k]; b++) buckets[b] = 2.0 + 0.1 * b + 0.05 * m;
            for (int d = 0; d < LC_NDEPTH; d++) acc[d] = 0.25 * (d % 4) + 0.125;
            LcEvalData e = {.mode = m ? RS_LC_YARN : RS_LC_PLAIN,
                            .len = LC_MULT[k] * T,
                            .train_len = T,
                            .val_loss = 2.0 + 0.1 * k,
                            .ppl = exp(2.0 + 0.1 * k),
                            .yarn_scale = m ? LC_MULT[k] : 1,
                            .n_seqs = 2,
                            .n_buckets = LC_MULT[k],
                            .loss_by_bucket = buckets,
                            .n_depths = LC_NDEPTH,
                            .needle_depth = LC_DEPTH,
                            .needle_acc = acc,
                            .needle_n = 4};
            if (runfile_write_lceval(path, &e, err, sizeof err) != 0) fail_msg("%s", err);
        }
}

/* /quant of the closed run file at path: every quantized mode, each with
 * a damage source, the first position held out. */
static void add_quant(const char *path) {
    char err[512];
    QuantModeData md[Q_NMODES];
    for (int i = 0; i < Q_NMODES; i++) {
        double dl = 0.01 * (i + 1);
        md[i] = (QuantModeData){.mode = fq_mode_name((FqMode)(i + 1)),
                                .val_loss = 3.0 + dl,
                                .ppl = exp(3.0 + dl),
                                .dloss = dl,
                                .val_loss_keep = 3.0 + dl / 2,
                                .dloss_keep = dl / 2,
                                .sink_dloss = dl / 2,
                                .destroyed = fq_destroyed(dl),
                                .source = "layer 0 attention input",
                                .source_layer = 0,
                                .n_tensors = 8,
                                .source_recovered = dl / 4};
    }
    QuantData q = {.len = 64,
                   .calib_batches = 4,
                   .keep_first = 1,
                   .n_seqs = 8,
                   .percentile = FQ_PERCENTILE,
                   .val_loss = 3.0,
                   .ppl = exp(3.0),
                   .inf_attn = 5.0,
                   .inf_ffn = 6.0,
                   .inf_layer = 40.0,
                   .kurtosis_max = 100.0,
                   .n_modes = Q_NMODES,
                   .modes = md};
    if (runfile_write_quant(path, &q, err, sizeof err) != 0) fail_msg("%s", err);
}

/* tu_scratch/name: runfile_fixture.c's run (training and eval rows, a
 * probe with every array, the parameters) of variant at seed 1 with every
 * /summary key the reader reads, then /lceval and /quant. bounded: the
 * probe's gate scores are in [0, 1] (else the gate is unbounded, whose
 * sparsity is n/a and whose gate_unbounded is 1). */
static void make_full_run(const char *name, const char *variant, int bounded) {
    char path[512];
    tu_scratch_path(path, sizeof path, name);
    Config cfg = test_config();
    char err[512];
    if (config_apply_variant(&cfg, variant, err, sizeof err) != 0) fail_msg("%s", err);
    cfg.init_seed = 1;
    cfg.n_kv_heads = cfg.n_heads; /* a shape model_shape takes: the training FLOPs need it */
    TinyModel t;
    tiny_model(&t, &cfg);
    Probe q;
    RunFile *rf = write_run(path, &cfg, &t, &q);
    q.p.gate_bounded = bounded;
    for (int i = 0; i < PL * PH; i++) q.row_empty[i] = 0.25f, q.first_ne[i] = 0.5f; /* shares */
    assert_int_equal(runfile_write_probe(rf, &q.p, rf_err, sizeof rf_err), 0);
    const char *keys[] = {RS_SUM_STEPS_DONE, RS_SUM_FINAL_VAL_LOSS, RS_SUM_TOKENS_PER_SEC,
                          RS_SUM_DIVERGED_STEP, RS_SUM_TASK_FLOOR};
    const double values[] = {2, 3.25, 1000, 2, 1.5};
    for (int k = 0; k < 5; k++)
        assert_int_equal(runfile_set_summary(rf, keys[k], values[k], rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_set_status(rf, "done", rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_close(rf, rf_err, sizeof rf_err), 0);
    add_lceval(path, cfg.seq_len);
    add_quant(path);
}

/* Whether metric m of w holds something other than its blank value. */
static int metric_read(const Row *w, const Row *blank, const MetricCol *m) {
    double v = metric_value(w, m), b = metric_value(blank, m);
    return !isnan(v) && v != b;
}

/* Every row of the metric table is read from one of the two run files
 * (a gated run and the baseline group it is compared with): a row both
 * Rows leave at its blank value (NaN, -1, or 0 for MB_ZERO) has no read
 * in report_rows.c. */
static void test_every_metric_read(void **state) {
    (void)state;
    static const char *const files[2] = {"g1-elem_s1.h5", "baseline_s1.h5"};
    make_full_run(files[0], "g1-elem", 1);
    make_full_run(files[1], "baseline", 0);
    Row *rows = calloc(3, sizeof *rows), *blank = &rows[2];
    assert_non_null(rows);
    for (int i = 0; i < 2; i++) {
        tu_scratch_path(rows[i].path, sizeof rows[i].path, files[i]);
        row_read(&rows[i]);
        if (!rows[i].ok) fail_msg("%s: %s", files[i], rows[i].err);
        if (rows[i].probe_err[0]) fail_msg("%s: %s", files[i], rows[i].probe_err);
    }
    qsort(rows, 2, sizeof *rows, cmp_row);
    fill_dppl(rows, 2);
    assert_int_equal(rows[0].base, 0); /* the baseline group sorts first */
    assert_int_equal(rows[1].base, 0);
    row_blank(blank);
    char missing[4096] = "";
    int n = 0, k;
    for (k = 0; metric_at(k); k++) {
        const MetricCol *m = metric_at(k);
        if (metric_read(&rows[0], blank, m) || metric_read(&rows[1], blank, m)) continue;
        char name[128];
        metric_name(m, name, sizeof name);
        size_t used = strlen(missing);
        snprintf(missing + used, sizeof missing - used, " %s", name);
        n++;
    }
    if (n) fail_msg("%d metric-table rows have no read in report_rows.c:%s", n, missing);
    assert_true(k > 100); /* the walk saw the table */
    free(rows);
}

/* docs/metrics.md and the docs/metrics-*.md files it links, one string. */
static char *metric_docs(void) {
    char pattern[1024];
    snprintf(pattern, sizeof pattern, "%s/docs/metrics*.md", tu_src());
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0) fail_msg("%s: no such files", pattern);
    char *all = calloc(1, 1);
    size_t len = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        size_t n;
        char *text = tu_slurp_ok(g.gl_pathv[i], &n), *grown = realloc(all, len + n + 1);
        assert_non_null(grown);
        all = grown;
        memcpy(all + len, text, n + 1);
        len += n;
        free(text);
    }
    globfree(&g);
    return all;
}

/* Whether name is the code span at s[0..n) (between backquotes): the same
 * text, or a pattern whose `<...>` placeholders each stand for one or more
 * letters, digits or dots (`quant_<mode>_destroyed`) and whose `{a,b}`
 * stand for one of their items (`lc_deg_{2,4,8}x_{plain,yarn}`). */
static int span_names(const char *s, size_t n, const char *name) {
    char re[1024] = "^";
    size_t j = 1;
    int in_braces = 0;
    for (size_t i = 0; i < n && j + 16 < sizeof re; i++) {
        const char *close = s[i] == '<' ? memchr(s + i, '>', n - i) : NULL;
        if (close) {
            j += (size_t)snprintf(re + j, sizeof re - j, "[a-z0-9.]+");
            i = (size_t)(close - s);
        } else if (s[i] == '{' && !in_braces && memchr(s + i, '}', n - i)) {
            re[j++] = '(', in_braces = 1;
        } else if (in_braces && (s[i] == ',' || s[i] == '}')) {
            re[j++] = s[i] == ',' ? '|' : ')', in_braces = s[i] == ',';
        } else {
            if (strchr(".[]()*+?{}|^$\\", s[i])) re[j++] = '\\';
            re[j++] = s[i];
        }
    }
    snprintf(re + j, sizeof re - j, "$");
    regex_t rx;
    if (regcomp(&rx, re, REG_EXTENDED | REG_NOSUB) != 0) return 0;
    int hit = regexec(&rx, name, 0, NULL, 0) == 0;
    regfree(&rx);
    return hit;
}

/* Whether some code span of doc names name (span_names). */
static int doc_names(const char *doc, const char *name) {
    for (const char *s = strchr(doc, '`'); s; s = strchr(s, '`')) {
        const char *e = strchr(s + 1, '`');
        if (!e) break;
        if (e - s - 1 < 200 && span_names(s + 1, (size_t)(e - s - 1), name)) return 1;
        s = e + 1;
    }
    return 0;
}

/* The placeholder match: whole names only, a literal part required. */
static void test_span_pattern(void **state) {
    (void)state;
    assert_true(doc_names("a `quant_<mode>_destroyed` b", "quant_w8a8pct_destroyed"));
    assert_true(doc_names("`needle_acc_<m>x_<mode>`", "needle_acc_8x_yarn"));
    assert_true(doc_names("`lc_deg_{2,4,8}x_{plain,yarn}`", "lc_deg_4x_yarn"));
    assert_false(doc_names("`lc_deg_{2,4,8}x_{plain,yarn}`", "lc_deg_1x_yarn"));
    assert_true(doc_names("`sink_rate_0.3`", "sink_rate_0.3"));
    assert_false(doc_names("`sink_rate_0.3`", "sink_rate_0x3"));
    assert_false(doc_names("`quant_<mode>_destroyed`", "quant_w8a8_dloss"));
    assert_false(doc_names("`quant_<mode>_destroyed`", "quant__destroyed"));
    assert_false(doc_names("`f_attn_uniform`", "f_attn"));
    assert_false(doc_names("f_attn without backquotes", "f_attn"));
}

/* Every declarable row, and every row whose definition points to
 * docs/metrics.md, is named by its results.csv name in docs/metrics*.md. */
static void test_metrics_defined(void **state) {
    (void)state;
    char *doc = metric_docs(), missing[4096] = "";
    int n = 0, checked = 0;
    for (int k = 0; metric_at(k); k++) {
        const MetricCol *m = metric_at(k);
        char name[128], def[2048];
        metric_name(m, name, sizeof name);
        metric_def(m, def, sizeof def);
        if (!m->proto && !strstr(def, "docs/metrics.md")) continue;
        checked++;
        if (doc_names(doc, name)) continue;
        size_t used = strlen(missing);
        snprintf(missing + used, sizeof missing - used, " %s", name);
        n++;
    }
    if (n) fail_msg("%d metrics are not named in docs/metrics*.md:%s", n, missing);
    assert_true(checked > 10);
    free(doc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_metric_read, tu_scratch_setup,
                                        tu_scratch_teardown),
        cmocka_unit_test(test_span_pattern),
        cmocka_unit_test(test_metrics_defined),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
