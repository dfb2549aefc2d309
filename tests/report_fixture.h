/* report_fixture.h: the run files the report's tests build by hand and
 * the readers of the results.csv the report writes from them
 * (report_fixture.c). Test-only. */
#ifndef GATELAB_REPORT_FIXTURE_H
#define GATELAB_REPORT_FIXTURE_H

#include "config.h"
#include "runfile.h"

/* Every run's probe shape: L layers, H heads, N sequences of T tokens, C
 * gate channels. */
enum { L = 2, H = 2, N = 2, T = 4, C = 4 };

/* rf_err (testutil.h): the runfile_* calls' one-line reason */
#include "testutil.h"

/* Runs are written under testutil.h's tu_scratch (tu_scratch_setup makes
 * it; enter_subdir points it at a subdirectory). */

/* Keys make_run_cfg sets after the variant id (NULL-terminated). */
extern const char *g_extra_sets[3];

/* What make_run_cfg records as a run starts: the protocol text (NULL:
 * none) and the task floor (NaN: none). */
extern const char *g_proto_text;

extern double g_task_floor;

/* Called on each run's probe record just before make_run_cfg writes it
 * (NULL: none), with the run's variant id and seed: a test adds the
 * optional arrays it needs (their storage must outlive the call). */
extern void (*g_probe_hook)(ProbeRecord *p, const char *variant, int seed);

/* A finished run file tu_scratch/name of the variant id (then g_extra_sets)
 * at this seed, data and lr: 100 training steps of loss 2 (4 at step 60
 * when spike), final val_loss, one probe whose every head gives `a` to
 * token 0, the gate's statistics when gated. */
void make_run_cfg(const char *name, const char *variant, int seed, double val_loss, float a,
                  int gated, int spike, DataSource data, float lr);

/* A bigram run at lr 1e-2 (the quickstart's data and lr). */
void make_run(const char *name, const char *variant, int seed, double val_loss, float a, int gated,
              int spike);

/* The CSV line of file name; the test fails when there is none. */
const char *csv_row(const char *csv, const char *file);

/* Start of the field of row (a line of csv) in the column the header
 * line calls name; the test fails when there is no such column. */
const char *csv_cell(const char *csv, const char *row, const char *name);

/* The number in column name of row. */
double csv_num(const char *csv, const char *row, const char *name);

/* Whether column name of row is empty. */
int csv_blank(const char *csv, const char *row, const char *name);

/* Point tu_scratch at a new subdirectory NAME of it; *saved keeps the old one
 * for report_in_subdir to restore. */
void enter_subdir(char *saved, size_t n, const char *name);

/* The report of the runs in tu_scratch (a subdirectory the test made) into
 * tu_scratch/out; tu_scratch is set back to saved. REPORT.md's text, to be freed. */
char *report_in_subdir(const char *saved);

#endif
