/* report.c: `gatelab report DIR`: REPORT.md + results.csv + figures over
 * every run file in a directory. Each run is reduced to one Row of
 * headline numbers (runstats.h, the same code the text tools print), rows
 * are grouped by run name (runname.h: the file stem without its _s<seed>;
 * mean +- std over seeds), so one variant trained on two data sources or
 * at two learning rates stays two groups. ΔPPL compares a group with the
 * baseline group trained on the same data with the same seq_len, lr and
 * steps. The paper's own figures are set beside ours as clearly labelled
 * reference data. */
#include "report.h"
#include "report_extra.h"
#include "report_pretrained.h"
#include "commands.h"
#include "heatmap.h"
#include "metrics.h"
#include "plot.h"
#include "runname.h"
#include "runread.h"
#include "runstats.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_SPIKE_STEPS 8

/* /config keys the Settings section shows; ΔPPL matches on MATCH_CFG. */
static const char *const CFG_KEYS[] = {"n_layers", "d_model", "n_heads",
    "seq_len", "batch_size", "steps", "lr", "warmup", "spike_factor"};
#define N_CFG (sizeof CFG_KEYS / sizeof CFG_KEYS[0])
enum { CFG_SEQ_LEN = 3, CFG_STEPS = 5, CFG_LR = 6 };

typedef struct {
    char path[1024];
    const char *file;   /* basename inside path */
    int ok;             /* 0: unreadable, err says why */
    char err[512];
    char variant[256], status[32];
    char run[256];      /* run name: the group key with variant and data */
    char data[64];      /* /config data: bigram, brown, ... ("?" if absent) */
    double cfg[N_CFG];  /* /config values of CFG_KEYS (NaN if absent) */
    int base;           /* first row of the matching baseline group, -1 */
    long long seed, n_params, n_params_added, diverged_step;
    double steps, val_loss, ppl, bpb, dppl, f_attn, f_attn_uniform, sink03,
        gate_mean, gate_below01, m_act, spikes, tokens_per_sec;
    long long spike_steps[MAX_SPIKE_STEPS];
    int probe_T, probe_N, proxy, has_probe;
    char normaliser[64];
} Row;

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- the paper's figures (reference data, not our results) ----
 * Qiu et al. 2025, arXiv 2505.06708: Table 1 (MoE 15A2B, 400B tokens) PPL,
 * Table 3 PPL, Table 4 gate mean / M-Act / F-Attn. NAN = not reported. */
typedef struct {
    const char *id, *source;
    double ppl, gate_mean, m_act, f_attn;
} PaperRow;

static const PaperRow PAPER[] = {
    {"baseline", "T1, T4", 6.026, NAN, 1053, 0.467},
    {"more-kv-heads", "T1 (k=8)", 5.979, NAN, NAN, NAN},
    {"more-q-heads", "T1 (q=48)", 5.953, NAN, NAN, NAN},
    {"wider-ffn", "T1 (+4 experts)", 5.964, NAN, NAN, NAN},
    {"g1-elem", "T1, T4", 5.761, 0.116, 94, 0.048},
    {"g2-elem", "T1, T4", 5.820, 0.221, 125, 0.297},
    {"g3-elem", "T1", 6.016, NAN, NAN, NAN},
    {"g4-elem", "T1", 5.981, NAN, NAN, NAN},
    {"g5-elem", "T1", 6.017, NAN, NAN, NAN},
    {"g1-head", "T1, T4", 5.792, 0.172, 98, 0.073},
    {"g2-head", "T1", 5.808, NAN, NAN, NAN},
    {"g1-shared", "T1, T4", 5.801, 0.271, 286, 0.301},
    {"g2-shared", "T1", 5.867, NAN, NAN, NAN},
    {"g1-add-silu", "T1", 5.821, NAN, NAN, NAN},
    {"g1-mult-silu", "T1", 5.822, NAN, NAN, NAN},
    {"sdpa-rmsnorm", "T3", 5.847, NAN, NAN, NAN},
    {"sdpa-silu", "T3", 5.975, NAN, NAN, NAN},
    {"g1-add-id", "T3", 5.882, NAN, NAN, NAN},
    {"g1-const", "T4", 5.917, 0.335, 471, 0.364},
    {"g1-ns", "T4", 5.9, 0.653, 892, 0.451},
};
#define N_PAPER (sizeof PAPER / sizeof PAPER[0])

static const PaperRow *paper_row(const char *variant)
{
    for (size_t i = 0; i < N_PAPER; i++)
        if (!strcmp(PAPER[i].id, variant)) return &PAPER[i];
    return NULL;
}

/* ---- one run -> one Row ---- */

static double cfg_or(RunReader *r, const char *key, double dflt)
{
    double v;
    return runread_config_double(r, key, &v, NULL, 0) == 0 ? v : dflt;
}

static double summ_or(RunReader *r, const char *key, double dflt)
{
    double v;
    return runread_summary(r, key, &v, NULL, 0) == 0 ? v : dflt;
}

static void row_series(RunReader *r, Row *w)
{
    RunTrain t;
    if (runread_train(r, &t, NULL, 0) == 0) {
        if (t.n && isnan(w->steps)) w->steps = (double)t.step[t.n - 1];
        long long idx[MAX_SPIKE_STEPS];
        int n = count_spikes(t.loss, t.step, t.n,
                             (long long)cfg_or(r, "warmup", 0), 50,
                             cfg_or(r, "spike_factor", 1.25), idx,
                             MAX_SPIKE_STEPS);
        w->spikes = n;
        for (int i = 0; i < n && i < MAX_SPIKE_STEPS; i++)
            w->spike_steps[i] = t.step[idx[i]];
        runread_train_free(&t);
    }
    RunEval e;
    if (runread_eval(r, &e, NULL, 0) == 0) {
        if (e.n) {
            if (isnan(w->val_loss)) w->val_loss = e.val_loss[e.n - 1];
            w->bpb = e.val_bpb[e.n - 1];
        }
        runread_eval_free(&e);
    }
}

static void row_probe(RunReader *r, Row *w)
{
    RunProbe p;
    if (runread_probe(r, -1, &p, NULL, 0) < 0) return; /* no probes yet */
    w->has_probe = 1;
    w->probe_T = p.T;
    w->probe_N = p.N;
    w->proxy = p.proxy;
    snprintf(w->normaliser, sizeof w->normaliser, "%s", p.normaliser);
    w->f_attn = rs_share(&p, -1);
    w->f_attn_uniform = uniform_first_share(p.T);
    w->sink03 = rs_sink_rate(&p, 0.3, RUNSTATS_SINK_LEN);
    if (p.has_gate) {
        w->gate_mean = rs_gate_mean(&p, -1);
        w->gate_below01 = rs_gate_below(&p, -1, 1);
    }
    w->m_act = rs_m_act(&p);
    runread_probe_free(&p);
}

static void row_read(Row *w)
{
    w->steps = w->val_loss = w->ppl = w->bpb = w->dppl = w->f_attn = NAN;
    w->f_attn_uniform = w->sink03 = w->gate_mean = w->gate_below01 = NAN;
    w->m_act = w->spikes = w->tokens_per_sec = NAN;
    w->diverged_step = -1;
    w->base = -1;
    run_name(w->run, sizeof w->run, w->path);
    RunReader *r = runread_open(w->path, w->err, sizeof w->err);
    if (!r) return;
    const RunMeta *m = runread_meta(r);
    w->ok = 1;
    if (runread_config_string(r, "data", w->data, sizeof w->data, NULL, 0))
        snprintf(w->data, sizeof w->data, "?");
    for (size_t k = 0; k < N_CFG; k++) w->cfg[k] = cfg_or(r, CFG_KEYS[k], NAN);
    snprintf(w->variant, sizeof w->variant, "%s", m->variant);
    snprintf(w->status, sizeof w->status, "%s", m->status);
    w->seed = m->seed;
    w->n_params = m->n_params;
    w->n_params_added = m->n_params_added;
    w->steps = summ_or(r, "steps_done", NAN);
    double fv = summ_or(r, "final_val_loss", NAN);
    if (isfinite(fv)) w->val_loss = fv;
    w->tokens_per_sec = summ_or(r, "tokens_per_sec", NAN);
    w->diverged_step = (long long)summ_or(r, "diverged_step", -1);
    row_series(r, w);
    w->ppl = exp(w->val_loss);
    row_probe(r, w);
    runread_close(r);
}

/* ---- directory scan ---- */

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && !strcmp(s + n - k, suf);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* *.h5 names in dir, sorted (checkpoints end in .ckpt and are skipped). */
static int list_runs(const char *dir, char ***out, int *n, char *err,
                     size_t errlen)
{
    *n = 0;
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d) {
        seterr(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    int cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!ends_with(e->d_name, ".h5") || e->d_name[0] == '.') continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **p = realloc(names, (size_t)cap * sizeof *p);
            if (!p) break;
            names = p;
        }
        if (!(names[*n] = strdup(e->d_name))) break;
        (*n)++;
    }
    closedir(d);
    if (*n) qsort(names, (size_t)*n, sizeof *names, cmp_str);
    *out = names;
    return 0;
}

/* Group order: baseline-variant groups first, then by run name, variant
 * and data; seeds ascending within a group. */
static int cmp_row(const void *a, const void *b)
{
    const Row *x = a, *y = b;
    if (x->ok != y->ok) return y->ok - x->ok;
    int xb = !strcmp(x->variant, "baseline"), yb = !strcmp(y->variant, "baseline");
    if (xb != yb) return yb - xb;
    int c = strcmp(x->run, y->run);
    if (!c) c = strcmp(x->variant, y->variant);
    if (!c) c = strcmp(x->data, y->data);
    if (c) return c;
    return (x->seed > y->seed) - (x->seed < y->seed);
}

static int same_group(const Row *x, const Row *y)
{
    return x->ok && y->ok && !strcmp(x->run, y->run) &&
           !strcmp(x->variant, y->variant) && !strcmp(x->data, y->data);
}

/* End (exclusive) of the group that starts at row a. */
static int group_end(const Row *rows, int n, int a)
{
    int b = a + 1;
    while (b < n && same_group(&rows[a], &rows[b])) b++;
    return b;
}

/* Equal, or both absent from the config. */
static int cfg_eq(double x, double y)
{
    if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
    return fabs(x - y) <= 1e-9 * fmax(fabs(x), fabs(y));
}

/* How well baseline group starting at row bg fits group g (higher is
 * better, -1 no match): same data, seq_len, lr and steps are required;
 * the group itself beats "baseline-<suffix>" sharing g's run-name suffix
 * (g1-elem-brown -> baseline-brown), which beats plain "baseline". */
static int base_score(const Row *bg, const Row *g, int self)
{
    if (strcmp(bg->variant, "baseline") || strcmp(bg->data, g->data)) return -1;
    static const int keys[] = {CFG_SEQ_LEN, CFG_LR, CFG_STEPS};
    for (int k = 0; k < 3; k++)
        if (!cfg_eq(bg->cfg[keys[k]], g->cfg[keys[k]])) return -1;
    if (self) return 3;
    size_t nv = strlen(g->variant);
    const char *suffix = !strncmp(g->run, g->variant, nv) && g->run[nv] == '-'
                             ? g->run + nv + 1 : NULL;
    if (suffix && !strncmp(bg->run, "baseline-", 9) && !strcmp(bg->run + 9, suffix))
        return 2;
    return !strcmp(bg->run, "baseline");
}

static double group_ppl(const Row *rows, int a, int b)
{
    double s = 0.0;
    int k = 0;
    for (int i = a; i < b; i++)
        if (isfinite(rows[i].ppl)) s += rows[i].ppl, k++;
    return k ? s / k : NAN;
}

/* base and dppl of every row: PPL minus the mean PPL of the best matching
 * baseline group (blank when no baseline group matches). */
static void fill_dppl(Row *rows, int n)
{
    for (int a = 0; a < n && rows[a].ok;) {
        int b = group_end(rows, n, a), best = -1, best_score = -1;
        for (int c = 0; c < n && rows[c].ok; c = group_end(rows, n, c)) {
            int sc = base_score(&rows[c], &rows[a], c == a);
            if (sc > best_score) best = c, best_score = sc;
        }
        double ref = best < 0 ? NAN : group_ppl(rows, best, group_end(rows, n, best));
        for (int i = a; i < b; i++) {
            rows[i].base = best;
            rows[i].dppl = rows[i].ppl - ref;
        }
        a = b;
    }
}

/* ---- results.csv ---- */

static void csv_num(FILE *f, double v, const char *fmt)
{
    fputc(',', f);
    if (isfinite(v)) fprintf(f, fmt, v);
}

static int write_csv(const char *path, const Row *rows, int n, char *err,
                     size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        seterr(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "file,run,variant,data,seed,status,n_params,n_params_added,steps,"
               "val_loss,ppl,bpb,dppl_vs_baseline,f_attn,f_attn_uniform,"
               "sink_rate_0.3,gate_mean,gate_frac_below_0.1,m_act,spikes,"
               "tokens_per_sec,diverged_step\n");
    for (int i = 0; i < n; i++) {
        const Row *w = &rows[i];
        if (!w->ok) continue; /* unreadable files are listed in REPORT.md */
        fprintf(f, "%s,%s,%s,%s,%lld,%s,%lld,%lld", w->file, w->run,
                w->variant, w->data, w->seed, w->status, w->n_params, w->n_params_added);
        csv_num(f, w->steps, "%.0f");
        csv_num(f, w->val_loss, "%.6g");
        csv_num(f, w->ppl, "%.6g");
        csv_num(f, w->bpb, "%.6g");
        csv_num(f, w->dppl, "%.6g");
        csv_num(f, w->f_attn, "%.6g");
        csv_num(f, w->f_attn_uniform, "%.6g");
        csv_num(f, w->sink03, "%.6g");
        csv_num(f, w->gate_mean, "%.6g");
        csv_num(f, w->gate_below01, "%.6g");
        csv_num(f, w->m_act, "%.6g");
        csv_num(f, w->spikes, "%.0f");
        csv_num(f, w->tokens_per_sec, "%.6g");
        fprintf(f, ",%lld\n", w->diverged_step);
    }
    if (fclose(f) != 0) {
        seterr(err, errlen, "%s: write failed", path);
        return -1;
    }
    return 0;
}

/* ---- REPORT.md ---- */

/* A column: its header text, anchor, definition, and how to get/format
 * its value from a Row. */
typedef struct {
    const char *head, *anchor, *def;
    size_t off;      /* offsetof the double in Row */
    const char *fmt; /* printf format of one value */
} Col;

#define OFF(f) offsetof(Row, f)
static const Col COLS[] = {
    {"val_loss", "def-val-loss", "Validation loss (nats/token) at the last "
     "eval: `final_val_loss` in /summary, else the last /metrics/eval/val_loss.",
     OFF(val_loss), "%.4f"},
    {"PPL", "def-ppl", "`ppl = exp(val_loss)`.", OFF(ppl), "%.3f"},
    {"ΔPPL", "def-dppl", "PPL minus the mean PPL (over seeds) of the "
     "matching baseline group: variant `baseline`, same data, seq_len, lr and "
     "steps (preferring `baseline-<suffix>` for a run named "
     "`<variant>-<suffix>`, else `baseline`); the Runs table names it. Blank "
     "when no baseline matches; negative is better.", OFF(dppl), "%+.3f"},
    {"bpb", "def-bpb", "Bits per byte at the last eval (`val_bpb`), for byte "
     "data.", OFF(bpb), "%.4f"},
    {"F-Attn", "def-fattn", "First-token share: `mean over layers l, heads h, "
     "probe sequences, queries t = 1..T-1 of A[t, 0]`, at the last probe, "
     "probe length T as in the header.", OFF(f_attn), "%.4f"},
    {"uniform", "def-uniform", "What uniform causal attention would give for "
     "F-Attn: `(H_T - 1)/(T - 1)`, H_T the T-th harmonic number (about 0.059, "
     "0.020 and 0.0064 for T = 64, 256, 1024).", OFF(f_attn_uniform), "%.4f"},
    {"sink@0.3", "def-sink", "Sink rate (Gu et al.): `alpha_0[l,h] = mean over "
     "queries t ≥ 0 of A[t, 0]` over the first 64 queries of each probe "
     "sequence (probe length 64); `sink_rate(ε) = fraction of (l, h) pairs with "
     "alpha_0 > ε`, ε = 0.3, the indicator taken per probe sequence then "
     "averaged over sequences.", OFF(sink03), "%.3f"},
    {"gate mean", "def-gate-mean", "`gate_mean`: mean of every gate score on "
     "the probe set, over all layers, positions and channels (blank: no gate).",
     OFF(gate_mean), "%.3f"},
    {"gate<0.1", "def-gate-below", "Fraction of gate scores strictly below "
     "0.1 on the probe set (sparsity).", OFF(gate_below01), "%.3f"},
    {"M-Act", "def-mact", "`max_act[l] = max |h| over tokens × features` of "
     "block l's output (the residual stream), averaged over probe sequences; "
     "M-Act is the mean over layers.", OFF(m_act), "%.4g"},
    {"spikes", "def-spikes", "Loss spikes: steps after warmup whose training "
     "loss exceeds spike_factor (1.25) × the median of the previous 50 "
     "steps' losses, from /metrics/train.", OFF(spikes), "%.1f"},
    {"tokens/s", "def-tps", "Training throughput, `tokens_per_sec` in "
     "/summary.", OFF(tokens_per_sec), "%.0f"},
};
#define N_COLS (sizeof COLS / sizeof COLS[0])

static double col_val(const Row *w, const Col *c)
{
    return *(const double *)((const char *)w + c->off);
}

/* "mean ± std" over the finite values of column c in rows[a..b), with
 * "(k/n)" when only k of the n runs had a value. */
static void md_agg(FILE *f, const Row *rows, int a, int b, const Col *c)
{
    double v[256];
    int k = 0;
    for (int i = a; i < b && k < 256; i++)
        if (isfinite(col_val(&rows[i], c))) v[k++] = col_val(&rows[i], c);
    fputs(" | ", f);
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

static void md_status(FILE *f, const Row *rows, int a, int b)
{
    fputs(" | ", f);
    int all_done = 1;
    for (int i = a; i < b; i++) all_done &= !strcmp(rows[i].status, "done");
    if (all_done) fputs("done ", f);
    for (int i = a; i < b; i++) {
        const Row *w = &rows[i];
        if (!strcmp(w->status, "diverged"))
            fprintf(f, "s%lld diverged at step %lld; ", w->seed,
                    w->diverged_step);
        else if (strcmp(w->status, "done"))
            fprintf(f, "s%lld %s; ", w->seed, w->status);
    }
}

/* Header row: the nlead leading columns, then COLS and status. */
static void md_header(FILE *f, const char *const *lead, int nlead)
{
    fputc('|', f);
    for (int i = 0; i < nlead; i++) fprintf(f, " %s |", lead[i]);
    for (size_t c = 0; c < N_COLS; c++)
        fprintf(f, " [%s](#%s) |", COLS[c].head, COLS[c].anchor);
    fprintf(f, " [status](#def-status) |\n|");
    for (size_t c = 0; c < (size_t)nlead + N_COLS + 1; c++) fputs("---|", f);
    fputs("\n", f);
}

static const char *const LEAD_GROUP[] = {"[run](#def-run)",
    "[variant](#def-variant)", "[data](#def-data)", "[seeds](#def-seeds)"};

static void md_variants(FILE *f, const Row *rows, int n)
{
    fprintf(f, "## Results by run\n\nOne row per run name (the file name "
               "without its `_s<seed>`); mean ± sample std over seeds; "
               "`(k/n)` marks a column only k of the n runs had.\n\n");
    md_header(f, LEAD_GROUP, 4);
    for (int a = 0; a < n && rows[a].ok;) {
        int b = group_end(rows, n, a);
        fprintf(f, "| %s | %s | %s | %d", rows[a].run, rows[a].variant,
                rows[a].data, b - a);
        for (size_t c = 0; c < N_COLS; c++) md_agg(f, rows, a, b, &COLS[c]);
        md_status(f, rows, a, b);
        fputs("|\n", f);
        a = b;
    }
}

static void md_paper_cell(FILE *f, double ours, double paper, const char *fmt)
{
    fputs(" | ", f);
    if (isfinite(ours)) fprintf(f, fmt, ours);
    else fputs("–", f);
    fputs(" / ", f);
    if (isfinite(paper)) fprintf(f, fmt, paper);
    else fputs("–", f);
}

/* Ours beside the paper's: one row per group whose variant the paper
 * reports (a variant run on two data sources gives two rows). */
static void md_paper(FILE *f, const Row *rows, int n)
{
    fprintf(f, "\n## Ours beside the paper\n\nEach cell is *ours / paper* "
        "(ours: mean over seeds). The paper's numbers are reference data, not "
        "our results: Qiu et al., \"Gated Attention for Large Language "
        "Models\" (NeurIPS 2025, arXiv 2505.06708), Table 1 (MoE 15A2B, 400B "
        "tokens: PPL), Table 3 (PPL) and Table 4 (gate mean, M-Act, F-Attn). "
        "Our models are about 10^4 times smaller: compare directions and "
        "ratios, not absolute values. `wider-ffn` stands in for the paper's "
        "\"+4 experts\" row.\n\n"
        "| run | data | paper row | source | [PPL](#def-ppl) | [gate mean](#def-gate-mean) | "
        "[M-Act](#def-mact) | [F-Attn](#def-fattn) |\n"
        "|---|---|---|---|---|---|---|---|\n");
    for (int a = 0; a < n && rows[a].ok;) {
        int b = group_end(rows, n, a);
        const PaperRow *pr = paper_row(rows[a].variant);
        if (pr) {
            double m[4], s;
            size_t offs[4] = {OFF(ppl), OFF(gate_mean), OFF(m_act), OFF(f_attn)};
            for (int j = 0; j < 4; j++) {
                double v[256];
                int k = 0;
                for (int i = a; i < b && k < 256; i++) {
                    double x = *(const double *)((const char *)&rows[i] + offs[j]);
                    if (isfinite(x)) v[k++] = x;
                }
                if (k) mean_std(v, k, &m[j], &s);
                else m[j] = NAN;
            }
            fprintf(f, "| %s | %s | %s | %s", rows[a].run, rows[a].data,
                    pr->id, pr->source);
            md_paper_cell(f, m[0], pr->ppl, "%.3f");
            md_paper_cell(f, m[1], pr->gate_mean, "%.3f");
            md_paper_cell(f, m[2], pr->m_act, "%.4g");
            md_paper_cell(f, m[3], pr->f_attn, "%.3f");
            fputs(" |\n", f);
        }
        a = b;
    }
}

static void md_runs(FILE *f, const Row *rows, int n)
{
    fprintf(f, "\n## Runs\n\nΔPPL of each run is against the mean of the "
               "baseline group named in *vs*.\n\n");
    static const char *const lead[] = {"file", "[run](#def-run)",
        "[variant](#def-variant)", "[data](#def-data)", "seed", "vs"};
    md_header(f, lead, 6);
    for (int i = 0; i < n && rows[i].ok; i++) {
        const Row *w = &rows[i];
        fprintf(f, "| %s | %s | %s | %s | %lld | %s", w->file, w->run,
                w->variant, w->data, w->seed,
                w->base >= 0 ? rows[w->base].run : "–");
        for (size_t c = 0; c < N_COLS; c++) {
            double v = col_val(w, &COLS[c]);
            fputs(" | ", f);
            if (isfinite(v)) fprintf(f, COLS[c].fmt, v);
        }
        fprintf(f, " | %s", w->status);
        if (!strcmp(w->status, "diverged"))
            fprintf(f, ": diverged at step %lld", w->diverged_step);
        if (w->spikes > 0) {
            fputs("; spikes at steps", f);
            for (int k = 0; k < (int)w->spikes && k < MAX_SPIKE_STEPS; k++)
                fprintf(f, " %lld", w->spike_steps[k]);
            if (w->spikes > MAX_SPIKE_STEPS) fputs(" …", f);
        }
        fputs(" |\n", f);
    }
    int bad = 0;
    for (int i = 0; i < n; i++) bad += !rows[i].ok;
    if (!bad) return;
    fprintf(f, "\n### Unreadable run files\n\n");
    for (int i = 0; i < n; i++)
        if (!rows[i].ok) fprintf(f, "- `%s`: unreadable: %s\n", rows[i].file,
                                 rows[i].err);
}

/* One line per data source: the config values its runs share, and for a
 * key they do not share its distinct values (e.g. lr over a stability
 * sweep). */
static void md_settings_data(FILE *f, const Row *rows, int n, const char *data)
{
    int nrun = 0;
    for (int i = 0; i < n && rows[i].ok; i++) nrun += !strcmp(rows[i].data, data);
    fprintf(f, "- Data %s (%d run%s): ", data, nrun, nrun == 1 ? "" : "s");
    char differ[512] = "";
    size_t dl = 0;
    int shared = 0;
    for (size_t k = 0; k < N_CFG; k++) {
        double vals[8];
        int nv = 0, more = 0;
        for (int i = 0; i < n && rows[i].ok; i++) {
            if (strcmp(rows[i].data, data)) continue;
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
        dl += (size_t)snprintf(differ + dl, dl < sizeof differ ? sizeof differ - dl : 0,
                               "%s%s", dl ? "; " : "", CFG_KEYS[k]);
        for (int j = 0; j < nv && dl < sizeof differ; j++)
            dl += (size_t)snprintf(differ + dl, sizeof differ - dl, " %g", vals[j]);
        if (more && dl < sizeof differ)
            dl += (size_t)snprintf(differ + dl, sizeof differ - dl, " …");
        if (dl >= sizeof differ) dl = sizeof differ - 1;
    }
    if (differ[0]) fprintf(f, "%sdiffering across runs: %s", shared ? "; " : "", differ);
    fputs(".\n", f);
}

static void md_settings(FILE *f, const char *dir, const Row *rows, int n)
{
    int ok = 0;
    for (int i = 0; i < n; i++) ok += rows[i].ok;
    time_t now = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&now));
    fprintf(f, "# gatelab report\n\nRun files in `%s`: %d (%d readable, %d "
               "unreadable). Written %s.\n\n## Settings\n\n", dir, n, ok,
            n - ok, when);
    const Row *probed = NULL;
    for (int i = 0; i < n && !probed; i++)
        if (rows[i].ok && rows[i].has_probe) probed = &rows[i];
    for (int i = 0; i < n && rows[i].ok; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = !strcmp(rows[j].data, rows[i].data);
        if (!seen) md_settings_data(f, rows, n, rows[i].data);
    }
    if (probed)
        fprintf(f, "- Probe (last probe of each run): %d sequences of length "
                "T = %d; normaliser %s; %s.\n", probed->probe_N,
                probed->probe_T, probed->normaliser,
                probed->proxy ? "attention is the Gu et al. proxy |a|/sum|a|"
                              : "attention is post-softmax (no proxy)");
    else
        fprintf(f, "- No run has a probe yet: attention, gate and activation "
                   "columns are blank.\n");
    fprintf(f, "- Sink rate: ε = 0.3, k = 0, probe length 64 (the first 64 "
               "queries of each probe sequence).\n"
               "- Loss spikes: loss > spike_factor × median of the previous "
               "50 steps, after warmup.\n\n");
}

static void md_definitions(FILE *f)
{
    fprintf(f, "\n## Definitions\n\nPositions are 0-indexed; position 0 is "
        "the first token (BOS when BOS is on). A is the post-softmax (or "
        "proxy) attention of one head, averaged over probe sequences: rows "
        "are queries t, columns keys j ≤ t.\n\n");
    fprintf(f, "<a id=\"def-run\"></a>**run**: the run name, the file name "
               "without `.h5` and its `_s<seed>` suffix (the sweep's `[run NAME]`); "
               "runs are grouped by it, so one variant on two data sources or "
               "learning rates gives two rows.\n\n"
               "<a id=\"def-variant\"></a>**variant**: the gate variant id "
               "(shared/reference/variants.md).\n\n"
               "<a id=\"def-data\"></a>**data**: the training data source "
               "(`data` in /config).\n\n"
               "<a id=\"def-seeds\"></a>**seeds**: number of runs (seeds) in "
               "the group; the Runs table gives each run's seed.\n\n");
    for (size_t c = 0; c < N_COLS; c++)
        fprintf(f, "<a id=\"%s\"></a>**%s**: %s\n\n", COLS[c].anchor,
                COLS[c].head, COLS[c].def);
    fprintf(f, "<a id=\"def-status\"></a>**status**: running, done or "
               "diverged (a non-finite loss or grad norm; the run stopped "
               "cleanly at that step with its data saved).\n");
}

/* ---- figures ---- */

static int mkdir_p(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

static void safe_name(char *out, size_t n, const char *s)
{
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
        out[i] = ok ? c : '_';
    }
    out[i] = '\0';
}

/* Panels of probe p: every layer x head (layer < 0) or one layer's heads */
static int fill_panels(const RunProbe *p, int layer, const char *label,
                       HeatPanel *pan, char (*title)[64])
{
    int n = 0;
    for (int l = 0; l < p->L; l++) {
        if (layer >= 0 && l != layer) continue;
        for (int h = 0; h < p->H; h++, n++) {
            snprintf(title[n], 64, "%s%sL%d H%d", label, *label ? " " : "", l, h);
            pan[n].A = p->attention + ((size_t)l * p->H + h) * p->M * p->M;
            pan[n].T = p->M;
            pan[n].title = title[n];
        }
    }
    return n;
}

/* Heatmap grid of one run into figs/heatmap_<run>_s<seed>.png; the
 * Markdown link goes to f. Failures are reported in the Markdown. */
static void fig_grid(FILE *f, const char *figdir, const Row *w)
{
    char err[512], name[300], path[1700];
    RunReader *r = runread_open(w->path, err, sizeof err);
    RunProbe p;
    if (!r || runread_probe(r, -1, &p, err, sizeof err) < 0) {
        fprintf(f, "- heatmap of %s skipped: %s\n", w->file, err);
        runread_close(r);
        return;
    }
    safe_name(name, 256, w->run);
    snprintf(path, sizeof path, "%s/heatmap_%s_s%lld.png", figdir, name, w->seed);
    size_t np = (size_t)p.L * p.H;
    HeatPanel *pan = calloc(np, sizeof *pan);
    char (*title)[64] = calloc(np, sizeof *title);
    HeatmapStyle st = {1, 0, 0.0f, 0.0f, 1};
    if (pan && title) {
        fill_panels(&p, -1, "", pan, title);
        if (heatmap_write_png(path, pan, p.L, p.H, &st, err, sizeof err) == 0)
            fprintf(f, "\n**%s (%s, data %s), seed %lld**: attention of every "
                    "layer (rows) and head (columns), log10 scale, probe step "
                    "%lld, T = %d\n\n![heatmap %s s%lld](figures/heatmap_%s_s"
                    "%lld.png)\n", w->run, w->variant, w->data, w->seed, p.step,
                    p.T, w->run, w->seed, name, w->seed);
        else fprintf(f, "- heatmap of %s failed: %s\n", w->file, err);
    }
    free(pan);
    free(title);
    runread_probe_free(&p);
    runread_close(r);
}

/* baseline vs g1-elem (same data source) at the baseline's layer of
 * largest F-Attn, into heatmap_baseline_vs_g1-elem_<data>.png */
static void fig_compare(FILE *f, const char *figdir, const Row *a,
                        const Row *b)
{
    char err[512] = "", path[1400], dname[64];
    safe_name(dname, sizeof dname, a->data);
    RunReader *ra = runread_open(a->path, err, sizeof err);
    RunReader *rb = ra ? runread_open(b->path, err, sizeof err) : NULL;
    RunProbe pa, pb;
    int ok = rb && runread_probe(ra, -1, &pa, err, sizeof err) == 0;
    if (ok && runread_probe(rb, -1, &pb, err, sizeof err) < 0) {
        runread_probe_free(&pa);
        ok = 0;
    }
    if (ok && (pa.H != pb.H || pa.L != pb.L)) {
        snprintf(err, sizeof err, "the runs differ in layers or heads");
        runread_probe_free(&pa);
        runread_probe_free(&pb);
        ok = 0;
    }
    if (!ok) {
        fprintf(f, "- side-by-side heatmap (data %s) skipped: %s\n", a->data, err);
        runread_close(ra);
        runread_close(rb);
        return;
    }
    int layer = 0;
    for (int l = 1; l < pa.L; l++)
        if (rs_share(&pa, l) > rs_share(&pa, layer)) layer = l;
    HeatPanel *pan = calloc((size_t)2 * pa.H, sizeof *pan);
    char (*title)[64] = calloc((size_t)2 * pa.H, sizeof *title);
    HeatmapStyle st = {1, 0, 0.0f, 0.0f, 1};
    snprintf(path, sizeof path, "%s/heatmap_baseline_vs_g1-elem_%s.png", figdir,
             dname);
    if (pan && title) {
        char la[40], lb[40];
        snprintf(la, sizeof la, "%.28s s%lld", a->run, a->seed);
        snprintf(lb, sizeof lb, "%.28s s%lld", b->run, b->seed);
        int n = fill_panels(&pa, layer, la, pan, title);
        fill_panels(&pb, layer, lb, pan + n, title + n);
        if (heatmap_write_png(path, pan, 2, pa.H, &st, err, sizeof err) == 0)
            fprintf(f, "\n**%s (top) vs %s (bottom), data %s**, layer %d "
                    "(the baseline's layer of largest F-Attn), every head, "
                    "log10 scale\n\n![baseline vs g1-elem, %s]"
                    "(figures/heatmap_baseline_vs_g1-elem_%s.png)\n", a->run,
                    b->run, a->data, layer, a->data, dname);
        else fprintf(f, "- side-by-side heatmap (data %s) failed: %s\n", a->data,
                     err);
    }
    free(pan);
    free(title);
    runread_probe_free(&pa);
    runread_probe_free(&pb);
    runread_close(ra);
    runread_close(rb);
}

/* First probed run of variant v on data d, preferring the group starting
 * at row `pref` (a g1-elem group's matching baseline); NULL if none. */
static const Row *probed_of(const Row *rows, int n, const char *v,
                            const char *d, int pref)
{
    if (pref >= 0)
        for (int i = pref; i < n && same_group(&rows[pref], &rows[i]); i++)
            if (rows[i].has_probe) return &rows[i];
    for (int i = 0; i < n && rows[i].ok; i++)
        if (rows[i].has_probe && !strcmp(rows[i].variant, v) &&
            !strcmp(rows[i].data, d))
            return &rows[i];
    return NULL;
}

/* One baseline-vs-g1-elem figure per data source that has both. */
static void fig_compare_all(FILE *f, const char *figdir, const Row *rows, int n)
{
    for (int i = 0; i < n && rows[i].ok; i++) {
        if (strcmp(rows[i].variant, "g1-elem")) continue;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = !strcmp(rows[j].variant, "g1-elem") &&
                   !strcmp(rows[j].data, rows[i].data);
        if (seen) continue;
        const Row *g1 = probed_of(rows, n, "g1-elem", rows[i].data, -1);
        if (!g1) continue;
        const Row *base = probed_of(rows, n, "baseline", g1->data, g1->base);
        if (base) fig_compare(f, figdir, base, g1);
    }
}

static void fig_plots(FILE *f, const char *figdir, const Row *rows, int n)
{
    char **paths = calloc((size_t)n + 1, sizeof *paths);
    int k = 0;
    for (int i = 0; i < n && paths; i++)
        if (rows[i].ok) paths[k++] = (char *)rows[i].path;
    char err[512];
    if (!paths || plot_report_figures(figdir, paths, k, err, sizeof err) < 0) {
        fprintf(f, "\n- plots skipped: %s\n", paths ? err : "out of memory");
        free(paths);
        return;
    }
    free(paths);
    static const char *const figs[][2] = {
        /* plot.c draws one series per run name, the mean over its
         * seeds; line figures keep to the key runs past 8 names */
        {"loss.png", "training and validation loss, mean over seeds"},
        {"first_share_layers.png", "first-token share per layer, mean over "
                                   "seeds (bars min..max)"},
        {"mact_layers.png", "max |h| per layer, mean over seeds (bars "
                            "min..max)"},
        {"sink_vs_step.png", "sink rate and F-Attn over training, mean over "
                             "seeds"},
    };
    for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
        char path[1400];
        snprintf(path, sizeof path, "%s/%s", figdir, figs[i][0]);
        if (access(path, R_OK) == 0)
            fprintf(f, "\n**%s**\n\n![%s](figures/%s)\n", figs[i][1],
                    figs[i][1], figs[i][0]);
    }
    /* plot.c names a gate histogram by the run name when two groups share
     * the variant, else by the variant: link whichever exists, once. */
    for (int i = 0; i < n && rows[i].ok; i = group_end(rows, n, i)) {
        char name[256], path[1400];
        const char *label = rows[i].run;
        safe_name(name, sizeof name, label);
        snprintf(path, sizeof path, "%s/gate_hist_%s.png", figdir, name);
        if (access(path, R_OK) != 0) {
            int first = 1;
            for (int j = 0; j < i; j++) first &= !!strcmp(rows[j].variant, rows[i].variant);
            if (!first) continue;
            label = rows[i].variant;
            safe_name(name, sizeof name, label);
            snprintf(path, sizeof path, "%s/gate_hist_%s.png", figdir, name);
        }
        if (access(path, R_OK) == 0)
            fprintf(f, "\n**gate score histogram, %s**\n\n![gate histogram "
                    "%s](figures/gate_hist_%s.png)\n", label, label, name);
    }
}

static void md_figures(FILE *f, const char *outdir, const Row *rows, int n)
{
    char figdir[1100];
    snprintf(figdir, sizeof figdir, "%s/figures", outdir);
    fprintf(f, "\n## Figures\n\n");
    if (mkdir_p(figdir) != 0) {
        fprintf(f, "- no figures: cannot create %s: %s\n", figdir,
                strerror(errno));
        return;
    }
    for (int a = 0; a < n && rows[a].ok; a = group_end(rows, n, a)) {
        int i = a; /* the group's first seed with a probe */
        while (i < n && same_group(&rows[a], &rows[i]) && !rows[i].has_probe) i++;
        if (i < n && same_group(&rows[a], &rows[i])) fig_grid(f, figdir, &rows[i]);
    }
    fig_compare_all(f, figdir, rows, n);
    fig_plots(f, figdir, rows, n);
}

/* ---- entry points ---- */

static int write_md(const char *path, const char *dir, const char *outdir,
                    const Row *rows, int n, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        seterr(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    md_settings(f, dir, rows, n);
    md_variants(f, rows, n);
    md_paper(f, rows, n);
    md_runs(f, rows, n);
    md_figures(f, outdir, rows, n);
    {   /* long-context and stability sections: analysis/report_extra.c */
        const char **paths = calloc((size_t)(n ? n : 1), sizeof *paths);
        char figdir[1100];
        int k = 0;
        snprintf(figdir, sizeof figdir, "%s/figures", outdir);
        for (int i = 0; paths && i < n; i++)
            if (rows[i].ok) paths[k++] = rows[i].path;
        if (paths) report_longctx(f, figdir, paths, k);
        if (paths) report_stability(f, figdir, paths, k);
        if (paths) report_pretrained(f, paths, k);
        free(paths);
    }
    md_definitions(f);
    if (fclose(f) != 0) {
        seterr(err, errlen, "%s: write failed", path);
        return -1;
    }
    return 0;
}

int report_run(const char *dir, const char *outdir, char *err, size_t errlen)
{
    if (!outdir) outdir = dir;
    int n;
    char **names;
    if (list_runs(dir, &names, &n, err, errlen) < 0) return -1;
    if (n == 0) {
        free(names);
        seterr(err, errlen, "%s: no *.h5 run files", dir);
        return -1;
    }
    Row *rows = calloc((size_t)n, sizeof *rows);
    if (!rows) {
        for (int i = 0; i < n; i++) free(names[i]);
        free(names);
        seterr(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        snprintf(rows[i].path, sizeof rows[i].path, "%s/%s", dir, names[i]);
        rows[i].file = strrchr(rows[i].path, '/') + 1;
        row_read(&rows[i]);
        free(names[i]);
    }
    free(names);
    qsort(rows, (size_t)n, sizeof *rows, cmp_row);
    for (int i = 0; i < n; i++) /* qsort moved the rows: re-point file */
        rows[i].file = strrchr(rows[i].path, '/') + 1;
    fill_dppl(rows, n);
    int rc = mkdir_p(outdir);
    if (rc) seterr(err, errlen, "%s: cannot create: %s", outdir, strerror(errno));
    char path[1100];
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/results.csv", outdir);
        rc = write_csv(path, rows, n, err, errlen);
    }
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/REPORT.md", outdir);
        rc = write_md(path, dir, outdir, rows, n, err, errlen);
    }
    free(rows);
    return rc;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: gatelab report DIR [--out DIR2]\n"
        "  Read every *.h5 run file in DIR; write REPORT.md, results.csv and\n"
        "  figures/ into DIR2 (default DIR). Unreadable files are listed.\n");
}

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        {"out", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *out = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        if (c == 'o') out = optarg;
        else if (c == 'h') { usage(stdout); return 0; }
        else { usage(stderr); return 2; }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "gatelab report: want exactly one DIR "
                        "(gatelab report --help)\n");
        return 2;
    }
    const char *dir = argv[optind];
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "gatelab report: %s: not a directory\n", dir);
        return 2;
    }
    char err[512] = "";
    if (report_run(dir, out, err, sizeof err) < 0) {
        fprintf(stderr, "gatelab report: %s\n", err);
        return 1;
    }
    printf("wrote %s/REPORT.md and %s/results.csv\n", out ? out : dir,
           out ? out : dir);
    return 0;
}
