/* metric_table.h: the one table of per-run metrics (metric_table.c). Each
 * row names a results.csv column, and for the metrics REPORT.md shows, its
 * Markdown header, definition and format; thresholds are data, and every
 * name that carries one ("sink_rate_%g", "sink@%g") is formatted from it.
 * The report's CSV writer, its Markdown tables and the protocol's metric
 * names (the rows with a `proto`) all walk this table; `gatelab metrics` prints it. */
#ifndef GATELAB_METRIC_TABLE_H
#define GATELAB_METRIC_TABLE_H

#include <stddef.h>

#include "protocol.h" /* PROTO_METRIC_SLOTS */
#include "row.h"      /* Row, for metric_value */

/* How a value is stored and written to results.csv. */
typedef enum {
    MK_REAL,  /* double, "%.10g", blank when not finite */
    MK_WHOLE, /* double, "%.0f", blank when not finite */
    MK_LL,    /* long long, "%lld", always written */
    MK_FLAG,  /* int 0/1, blank when negative (not known) */
    MK_INT    /* int count or length, blank when negative (not known) */
} MetricKind;

/* Where row_read gets a value from, when the table itself says how. */
typedef enum {
    MS_OTHER = 0, /* computed by name in report_rows.c */
    MS_SINK_RATE, /* metrics.h sink_rate at `threshold` */
    MS_GATE_BELOW /* the probe's gate_below column at `threshold` (bounded gates only) */
} MetricSource;

/* What a Row holds for a metric before anything is read (metric_blank). */
typedef enum {
    MB_UNKNOWN = 0, /* not known: NaN, or -1 for MK_LL, MK_FLAG and MK_INT */
    MB_ZERO         /* 0: a count or flag that reading nothing makes known (no probe:
                     * has_probe 0), or a value read whole with others (lr: Row.cfg) */
} MetricBlank;

typedef struct {
    const char *csv;  /* results.csv column; a "%g" in it is the threshold */
    double threshold; /* the threshold the names carry; NAN: none */
    MetricKind kind;
    MetricSource src;
    size_t off; /* offsetof the value in the report's Row */
    /* REPORT.md: table 1 (Results by run, Runs), 2 (Sink and activation
     * detail) or 0 (CSV only), the column's place in it, its header (a
     * "%g" is the threshold), anchor, printf format and definition */
    int md_table, md_order;
    const char *head, *anchor, *fmt, *def;
    int na_unbounded; /* "n/a" for a run whose gate is unbounded */
    /* 1: a study's protocol may declare this metric by its CSV name (its
     * ProtoMetric, protocol.h, is the row's index); 0: not declarable. */
    int proto;
    /* a declarable metric: what the confirmatory headline calls it, and
     * the paper-scale effects (paper_scales.h, a bit 1u << SE_* each) a
     * claim on it speaks to in the Compute section; 0: none */
    const char *label;
    unsigned effects;
    /* a declarable row a [primary] family refuses: why, as the refusal
     * says it ("it repeats ..."); NULL: accepted */
    const char *not_primary;
    /* the exploratory comparison with the baseline tests this metric
     * (md_compare): what a significantly lower and higher value of a run
     * group means; NULL: not compared */
    const char *lower, *higher;
    /* the section "Probe measures across seeds" (report_probes.c) shows
     * it in this place, 1, 2, ...; 0: not shown there */
    int seeds_order;
    /* its value in a Row before anything is read (metric_blank) */
    MetricBlank blank;
} MetricCol;

/* The i-th metric in CSV order; NULL past the end. */
const MetricCol *metric_at(int i);
/* The metric whose formatted CSV name is name; NULL when none. */
const MetricCol *metric_find(const char *name);
/* Its index (metric_at); -1 when none. */
int metric_index(const char *name);
/* m's CSV name, its Markdown header ("" when it has none) and its
 * definition ("" when it has none), with the threshold formatted in: a
 * "%g" is m's threshold, a "{sink}" (definitions) is SINK_EPS. */
void metric_name(const MetricCol *m, char *buf, size_t len);
void metric_head(const MetricCol *m, char *buf, size_t len);
void metric_def(const MetricCol *m, char *buf, size_t len);
/* The metrics the exploratory comparison tests (those with `lower`), in
 * table order, into out[cap]; returns how many. */
int metric_compared(const MetricCol **out, int cap);
/* The metrics of Markdown table t in column order into out[cap]; returns
 * how many. */
int metric_md_columns(int t, const MetricCol **out, int cap);
/* The metrics of the section "Probe measures across seeds" in its order
 * (seeds_order) into out[cap]; returns how many. */
int metric_seeds_columns(const MetricCol **out, int cap);

/* Row i when a protocol may declare it (its `proto`; i is then its
 * ProtoMetric); NULL otherwise (good_regime is the protocol's own, not a
 * row). */
const MetricCol *metric_declared(int i);
/* metric m of row w as a number (NaN: unknown). */
double metric_value(const Row *w, const MetricCol *m);
/* Sets every metric of w to its blank value (MetricBlank): NaN or -1,
 * unknown, for all but the MB_ZERO rows; the Row's other fields are
 * left as they are. */
void metric_blank(Row *w);

#endif
