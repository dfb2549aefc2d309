/* test_report_quant.c: the quantized-evaluation section of REPORT.md from
 * run files built by hand with /quant (no trainer): every mode of
 * fakequant.h's list has its ΔL column (w8a8-tok and the KV-cache modes
 * included), a mode whose perplexity is above 10x the float one is marked
 * destroyed, and runs with positions held out get the sink_dloss table
 * with their K; results.csv's quant_<mode>_destroyed flags mark the
 * destroyed cells; the damage sources of --quant-source are named per run
 * group and mode. The section read from results.csv alone is the same
 * text. */
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

#include "config.h"
#include "fakequant.h"
#include "report.h"
#include "runfile.h"
#include "report_twin.h"
#include "testutil.h"

/* A finished run file SCRATCH/dir/name of variant at seed, no metrics. */
static void make_run(const char *dir, const char *name, const char *variant, int seed) {
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/%s/%s", tu_scratch, dir, name);
    Config cfg;
    config_defaults(&cfg);
    assert_int_equal(config_apply_variant(&cfg, variant, err, sizeof err), 0);
    cfg.init_seed = (unsigned long long)seed;
    RunFile *rf = runfile_create(path, &cfg, NULL, 1, err, sizeof err);
    if (!rf) fail_msg("%s", err);
    assert_int_equal(runfile_set_status(rf, "done", err, sizeof err), 0);
    assert_int_equal(runfile_close(rf, err, sizeof err), 0);
}

/* /quant of SCRATCH/dir/name: float loss 3, w8a8 dloss w8 (sink_dloss s8
 * with keep > 0; its source of the largest damage src, NULL: none, which
 * recovers rec), w8a8-tok 0.01 + x, kv8 0.02 + x, kv4 0.2 + x (their
 * sink_dloss 0.001, 0.002, 0.004 + x when keep > 0). */
static void add_quant(const char *dir, const char *name, int keep, double w8, double s8, double x,
                      const char *src, double rec) {
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/%s/%s", tu_scratch, dir, name);
    const char *mode[4] = {FQ_NAME_W8A8, FQ_NAME_W8A8_TOK, FQ_NAME_KV8, FQ_NAME_KV4};
    const double dl[4] = {w8, 0.01 + x, 0.02 + x, 0.2 + x},
                 sk[4] = {s8, 0.001 + x, 0.002 + x, 0.004 + x};
    QuantModeData md[4];
    for (int i = 0; i < 4; i++) {
        const double sink = keep > 0 ? sk[i] : NAN;
        md[i] = (QuantModeData){.mode = mode[i],
                                .val_loss = 3.0 + dl[i],
                                .ppl = exp(3.0 + dl[i]),
                                .dloss = dl[i],
                                .val_loss_keep = 3.0 + dl[i] - sink,
                                .dloss_keep = dl[i] - sink,
                                .sink_dloss = sink,
                                .destroyed = fq_destroyed(dl[i])};
    }
    md[0].source = src, md[0].source_layer = 1, md[0].n_tensors = 8, md[0].source_recovered = rec;
    QuantData d = {.len = 64,
                   .calib_batches = 4,
                   .keep_first = keep,
                   .n_seqs = 8,
                   .percentile = FQ_PERCENTILE,
                   .val_loss = 3.0,
                   .ppl = exp(3.0),
                   .inf_attn = 5.0,
                   .inf_ffn = 6.0,
                   .inf_layer = 40.0 + x,
                   .kurtosis_max = 100.0,
                   .n_modes = 4,
                   .modes = md};
    if (runfile_write_quant(path, &d, err, sizeof err) != 0) fail_msg("%s", err);
}

/* baseline: two seeds, nothing held out, w8a8 dloss 0.1 and 0.3, one
 * with a damage source; g1-elem: two seeds with the first position held
 * out, w8a8 dloss 3 (perplexity e^3 = 20x the float one: destroyed) on
 * one seed, a different source on each; other: no /quant. */
static int setup(void **state) {
    if (tu_scratch_setup(state)) return -1;
    char path[512];
    snprintf(path, sizeof path, "%s/runs", tu_scratch);
    mkdir(path, 0777);
    snprintf(path, sizeof path, "%s/csv", tu_scratch);
    mkdir(path, 0777);
    make_run("runs", "baseline_s1.h5", "baseline", 1);
    make_run("runs", "baseline_s2.h5", "baseline", 2);
    make_run("runs", "g1-elem_s1.h5", "g1-elem", 1);
    make_run("runs", "g1-elem_s2.h5", "g1-elem", 2);
    make_run("runs", "other_s1.h5", "g2-elem", 1);
    add_quant("runs", "baseline_s1.h5", 0, 0.1, NAN, 0.0, "layer 1 MLP input", 0.05);
    add_quant("runs", "baseline_s2.h5", 0, 0.3, NAN, 0.0, NULL, NAN);
    add_quant("runs", "g1-elem_s1.h5", 1, 3.0, 0.5, 0.0, "layer 0 attention input", 1.5);
    add_quant("runs", "g1-elem_s2.h5", 1, 1.0, 0.3, 0.002, "layer 1 MLP hidden", 0.25);
    return 0;
}

#define Q_HEADING "\n## Quantized evaluation (exploratory)"

/* The "## Quantized evaluation" section of the report at path (to the
 * next "## " heading), malloc'd; NULL when the report has none. */
static char *q_section(const char *path) {
    char *md = tu_slurp_ok(path, NULL), *out = tu_md_section(md, Q_HEADING);
    free(md);
    return out;
}

static void test_quant_section(void **state) {
    (void)state;
    char *a =
        report_twin_section(tu_join(tu_scratch, "runs"), tu_join(tu_scratch, "csv"), Q_HEADING);
    /* every mode's column, in fakequant.h's order */
    assert_non_null(strstr(a, "| run | seeds | ΔL w8a8 | ΔL w8a8-pct | ΔL w4a4 | ΔL w8a8-tok | "
                              "ΔL kv8 | ΔL kv4 |"));
    /* baseline: 0.1 and 0.3 (mean 0.2, std 0.1414); modes not evaluated blank */
    assert_non_null(strstr(a, "| baseline | 2 | +0.2000 ± 0.1414 | — | — | +0.0100 ± 0.0000 | "
                              "+0.0200 ± 0.0000 | +0.2000 ± 0.0000 |"));
    /* g1-elem: one seed's w8a8 destroyed (dloss 3 > ln 10) */
    assert_non_null(strstr(a, "| g1-elem | 2 | +2.0000 ± 1.4142 ⚠ | — | — | +0.0110 ± 0.0014 |"));
    /* the sink_dloss table: g1-elem alone (baseline held nothing out), K = 1 */
    assert_non_null(strstr(a, "| run | seeds | K | sink_dloss w8a8 | sink_dloss w8a8-pct |"));
    assert_non_null(strstr(a, "| g1-elem | 2 | 1 | +0.4000 ± 0.1414 ⚠ | — | — | "
                              "+0.0020 ± 0.0014 | +0.0030 ± 0.0014 | +0.0050 ± 0.0014 |"));
    assert_null(strstr(a, "| baseline | 2 | 0 |"));
    assert_null(strstr(a, "| g2-elem |")); /* no /quant */
    free(a);
}

/* The k-th comma-separated field of the line at p (no field before it
 * holds a comma or a quote). */
static char *field_at(char *p, int k) {
    for (; k > 0; k--) p = strchr(p, ',') + 1;
    return p;
}

/* Column name's index in results.csv's header; -1 when none. */
static int csv_col(const char *csv, const char *name) {
    size_t n = strlen(name);
    int k = 0;
    for (const char *p = csv; *p && *p != '\n'; k++) {
        if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\n')) return k;
        p += strcspn(p, ",\n");
        if (*p == ',') p++;
    }
    return -1;
}

/* The value of column col in the line of run file `file` of csv, as text
 * to the next comma (static buffer). */
static const char *csv_cell(char *csv, const char *file, int col) {
    static char out[64];
    char lead[64];
    snprintf(lead, sizeof lead, "\n%s,", file);
    char *line = strstr(csv, lead);
    assert_non_null(line);
    char *f = field_at(line + 1, col);
    snprintf(out, sizeof out, "%.*s", (int)strcspn(f, ",\n"), f);
    return out;
}

/* results.csv has quant_<mode>_destroyed for every mode of fakequant.h
 * (as the dloss columns spell it: no '-'), 1 where the run file's mode is
 * destroyed, blank where not evaluated; the report's ⚠ reads that column:
 * results.csv with one flag set marks that cell, and one with a flag blank
 * (written before the column) is judged on its dloss. */
static void test_destroyed_column(void **state) {
    (void)state;
    char err[512] = "", runs[300], dir[300], path[400];
    snprintf(runs, sizeof runs, "%s/runs", tu_scratch);
    if (report_run(runs, NULL, err, sizeof err) != 0) fail_msg("%s", err);
    size_t len;
    char *csv = tu_slurp_ok(tu_join(runs, "results.csv"), &len);
    int col[FQ_MODE_COUNT - 1];
    for (int m = 1; m < FQ_MODE_COUNT; m++) {
        char name[64], *o = name + snprintf(name, sizeof name, "quant_");
        for (const char *c = fq_mode_name((FqMode)m); *c; c++)
            if (*c != '-') *o++ = *c;
        snprintf(o, sizeof name - (size_t)(o - name), "_destroyed");
        col[m - 1] = csv_col(csv, name);
        if (col[m - 1] < 0) fail_msg("results.csv has no column %s", name);
    }
    assert_string_equal(csv_cell(csv, "g1-elem_s1.h5", col[FQ_W8A8 - 1]), "1");
    assert_string_equal(csv_cell(csv, "g1-elem_s2.h5", col[FQ_W8A8 - 1]), "0");
    assert_string_equal(csv_cell(csv, "baseline_s1.h5", col[FQ_KV8 - 1]), "0");
    assert_string_equal(csv_cell(csv, "baseline_s1.h5", col[FQ_W4A4 - 1]), "");
    assert_string_equal(csv_cell(csv, "other_s1.h5", col[FQ_W8A8 - 1]), "");
    /* set baseline_s1's kv8 flag: the report from that results.csv marks it */
    char *at = field_at(strstr(csv, "\nbaseline_s1.h5,") + 1, col[FQ_KV8 - 1]);
    *at = '1';
    /* blank g1-elem_s1's w8a8 flag, as a results.csv from before the column
     * reads: its dloss decides (fq_destroyed), so the cell keeps its mark */
    at = field_at(strstr(csv, "\ng1-elem_s1.h5,") + 1, col[FQ_W8A8 - 1]);
    assert_int_equal(*at, '1');
    memmove(at, at + 1, strlen(at + 1) + 1);
    len--;
    snprintf(dir, sizeof dir, "%s/flag", tu_scratch);
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/results.csv", dir);
    tu_write_file(path, csv, len);
    if (report_run(dir, NULL, err, sizeof err) != 0) fail_msg("%s", err);
    snprintf(path, sizeof path, "%s/REPORT.md", dir);
    char *q = q_section(path);
    assert_non_null(q);
    assert_non_null(strstr(q, "| baseline | 2 | +0.2000 ± 0.1414 | — | — | +0.0100 ± 0.0000 | "
                              "+0.0200 ± 0.0000 ⚠ | +0.2000 ± 0.0000 |"));
    assert_non_null(strstr(q, "| g1-elem | 2 | +2.0000 ± 1.4142 ⚠ |"));
    free(q), free(csv);
}

/* The damage sources: per run group and mode, the tensor most seeds name,
 * in how many of those that searched, and its mean recovery over them;
 * the same from results.csv alone (quant_<mode>_source and
 * quant_<mode>_source_recovered). Three seeds of one group here, two of
 * which name the same tensor; the fixture's groups give one of one and,
 * for two different tensors, the first. */
static void test_sources(void **state) {
    (void)state;
    char err[512] = "", dir[300], path[400];
    snprintf(dir, sizeof dir, "%s/src", tu_scratch);
    mkdir(dir, 0777);
    const char *src[3] = {"layer 1 MLP input", "layer 0 attention input", "layer 1 MLP input"};
    const double rec[3] = {0.3, 0.1, 0.5};
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "g2-elem_s%d.h5", i + 1);
        make_run("src", name, "g2-elem", i + 1);
        add_quant("src", name, 0, 0.2 + i, NAN, 0.0, src[i], rec[i]);
    }
    /* results.csv alone gives the same section */
    snprintf(path, sizeof path, "%s/src-csv", tu_scratch);
    mkdir(path, 0777);
    char *a = report_twin_section(dir, path, Q_HEADING);
    assert_non_null(strstr(a, "| run | mode | source | seeds | recovered |\n|---|---|---|---|---|\n"
                              "| g2-elem | w8a8 | layer 1 MLP input | 2 of 3 | +0.4000 |\n"));
    assert_null(strstr(a, "| g2-elem | w8a8-tok |")); /* no source searched */
    char *csv = tu_slurp_ok(tu_join(dir, "results.csv"), NULL);
    assert_string_equal(csv_cell(csv, "g2-elem_s2.h5", csv_col(csv, "quant_w8a8_source_recovered")),
                        "0.1");
    free(a), free(csv);
    /* the fixture: baseline's one source of one seed; g1-elem's two, the first */
    snprintf(path, sizeof path, "%s/runs", tu_scratch);
    if (report_run(path, NULL, err, sizeof err) != 0) fail_msg("%s", err);
    a = q_section(tu_join(path, "REPORT.md"));
    assert_non_null(strstr(a, "| baseline | w8a8 | layer 1 MLP input | 1 of 1 | +0.0500 |\n"
                              "| g1-elem | w8a8 | layer 0 attention input | 1 of 2 | +1.5000 |\n"));
    assert_null(strstr(a, "| g2-elem | w8a8 |")); /* other: no /quant */
    free(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_quant_section),
                                       cmocka_unit_test(test_destroyed_column),
                                       cmocka_unit_test(test_sources)};
    return cmocka_run_group_tests(tests, setup, tu_scratch_teardown);
}
