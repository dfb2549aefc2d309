/* report_md.c: the tables of REPORT.md (settings, variants, the paper's
 * numbers beside ours, runs, definitions). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h" /* variant_key */
#include "heatmap.h"
#include "metrics.h"
#include "plot.h"
#include "protocol_pin.h" /* pin_build, pin_rules */
#include "report_priv.h"
#include "runfile_read.h"
#include "runname.h"
#include "runstats.h"
#include "util.h"
#include "paper_tables.h"

/* ---- REPORT.md ---- */

/* The columns of REPORT.md's two metric tables (metric_table.h), in
 * order; filled once by md_columns. */
#define MAX_MD_COLS 32
static const MetricCol *COLS[MAX_MD_COLS], *COLS2[MAX_MD_COLS];
static size_t N_COLS, N_COLS2;

static void md_columns(void) {
    if (N_COLS) return;
    N_COLS = (size_t)metric_md_columns(1, COLS, MAX_MD_COLS);
    N_COLS2 = (size_t)metric_md_columns(2, COLS2, MAX_MD_COLS);
}

static int any_unbounded(const Row *rows, int a, int b) {
    for (int i = a; i < b; i++)
        if (rows[i].gate_unbounded) return 1;
    return 0;
}

static double col_val(const Row *w, const MetricCol *c) { return metric_value(w, c); }

/* "mean ± std" over the finite values of column c in rows[a..b), with
 * "(k/n)" when only k of the n runs had a value. */
static void md_agg(FILE *f, const Row *rows, int a, int b, const MetricCol *c) {
    double v[256];
    int k = 0;
    for (int i = a; i < b && k < 256; i++)
        if (isfinite(col_val(&rows[i], c))) v[k++] = col_val(&rows[i], c);
    fputs(" | ", f);
    if (c->na_unbounded && any_unbounded(rows, a, b)) {
        fputs("n/a", f);
        return;
    }
    if (!k) return;
    double m, s;
    mean_std(v, k, &m, &s);
    fprintf(f, c->fmt, m);
    if (b - a > 1) {
        char sfmt[16]; /* the std has no sign: drop a '+' flag */
        snprintf(sfmt, sizeof sfmt, "%%%s", c->fmt + (c->fmt[1] == '+' ? 2 : 1));
        fputs(" ± ", f);
        fprintf(f, sfmt, s);
    }
    if (k < b - a) fprintf(f, " (%d/%d)", k, b - a);
}

static void md_status(FILE *f, const Row *rows, int a, int b) {
    fputs(" | ", f);
    int all_done = 1;
    for (int i = a; i < b; i++) all_done &= !strcmp(rows[i].status, RS_STATUS_DONE);
    if (all_done) fputs("done ", f);
    for (int i = a; i < b; i++) {
        const Row *w = &rows[i];
        if (!strcmp(w->status, RS_STATUS_DIVERGED))
            fprintf(f, "s%lld diverged at step %lld; ", w->seed, w->diverged_step);
        else if (strcmp(w->status, RS_STATUS_DONE)) fprintf(f, "s%lld %s; ", w->seed, w->status);
    }
}

/* Header row: the nlead leading columns, then cols[nc] and status. */
static void md_header(FILE *f, const char *const *lead, int nlead, const MetricCol *const *cols,
                      size_t nc) {
    char head[128];
    fputc('|', f);
    for (int i = 0; i < nlead; i++) fprintf(f, " %s |", lead[i]);
    for (size_t c = 0; c < nc; c++) {
        metric_head(cols[c], head, sizeof head);
        fprintf(f, " [%s](#%s) |", head, cols[c]->anchor);
    }
    fprintf(f, " [status](#def-status) |\n|");
    for (size_t c = 0; c < (size_t)nlead + nc + 1; c++) fputs("---|", f);
    fputs("\n", f);
}

static const char *const LEAD_GROUP[] = {"[run](#def-run)", "[variant](#def-variant)",
                                         "[data](#def-data)", "[seeds](#def-seeds)"};

static void md_group_table(FILE *f, const Row *rows, int n, const MetricCol *const *cols,
                           size_t nc) {
    md_header(f, LEAD_GROUP, 4, cols, nc);
    for (int a = 0; a < n && rows[a].ok;) {
        int b = group_end(rows, n, a);
        fprintf(f, "| %s | %s | %s | %d", rows[a].run, rows[a].variant, rows[a].data, b - a);
        for (size_t c = 0; c < nc; c++) md_agg(f, rows, a, b, cols[c]);
        md_status(f, rows, a, b);
        fputs("|\n", f);
        a = b;
    }
}

void md_variants(FILE *f, const Row *rows, int n) {
    md_columns();
    fprintf(f, "## Results by run\n\nOne row per run name (the file name "
               "without its `_s<seed>`); mean ± sample std over seeds; "
               "`(k/n)` marks a column only k of the n runs had.\n\n");
    md_group_table(f, rows, n, COLS, N_COLS);
    fprintf(f, "\n### Sink and activation detail\n\nThe same groups: the "
               "other sink rates, empty attention rows, the sink "
               "slot's own share and the activation statistics of the "
               "probe.\n\n");
    md_group_table(f, rows, n, COLS2, N_COLS2);
}

static void md_paper_cell(FILE *f, double ours, double paper, const char *fmt) {
    fputs(" | ", f);
    if (isfinite(ours)) fprintf(f, fmt, ours);
    else fputs("–", f);
    fputs(" / ", f);
    if (isfinite(paper)) fprintf(f, fmt, paper);
    else fputs("–", f);
}

/* Ours beside the paper's: one row per group of the paper's architecture
 * (row_paper_arch) whose variant the paper reports (a variant run on two
 * data sources gives two rows); the groups of another architecture are
 * counted in a line after the table. */
void md_paper(FILE *f, const Row *rows, int n) {
    const PaperRow *pb = paper_row(variant_key_id(VARIANT_KEY_BASELINE));
    fprintf(f, "\n## Ours beside the paper\n\nEach cell is *ours / paper* "
               "(ours: mean over seeds). The paper's numbers are reference data, not "
               "our results: Qiu et al., \"Gated Attention for Large Language "
               "Models\" (NeurIPS 2025, arXiv 2505.06708), Table 1 (MoE 15A2B, 400B "
               "tokens: PPL), Table 3 (PPL) and Table 4 (gate mean, M-Act, F-Attn). "
               "Our models are about 10^4 times smaller: compare directions and "
               "ratios, not absolute values. PPL is not comparable at all (our "
               "bigram, byte or small-vocabulary tokens against the paper's BPE), so "
               "the PPL column is the relative change against the baseline, ours "
               "against the matching baseline group ([ΔPPL %%](#def-dppl-rel)) and "
               "the paper's against its baseline row. `wider-ffn` stands in for the "
               "paper's \"+4 experts\" row.\n\n"
               "| run | data | paper row | source | [ΔPPL %%](#def-dppl-rel) | "
               "[gate mean](#def-gate-mean) | [M-Act](#def-mact) | [F-Attn](#def-fattn) |\n"
               "|---|---|---|---|---|---|---|---|\n");
    int other = 0;
    for (int a = 0; a < n && rows[a].ok;) {
        int b = group_end(rows, n, a);
        const PaperRow *pr = paper_row(rows[a].variant);
        if (pr && !row_paper_arch(&rows[a])) other++;
        else if (pr) {
            double m[4], s;
            static const char *const names[4] = {"dppl_pct_vs_baseline", "gate_mean", "m_act",
                                                 "f_attn"};
            for (int j = 0; j < 4; j++) {
                double v[256];
                int k = 0;
                const MetricCol *c = metric_find(names[j]);
                for (int i = a; c && i < b && k < 256; i++) {
                    double x = metric_value(&rows[i], c);
                    if (isfinite(x)) v[k++] = x;
                }
                if (k) mean_std(v, k, &m[j], &s);
                else m[j] = NAN;
            }
            double paper_rel =
                pb && isfinite(pb->ppl) && pb->ppl > 0 ? 100.0 * (pr->ppl / pb->ppl - 1.0) : NAN;
            fprintf(f, "| %s | %s | %s | %s", rows[a].run, rows[a].data, pr->id, pr->source);
            md_paper_cell(f, m[0], paper_rel, "%+.2f");
            md_paper_cell(f, m[1], pr->gate_mean, "%.3f");
            md_paper_cell(f, m[2], pr->m_act, "%.4g");
            md_paper_cell(f, m[3], pr->f_attn, "%.3f");
            fputs(" |\n", f);
        }
        a = b;
    }
    put_other_arch(f, other, "run group", ": the paper's rows are not its reference.",
                   ": the paper's rows are not their reference.");
}

/* One line naming every group that no baseline group matches (fill_dppl:
 * the same data, seq_len, lr, steps and architecture as it attends,
 * whose keys off the paper's it names: row_arch_note), nothing when each
 * has one. */
static void md_unmatched(FILE *f, const Row *rows, int n) {
    int k = 0;
    for (int a = 0; a < n && rows[a].ok; a = group_end(rows, n, a)) {
        if (rows[a].base >= 0 || rows[a].pretrained) continue;
        char note[RS_N_ARCH * 32];
        row_arch_note(&rows[a], note, sizeof note);
        fprintf(f, "%s`%s` (%s%s%s)", k++ ? ", " : "\nNo matching baseline group for ", rows[a].run,
                rows[a].data, *note ? ", " : "", note);
    }
    if (!k) return;
    fputs(": no baseline run here shares its data, seq_len, lr, steps and architecture (", f);
    for (int j = 0; j < RS_N_ARCH; j++) fprintf(f, "%s%s", j ? ", " : "", RS_ARCH_KEY[j]);
    fputs("), so its ΔPPL is blank and it is not compared.\n", f);
}

void md_runs(FILE *f, const Row *rows, int n) {
    fputs("\n## Runs\n", f);
    if (rows_trained(rows, n)) {
        fputs("\nΔPPL of each run is against the mean of the baseline group named in *vs*.\n", f);
        md_unmatched(f, rows, n);
    }
    fputs("\n", f);
    static const char *const lead[] = {
        "file", "[run](#def-run)", "[variant](#def-variant)", "[data](#def-data)", "seed", "vs"};
    md_columns();
    md_header(f, lead, 6, COLS, N_COLS);
    for (int i = 0; i < n && rows[i].ok; i++) {
        const Row *w = &rows[i];
        char file[256];
        table_name(file, sizeof file, w->file);
        fprintf(f, "| %s | %s | %s | %s | %lld | %s", file, w->run, w->variant, w->data, w->seed,
                w->base >= 0 ? rows[w->base].run : "–");
        for (size_t c = 0; c < N_COLS; c++) {
            double v = col_val(w, COLS[c]);
            fputs(" | ", f);
            if (COLS[c]->na_unbounded && w->gate_unbounded) fputs("n/a", f);
            else if (isfinite(v)) fprintf(f, COLS[c]->fmt, v);
        }
        fprintf(f, " | %s", w->status);
        if (w->probe_err[0]) fputs("; probe unreadable (below)", f);
        if (!strcmp(w->status, RS_STATUS_DIVERGED))
            fprintf(f, ": diverged at step %lld", w->diverged_step);
        if (w->spikes > 0) {
            fputs("; spikes at steps", f);
            for (int k = 0; k < (int)w->spikes && k < MAX_SPIKE_STEPS; k++)
                fprintf(f, " %lld", w->spike_steps[k]);
            if (w->spikes > MAX_SPIKE_STEPS) fputs(" …", f);
        }
        fputs(" |\n", f);
    }
    int bad = 0, bad_probe = 0;
    char name[256], why[512]; /* a file name as a code span shows it, a reason as text */
    for (int i = 0; i < n; i++) bad += !rows[i].ok;
    for (int i = 0; i < n; i++) bad_probe += rows[i].ok && rows[i].probe_err[0];
    if (bad_probe) {
        fprintf(f, "\n### Run files whose probe cannot be read\n\nTheir "
                   "training columns are shown; every probe column is blank.\n\n");
        for (int i = 0; i < n; i++) {
            if (!rows[i].ok || !rows[i].probe_err[0]) continue;
            table_name(name, sizeof name, rows[i].file);
            table_name(why, sizeof why, rows[i].probe_err);
            fprintf(f, "- `%s`: probe unreadable: %s\n", name, why);
        }
    }
    if (!bad) return;
    fprintf(f, "\n### Unreadable run files\n\n");
    for (int i = 0; i < n; i++) {
        if (rows[i].ok) continue;
        table_name(name, sizeof name, rows[i].file);
        table_name(why, sizeof why, rows[i].err);
        fprintf(f, "- `%s`: unreadable: %s\n", name, why);
    }
}

/* One line per data source: the config values its runs share, and for a
 * key they do not share its distinct values (e.g. lr over a stability
 * sweep). */

/* The probe line of Settings: the first probed run's shape, and how many
 * runs' attention is Gu et al.'s proxy (normalisers without rows that sum
 * to one), since a sweep mixes them */
static void md_settings_probe(FILE *f, const Row *rows, int n, const Row *probed) {
    int probes = 0, proxies = 0, mixed = 0;
    for (int i = 0; i < n; i++) {
        if (!rows[i].ok || !rows[i].has_probe) continue;
        probes++;
        proxies += rows[i].proxy != 0;
        mixed |= strcmp(rows[i].normaliser, probed->normaliser) != 0;
    }
    fprintf(f, "- Probe (last probe of each run): %d sequences of length T = %d; normaliser %s; ",
            probed->probe_N, probed->probe_T, mixed ? "per run (see Runs)" : probed->normaliser);
    if (proxies == 0) fprintf(f, "attention is post-softmax (no proxy).\n");
    else if (proxies == probes) fprintf(f, "attention is the Gu et al. proxy |a|/sum|a|.\n");
    else
        fprintf(f,
                "attention is post-softmax except in %d of %d runs, where it is the Gu et al. "
                "proxy |a|/sum|a|.\n",
                proxies, probes);
}

/* The architecture keys of the runs on data into the Settings line: a key
 * all of them share is named (after ", " when *shared) only when it is
 * not the paper's; one they do not share goes into differ[dn] ("; key v1
 * v2") with its values. */
static void md_settings_arch(FILE *f, const Row *rows, int n, const char *data, int *shared,
                             char *differ, size_t dn) {
    for (int k = 0; k < RS_N_ARCH; k++) {
        const char *vals[8];
        int nv = 0;
        for (int i = 0; i < n && rows[i].ok && nv < 8; i++) {
            if (rows[i].pretrained || strcmp(rows[i].data, data)) continue;
            int seen = 0;
            for (int j = 0; j < nv; j++) seen |= !strcmp(vals[j], rows[i].arch[k]);
            if (!seen) vals[nv++] = rows[i].arch[k];
        }
        if (nv == 1 && !rs_arch_is_paper(k, vals[0]))
            fprintf(f, "%s%s %s", (*shared)++ ? ", " : "", RS_ARCH_KEY[k], vals[0]);
        if (nv < 2) continue;
        size_t dl = strlen(differ);
        dl += (size_t)snprintf(differ + dl, dl < dn ? dn - dl : 0, "%s%s", dl ? "; " : "",
                               RS_ARCH_KEY[k]);
        for (int j = 0; j < nv && dl < dn; j++)
            dl += (size_t)snprintf(differ + dl, dn - dl, " %s", vals[j]);
    }
}

static void md_settings_data(FILE *f, const Row *rows, int n, const char *data) {
    int nrun = 0;
    for (int i = 0; i < n && rows[i].ok; i++)
        nrun += !rows[i].pretrained && !strcmp(rows[i].data, data);
    fprintf(f, "- Data %s (%d run%s): ", data, nrun, nrun == 1 ? "" : "s");
    char differ[512] = "";
    size_t dl = 0;
    int shared = 0;
    for (size_t k = 0; k < N_CFG; k++) {
        double vals[8];
        int nv = 0, more = 0;
        for (int i = 0; i < n && rows[i].ok; i++) {
            if (rows[i].pretrained || strcmp(rows[i].data, data)) continue;
            int seen = 0;
            for (int j = 0; j < nv; j++) seen |= cfg_eq(vals[j], rows[i].cfg[k]);
            if (seen) continue;
            if (nv < 8) vals[nv++] = rows[i].cfg[k];
            else more = 1;
        }
        if (nv == 1) {
            fprintf(f, "%s%s %g", shared++ ? ", " : "", CFG_KEYS[k], vals[0]);
            continue;
        }
        dl += (size_t)snprintf(differ + dl, dl < sizeof differ ? sizeof differ - dl : 0, "%s%s",
                               dl ? "; " : "", CFG_KEYS[k]);
        for (int j = 0; j < nv && dl < sizeof differ; j++)
            dl += (size_t)snprintf(differ + dl, sizeof differ - dl, " %g", vals[j]);
        if (more && dl < sizeof differ)
            dl += (size_t)snprintf(differ + dl, sizeof differ - dl, " …");
        if (dl >= sizeof differ) dl = sizeof differ - 1;
    }
    md_settings_arch(f, rows, n, data, &shared, differ, sizeof differ);
    if (differ[0]) fprintf(f, "%sdiffering across runs: %s", shared ? "; " : "", differ);
    fputs(".\n", f);
}

void md_title(FILE *f, const char *dir, const Row *rows, int n, int from_csv) {
    int ok = 0, bad_probe = 0;
    for (int i = 0; i < n; i++) ok += rows[i].ok;
    for (int i = 0; i < n; i++) bad_probe += rows[i].ok && rows[i].probe_err[0];
    time_t now = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&now));
    char shown_dir[1024];
    table_name(shown_dir, sizeof shown_dir, dir);
    if (from_csv == n) {
        fprintf(f,
                "# gatelab report\n\nFrom `%s/results.csv` alone: %d runs, their run files are "
                "not here. The tables and tests below are those the run files give, the "
                "long-context section included; the Figures section and the sections that read "
                "a run file's probes, streams and interventions (stability, pretrained, stream, "
                "mechanism) are left out",
                shown_dir, n);
    } else {
        fprintf(f,
                "# gatelab report\n\nRun files in `%s`: %d (%d readable, %d "
                "unreadable",
                shown_dir, n - from_csv, ok - from_csv - bad_probe, n - ok);
        if (bad_probe) fprintf(f, ", %d with an unreadable probe (listed under Runs)", bad_probe);
        fputc(')', f);
    }
    if (from_csv && from_csv < n)
        fprintf(f,
                ", and %d rows of `%s/results.csv` whose run files are not here: the declared runs "
                "of the study's earlier pieces (`gatelab sweep --seeds`), joined. The tables, the "
                "tests and the long-context section below are over all %d runs; the Figures "
                "section and the sections that read a run file's probes, streams and "
                "interventions (stability, pretrained, stream, mechanism) over the %d run files "
                "only",
                from_csv, shown_dir, n, n - from_csv);
    char rules[160];
    pin_rules(rules, sizeof rules);
    fprintf(f, ". Written %s by gatelab %s, under the analysis rules \"%s\".\n", when, pin_build(),
            rules);
}

/* The sink-rate line of Settings: the queries Gu et al.'s alpha_0 reads,
 * SINK_LEN or the probe length when that is shorter (the range over the
 * probed runs when their probes differ). */
static void md_settings_sink(FILE *f, const Row *rows, int n) {
    int lo = SINK_LEN, hi = 0;
    for (int i = 0; i < n; i++) {
        if (!rows[i].ok || !rows[i].has_probe) continue;
        int len = rows[i].probe_T < SINK_LEN ? rows[i].probe_T : SINK_LEN;
        lo = len < lo ? len : lo, hi = len > hi ? len : hi;
    }
    if (hi == 0) lo = hi = SINK_LEN;
    fprintf(f, "- Sink rate: ε = %g, k = 0, probe length ", SINK_EPS);
    if (lo == hi) fprintf(f, "%d (the first %d queries", lo, lo);
    else fprintf(f, "%d to %d (the first min(%d, T) queries", lo, hi, SINK_LEN);
    fputs(" of each probe sequence).\n", f);
}

/* Settings: per data source of the trained runs their shared config, the
 * probe, the sink rate's length, the spike rule when some run trained,
 * and a line for the checkpoints `gatelab inspect` probed (no training,
 * no data source). */
void md_settings(FILE *f, const Row *rows, int n) {
    fputs("\n## Settings\n\n", f);
    const Row *probed = NULL;
    int trained = 0, inspected = 0;
    for (int i = 0; i < n && !probed; i++)
        if (rows[i].ok && rows[i].has_probe) probed = &rows[i];
    for (int i = 0; i < n && rows[i].ok; i++) {
        inspected += rows[i].pretrained, trained += !rows[i].pretrained;
        int seen = rows[i].pretrained;
        for (int j = 0; j < i && !seen; j++)
            seen = !rows[j].pretrained && !strcmp(rows[j].data, rows[i].data);
        if (!seen) md_settings_data(f, rows, n, rows[i].data);
    }
    if (inspected)
        fprintf(f,
                "- Checkpoints (%d run file%s of `gatelab inspect`): one probe each, no "
                "training; see Pretrained models.\n",
                inspected, inspected == 1 ? "" : "s");
    if (probed) md_settings_probe(f, rows, n, probed);
    else
        fprintf(f, "- No run has a probe yet: attention, gate and activation "
                   "columns are blank.\n");
    md_settings_sink(f, rows, n);
    if (trained || !inspected)
        fputs("- Loss spikes: loss > spike_factor × median of the previous "
              "50 steps, after warmup.\n",
              f);
    fputc('\n', f);
}

void md_definitions(FILE *f) {
    fprintf(f, "\n## Definitions\n\nPositions are 0-indexed; position 0 is "
               "the first token (BOS when BOS is on). A is the post-softmax (or "
               "proxy) attention of one head, averaged over probe sequences: rows "
               "are queries t, columns keys j ≤ t.\n\n");
    fprintf(f, "<a id=\"def-run\"></a>**run**: the run name, the file name "
               "without `.h5` and its `_s<seed>` suffix (the sweep's `[run NAME]`); "
               "runs are grouped by it, so one variant on two data sources or "
               "learning rates gives two rows.\n\n"
               "<a id=\"def-variant\"></a>**variant**: the gate variant id "
               "(docs/variants.md).\n\n"
               "<a id=\"def-data\"></a>**data**: the training data source "
               "(`data` in /config).\n\n"
               "<a id=\"def-seeds\"></a>**seeds**: number of runs (seeds) in "
               "the group; the Runs table gives each run's seed.\n\n");
    fprintf(f,
            "<a id=\"def-sink-formed\"></a>**sink formed**: a seed formed a sink when its "
            "F-Attn at the last probe exceeds %g times the share of uniform attention (causal, "
            "under the run's own sliding window if any) at the probe length (`sink_formed` in "
            "results.csv; docs/metrics.md).\n\n",
            SINK_FORMED_FACTOR);
    md_columns();
    char head[128], def[2048];
    for (size_t c = 0; c < N_COLS + N_COLS2; c++) {
        const MetricCol *m = c < N_COLS ? COLS[c] : COLS2[c - N_COLS];
        metric_head(m, head, sizeof head);
        metric_def(m, def, sizeof def);
        fprintf(f, "<a id=\"%s\"></a>**%s**: %s\n\n", m->anchor, head, def);
    }
    for (int i = 0; metric_at(i); i++) { /* results.csv columns the prose links to */
        const MetricCol *m = metric_at(i);
        if (m->md_table || !m->anchor || !m->def) continue;
        metric_name(m, head, sizeof head);
        metric_def(m, def, sizeof def);
        fprintf(f, "<a id=\"%s\"></a>**%s**: %s\n\n", m->anchor, head, def);
    }
    fprintf(f, "<a id=\"def-status\"></a>**status**: running, done or "
               "diverged (a non-finite loss or grad norm; the run stopped "
               "cleanly at that step with its data saved).\n");
}
