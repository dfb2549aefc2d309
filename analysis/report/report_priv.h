/* report_priv.h: what the report's files share (not a public interface):
 * the Row each run file is reduced to (row.h), and the functions one part
 * of the report calls in another. */
#ifndef GATELAB_REPORT_PRIV_H
#define GATELAB_REPORT_PRIV_H

#include <stddef.h>
#include <stdio.h>

#include "fakequant.h" /* FQ_MODE_COUNT */
#include "metric_table.h"
#include "row.h"
#include "runstats.h" /* RS_ARCH_KEYS */

/* report_rows.c: the tables of row.h's LC_MULTS, LC_DEPTHS and CFG keys. */
extern const int LC_MULT[LC_NMULT];
extern const double LC_DEPTH[LC_NDEPTH];
extern const char *const CFG_KEYS[9];

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
/* The same cells for n pairs (x[i], y[i]), the difference x - y: " n / n |
 * mean difference | its paired-t 95% interval | paired t p | exact
 * Wilcoxon signed-rank p | verdict |" (both p < 0.05). */
int md_paired_cells(FILE *f, const double *x, const double *y, int n);
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
/* report_set_figures's setting: 1 when the report draws figures. */
int report_figures_on(void);
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
