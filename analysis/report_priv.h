/* report_priv.h: what the report's files share (not a public interface):
 * the Row each run file is reduced to, and the functions one part of the
 * report calls in another. */
#ifndef GATELAB_REPORT_PRIV_H
#define GATELAB_REPORT_PRIV_H

#include <stddef.h>
#include <stdio.h>

#include "fakequant.h" /* FQ_MODE_COUNT */
#include "metric_table.h"
#include "runstats.h" /* RS_ARCH_KEYS */

/* The quantized modes a Row holds, FqMode order from FQ_W8A8. */
#define Q_NMODES (FQ_MODE_COUNT - 1)
/* The same modes, X(name, mode) for each: name as results.csv spells it
 * in a column's name (no '-'). The per-mode columns of metric_table.c
 * and report_csv.c are made from it; the compiler holds its count
 * (metric_table.c), test_report_quant every name against fq_mode_name. */
#define Q_MODES(X)                                                                                 \
    X("w8a8", FQ_W8A8)                                                                             \
    X("w8a8pct", FQ_W8A8_PCT)                                                                      \
    X("w4a4", FQ_W4A4) X("w8a8tok", FQ_W8A8_TOK) X("kv8", FQ_KV8) X("kv4", FQ_KV4)
#define Q_SOURCE_LEN 48 /* a source tensor's name, as RunQuantMode.source */

#define MAX_SPIKE_STEPS 8

/* The multiples of the training length the long-context and needle
 * columns hold, X(index, multiple, ...) for each: LC_MULT and the columns
 * of metric_table.c are made from it. */
#define LC_MULTS(X, ...)                                                                           \
    X(0, 1, __VA_ARGS__) X(1, 2, __VA_ARGS__) X(2, 4, __VA_ARGS__) X(3, 8, __VA_ARGS__)
#define LC_NMULT 4
extern const int LC_MULT[LC_NMULT];
/* X(index, multiple, mode, m) for each multiple under plain RoPE (m = 0),
 * then under YaRN (m = 1): the order of the per-mode columns. */
#define LC_MODE_MULTS(X) LC_MULTS(X, plain, 0) LC_MULTS(X, yarn, 1)
/* The needle depths the per-depth columns hold, X(index, depth, ...) for
 * each: LC_DEPTH and the columns of metric_table.c are made from it (a
 * test holds it equal to gatelab eval's LCEVAL_NEEDLE_DEPTH). */
#define LC_DEPTHS(X, ...)                                                                          \
    X(0, 0, __VA_ARGS__)                                                                           \
    X(1, 0.25, __VA_ARGS__) X(2, 0.5, __VA_ARGS__) X(3, 0.75, __VA_ARGS__) X(4, 1, __VA_ARGS__)
#define LC_NDEPTH 5
extern const double LC_DEPTH[LC_NDEPTH];

/* Numeric /config keys the Settings section shows (the architecture keys,
 * runstats.h RS_ARCH_KEY, are Row.arch); ΔPPL matches on seq_len, lr and
 * steps of these, with the data and every architecture key. */
extern const char *const CFG_KEYS[9];
#define N_CFG 9
enum { CFG_SEQ_LEN = 3, CFG_BATCH = 4, CFG_STEPS = 5, CFG_LR = 6 };

typedef struct {
    char path[1024];
    const char *file; /* basename inside path */
    int ok;           /* 0: unreadable, err says why */
    int from_csv;     /* 1: a row of results.csv, its run file not here */
    int pretrained;   /* 1: written by `gatelab inspect` (no training; /config: window) */
    char err[512];
    char variant[256], status[32];
    char run[256];     /* run name: the group key with variant and data */
    char data[64];     /* /config data: bigram, brown, ... ("?" if absent) */
    double cfg[N_CFG]; /* /config values of CFG_KEYS (NaN if absent) */
    /* /config values of RS_ARCH_KEY as rs_arch_value writes them; the
     * paper's (config_defaults') where the run file or results.csv
     * predates a key */
    char arch[RS_N_ARCH][RS_ARCH_LEN];
    int base; /* first row of the matching baseline group, -1 */
    long long seed, n_params, n_params_added, diverged_step;
    double steps, val_loss, ppl, bpb, dppl, f_attn, f_attn_uniform, sink03, gate_mean, gate_below01,
        m_act, spikes, tokens_per_sec;
    double dppl_rel;                  /* 100 (PPL / matching baseline's mean PPL - 1) */
    double sink01, sink02;            /* sink rate at eps 0.1 and 0.2 */
    double slot;                      /* the sink slot's own share (NaN: no slot) */
    double empty, f_attn_ne;          /* dropped-mass share, F-Attn over the mass */
    double kurt, top1_med, bos_ratio; /* means over layers */
    /* gatelab eval's /lceval at LC_MULT[k] times the training length
     * lc_T, [plain, yarn] (NaN, -1: not evaluated there): the val loss,
     * rs_lc_degradation (NaN at 1x), and the needle task's exact-match
     * share at each depth LC_DEPTH[d] as the run file stores it */
    int lc_T;
    double lc_loss[2][LC_NMULT], lc_deg[2][LC_NMULT];
    double lc_needle[2][LC_NMULT][LC_NDEPTH];
    /* rs_rope: the rotated width and training length YaRN's split is
     * taken at, and the model's base (-1, NaN: no RoPE) */
    int rope_dim, rope_len;
    double rope_base;
    int gate_unbounded; /* has a gate whose scores are not in [0,1] */
    int gate_bounded;   /* 1/0 when gate_mean is known, else -1 */
    int sink_formed;    /* metrics.h sink_formed of f_attn: 1, 0, -1 (no probe) */
    double loss0;       /* training loss at the first step (NaN: none) */
    double max_logit;   /* largest attention logit, last probe (NaN: none) */
    /* /quant (gatelab eval --quant; NaN: absent): each mode's val-loss
     * increase over float, its sink_dloss with q_keep positions held out
     * (eval --quant-keep-first; q_keep -1: absent, 0: none held out), and
     * the float pass's outlier statistics */
    double q_dloss[Q_NMODES];  /* mode m's at m - 1 (FqMode order: w8a8 first) */
    double q_sink[Q_NMODES];   /* the same modes' sink_dloss */
    int q_destroyed[Q_NMODES]; /* their /quant/<mode> destroyed flag: 1, 0, -1 absent */
    /* eval --quant-source: each mode's source of the largest damage ("":
     * none) and its recovered loss (NaN: none) */
    char q_source[Q_NMODES][Q_SOURCE_LEN];
    double q_source_rec[Q_NMODES];
    int q_keep;
    double q_inf_attn, q_inf_ffn, q_inf_layer, q_kurt;
    double task_floor;      /* the task's Bayes val loss (NaN: not recorded) */
    char protocol_hash[32]; /* /protocol's hash; "" when the run recorded none */
    char probe_err[512];    /* the last probe exists but cannot be read */
    long long spike_steps[MAX_SPIKE_STEPS];
    int probe_T, probe_N, proxy, has_probe;
    char normaliser[64];
    double top1_peak, top1_peak_ratio; /* massive.h massive_peak of the last probe */
    int massive_sun;                   /* its verdict: 1, 0, -1 (not known) */
    double flops;                      /* flops.h training FLOPs of the run (NaN: unknown) */
    double tokens;                     /* flops.h training tokens of the run (NaN: unknown) */
    /* sinkstats.h's one number per run of the last probe (NaN, -1: not
     * stored in the run file) */
    double knorm_first, knorm_rest, vnorm_first, vnorm_rest, secondary, gate_first, gate_rest;
    int dormant, dormant_norm, resid_sinks;
    /* the same's ratios and summaries: key and value norm and input
     * gradient at position 0 over the median of the rest, gate_first /
     * gate_rest, the attention mass within SS_NEAR_DIST keys, the mean
     * W_V W_O effective rank (NaN: not stored) */
    double knorm_ratio, vnorm_ratio, grad_ratio, gate_ratio, dist_near, ov_rank;
    /* rs_needle_acc (gatelab eval --needle): the exact-match share over
     * every depth at LC_MULT[k] times the training length, [plain,
     * yarn] (NaN: not evaluated), and the rows each is over (-1: none
     * evaluated, or they differ between lengths) */
    double needle[2][4];
    int needle_rows;
} Row;

/* metric_table.c: metric m of row w as a number (NaN: unknown). */
double metric_value(const Row *w, const MetricCol *m);

/* report_rows.c */
/* One progress line "report: MSG" on stderr while the report works, when
 * stderr is a terminal (or GATELAB_TEST_PROGRESS is set, for the tests);
 * silent otherwise, so scripts see only the result and the errors. */
void report_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The *.h5 names in dir, sorted, into *out (n of them, each malloc'd).
 * 0; REPORT_BADINPUT with a line when dir does not exist or a name breaks
 * the name rule (name_plain, util.h); -1 on another error. */
int list_runs(const char *dir, char ***out, int *n, char *err, size_t errlen);
/* Every value of w unknown (NaN, -1, ""), its names and path kept. */
void row_blank(Row *w);
/* A quantized mode's destroyed flag as the report reads it: the stored
 * flag (1, 0), else, for a run file or results.csv from before the flag,
 * fq_destroyed of its dloss; -1 when its dloss is NaN too (results.csv
 * writes a NaN blank, so there it cannot be told from "not evaluated"). */
int q_destroyed_flag(int stored, double dloss);
/* w->path's run file into w: w->ok = 0 with w->err when unreadable. */
void row_read(Row *w);
int cmp_row(const void *a, const void *b);
int same_group(const Row *x, const Row *y);
int group_end(const Row *rows, int n, int a);
int cfg_eq(double x, double y);
/* How many readable rows of rows[n] are trained runs (not checkpoints
 * `gatelab inspect` probed): the training sections need one. */
int rows_trained(const Row *rows, int n);
/* The length w's architecture is judged at (runstats.h rs_train_len) as
 * its columns carry it, so results.csv gives it as the run file does: the
 * largest of seq_len, rope_len and lc_train_len (the last two hold
 * extend_seq_len after a context extension); for a checkpoint `gatelab
 * inspect` probed, its probe's length; 0 when none is known. */
int row_train_len(const Row *w);
/* w's architecture keys as they attend at row_train_len, those off the
 * paper's as "window 16, norm_place post" (rs_arch_note) into out[n]; ""
 * when w attends as the paper's architecture. */
void row_arch_note(const Row *w, char *out, size_t n);
/* Whether w attends as the paper's architecture (every RS_ARCH_KEY at its
 * config_defaults value: RoPE, full causal attention, pre-norm) at its
 * training length, or at length T when T > 0 (rs_arch_paper_at). */
int row_paper_arch(const Row *w);
int row_paper_arch_at(const Row *w, int T);
/* Under a comparison with the paper: "N <unit>s of another architecture
 * than the paper's (...) are left out<why_many>" (why_one for N = 1);
 * nothing when other is 0. */
void put_other_arch(FILE *f, int other, const char *unit, const char *why_one,
                    const char *why_many);
/* base, dppl and dppl_rel of every row: its group's matching baseline
 * group (a baseline-variant group with the same data, seq_len, lr, steps
 * and architecture keys; among several, the group itself, then
 * "baseline-<suffix>" of the run name, then plain "baseline"), and PPL
 * against that group's mean PPL; base -1 and blank when none matches. */
void fill_dppl(Row *rows, int n);
/* report_longctx.c: the long-context section (only when some row has a
 * long-context result), from the rows' lc_* and rope_* columns alone, so
 * results.csv gives it as the run files do: per mode a table run name x
 * length of val loss and degradation (mean ± std over seeds), YaRN's
 * split per run name, the needle task per depth, the degradation at 8x
 * per key variant beside the paper's Table 5, and figdir/lceval_loss.png. */
void report_longctx(FILE *f, const char *figdir, const Row *rows, int n);
/* report_needle.c: the needle retrieval table from the rows' needle
 * columns (results.csv alone gives it), and whether retrieval can be
 * compared here: "untestable here" when no run name retrieves above
 * chance at any length. Nothing when no run has a needle result. */
void md_needle(FILE *f, const Row *rows, int n);
/* Whether the seeds of rows[a..b) retrieve above chance under mode m at
 * LC_MULT[k]: their retrieved rows pooled, the one-sided exact
 * binomial test against needle_chance() (metrics.h) gives p < 0.05
 * (CONFIRM_ALPHA). 1, 0, or -1 when no seed has the rows it needs; the
 * pooled hits and rows into *hits and *total. */
int needle_above_chance(const Row *rows, int a, int b, int m, int k, long long *hits,
                        long long *total);
/* report_lr.c */
void md_lr_sensitivity(FILE *f, const char *outdir, const Row *rows, int n);
/* report_quant.c: the quantized-evaluation section (only when some run
 * has /quant). */
void md_quant(FILE *f, const Row *rows, int n);
/* report_probes.c: the section "Probe measures across seeds" (only when
 * some run has one of its measures, the metric table's rows with a
 * seeds_order): per run group each measure's mean ± std over seeds, and
 * per group with a matching baseline group the difference of means with
 * md_stat_cells' tests, exploratory. From the rows alone. */
void md_probes(FILE *f, const Row *rows, int n);
/* report_compare.c */
/* The exploratory comparisons of every group with its baseline; those the
 * protocol pr (NULL: none) tests as primary are named, not tested again. */
void md_compare(FILE *f, const Row *rows, int n, const Protocol *pr);
/* The id k of the primary test P<k> that report_confirm.c gives metric m
 * of the pair arm/ref (either order) in pr; 0 when pr (NULL: none) does
 * not test it. */
int primary_test_id(const Protocol *pr, const char *arm, const char *ref, ProtoMetric m);
/* A p-value for prose and tables: 3 significant digits, "< 1e-4" below. */
void put_p(FILE *f, double p);
/* The same after a name in prose: "= 0.0123" or "< 1e-4". */
void put_p_rel(FILE *f, double p);
/* " na / nb | diff | [lo, hi] | Welch p | MW p | verdict |" for mean(a) -
 * mean(b): the cells of a comparison table. Returns 1 when both p < 0.05,
 * 0 when not, -1 when untested (fewer than 2 values on a side). */
int md_stat_cells(FILE *f, const double *a, int na, const double *b, int nb);
/* report_compute.c */
/* The Compute section: the runs' parameters, training tokens and FLOPs
 * beside every source of paper_scales.h, one table row each. */
void md_compute(FILE *f, const Row *rows, int n);
/* The headline's scale paragraph: the runs' parameters, training tokens
 * and FLOPs (ranges over the readable rows), then one bullet per effect the
 * primary metrics of pr test, naming every source's scale for it. */
void md_scale(FILE *f, const Row *rows, int n, const Protocol *pr);
/* report_massive.c */
/* Per run group: massive by Sun et al.'s criterion in k of n seeds, with
 * the peak layer's top-1 |h| and top-1/median beside M-Act. */
void md_massive(FILE *f, const Row *rows, int n);
/* report_csv.c */
/* One RFC 4180 field (quoted when it holds , " CR or LF), preceded by a
 * comma unless first. */
void csv_field(FILE *f, const char *s, int first);
int write_csv(const char *path, const Row *rows, int n, char *err, size_t errlen);
/* The rows of results.csv at path (as write_csv writes it; columns it does
 * not know are ignored, columns it lacks stay unknown), each as a readable
 * run file DIR/<file>, into a malloc'ed *rows. 0; REPORT_BADINPUT with one
 * line naming the file and line of the first bad record; -1 out of memory. */
int csv_read_rows(const char *dir, const char *path, Row **rows, int *n, char *err, size_t errlen);
/* report_join.c: a study run in pieces (gatelab sweep --seeds). When dir
 * holds run files, a results.csv and a protocol.ini that declares its runs
 * ([runs]), appends to *rows (*n, realloc'd) every row of results.csv
 * whose run is declared, has no run file here and recorded the protocol's
 * hash: the earlier pieces, whose run files are gone. *joined = how many.
 * 0 (nothing to join is not an error); REPORT_BADINPUT when results.csv
 * cannot be read (it is then left as it is, never replaced); -1 out of
 * memory. */
int report_join_csv(const char *dir, Row **rows, int *n, int *joined, char *err, size_t errlen);
/* report_md.c */
/* The title and what the rows come from: run files, results.csv alone
 * (from_csv == n), or run files joined with from_csv rows of results.csv. */
void md_title(FILE *f, const char *dir, const Row *rows, int n, int from_csv);
void md_settings(FILE *f, const Row *rows, int n);
void md_variants(FILE *f, const Row *rows, int n);
void md_paper(FILE *f, const Row *rows, int n);
void md_runs(FILE *f, const Row *rows, int n);
void md_definitions(FILE *f);
/* report_figs.c */
void md_figures(FILE *f, const char *outdir, const Row *rows, int n);

/* report_util.c (the long-context and stability sections) */
#include "gnuplot.h"
#include "runfile_read.h"
void draw_figure(FILE *f, const char *figdir, const char *name, const char *alt, const PlotAxes *ax,
                 const PlotSeries *s, int ns);
int group_names(const char *names, size_t stride, int n, int *grp);
void put_mean(FILE *f, const char *fmt, const char *sfmt, const double *v, int k);
/* Run r's data source as the report shows it (table_name): /config data,
 * or for a checkpoint `gatelab inspect` probed, its input's kind and file
 * name ("tokens:prompts.txt"); "?" when neither is recorded. */
void run_data_label(RunReader *r, char *data, size_t n);
RunReader *open_run_head(const char *path, char *name, char *variant, char *status, char *data);
int members(const int *grp, int n, int g, int *idx);
/* A family of p[n], NaN where untested: the Holm-adjusted (bh = 0) or
 * Benjamini-Hochberg (bh = 1) values of the tested ones into adj[n], NaN
 * for the others (all NaN when memory runs out). */
void adjust_family(double *adj, const double *p, int n, int bh);
int key_groups(const char *variant, const char *status, size_t stride, const int *grp, int n,
               int ng, unsigned char *shown);
/* open_run_head writes into these buffers by their sizes */
#define HEAD_SIZES_OK(T)                                                                           \
    _Static_assert(sizeof((T *)0)->name == 256 && sizeof((T *)0)->variant == 256 &&                \
                       sizeof((T *)0)->status == 32 && sizeof((T *)0)->data == 64,                 \
                   #T " head buffer sizes")

#endif
