/* protocol.h: a study's confirmatory protocol, declared before its runs.
 *
 * A sweep file's [primary] section names the primary family: metrics
 * crossed with comparisons (arm against a reference arm, both run names),
 * the paper's claims that family tests (a direction per metric and pair),
 * and the equivalence margins that "as well as" sentences need:
 *
 *   [primary]
 *   metric = f_attn                      ; f_attn, sink_formed, m_act, val_loss
 *   compare = g1-elem vs baseline        ; arm vs reference (repeatable)
 *   paper = f_attn g1-elem < baseline    ; a claim: arm < ref or arm > ref
 *   margin = f_attn 0.02                 ; TOST margin for that metric
 *
 * `gatelab sweep` copies the section into OUT/protocol.ini; `gatelab
 * report` reads it there and applies Holm's correction across the family
 * (docs/statistics.md). Every claim must be about a declared metric and a
 * declared comparison. */
#ifndef GATELAB_PROTOCOL_H
#define GATELAB_PROTOCOL_H

#include <stddef.h>

#define PROTO_MAX 32     /* comparisons, claims */
#define PROTO_ARM_MAX 96 /* a run name */
#define PROTO_FILE "protocol.ini"

typedef enum { PM_F_ATTN, PM_SINK_FORMED, PM_M_ACT, PM_VAL_LOSS, PM_COUNT } ProtoMetric;

typedef struct {
    char arm[PROTO_ARM_MAX], ref[PROTO_ARM_MAX];
    int line; /* its line in the file it was read from (0: not known) */
} ProtoCompare;

typedef struct {
    ProtoMetric metric;
    int compare; /* index into compares */
    int lower;   /* 1: the paper says arm < ref; 0: arm > ref */
} ProtoClaim;

typedef struct {
    int n_metrics;
    ProtoMetric metrics[PM_COUNT];
    int n_compares;
    ProtoCompare compares[PROTO_MAX];
    int n_claims;
    ProtoClaim claims[PROTO_MAX];
    double margin[PM_COUNT]; /* 0: none declared */
} Protocol;

/* The name of m: the CSV name of the metric table's row that carries m
 * (metric_table.h, `proto`), "f_attn", ... ; NULL for a bad value. */
const char *proto_metric_name(ProtoMetric m);

/* Applies one `key = value` of a [primary] section to p (zeroed first by
 * the caller). 0, or -1 with a one-line reason naming the value. Refused:
 * an arm outside the name rule (name_plain, util.h), a pair given twice or
 * also reversed (`A vs B` and `B vs A` would be one test twice in the Holm
 * family), a claim given twice or contradicting an earlier one (`<` and
 * `>` for one metric and pair), a second margin for one metric. */
int protocol_key(Protocol *p, const char *key, const char *value, char *err, size_t errlen);

/* Reads the [primary] section of path (other sections are ignored), with
 * each compare's line. 0 on success, 1 when path does not exist, -1 with
 * a one-line reason ("FILE:LINE: ...") when it cannot be read or a key is
 * bad. */
int protocol_read(const char *path, Protocol *p, char *err, size_t errlen);

#endif
