/* protocol.c: see protocol.h. */
#include "protocol.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inifile.h"
#include "metric_table.h"
#include "util.h"

/* The metric table's row declared as m; NULL for a bad m. */
static const MetricCol *declared(int m) {
    return m >= 0 && m < PROTO_GOOD_REGIME_M ? metric_declared(m) : NULL;
}

const char *proto_metric_name(ProtoMetric m) {
    if (m == PROTO_GOOD_REGIME_M) return PROTO_GOOD_REGIME;
    const MetricCol *c = declared(m);
    return c ? c->csv : NULL;
}

const char *proto_metric_label(ProtoMetric m) {
    if (m == PROTO_GOOD_REGIME_M) return PROTO_GOOD_REGIME_LABEL;
    const MetricCol *c = declared(m);
    return c && c->label ? c->label : "?";
}

ProtoMetric proto_metric_of(const char *name) {
    if (!strcmp(name, PROTO_GOOD_REGIME)) return PROTO_GOOD_REGIME_M;
    int i = metric_index(name);
    return declared(i) ? i : -1;
}

static const char *const TEST_NAME[] = {"",         "welch",    "mann-whitney",
                                        "paired-t", "wilcoxon", "fisher"};

const char *proto_test_name(ProtoTest t) {
    return t > PT_NONE && t <= PT_FISHER ? TEST_NAME[t] : "none";
}

int proto_test_paired(ProtoTest t) { return t == PT_PAIRED_T || t == PT_WILCOXON; }

/* "val_loss, f_attn, ... or good_regime": the names a [primary] family
 * may declare, in the metric table's order. */
static void metric_list(char *buf, size_t len) {
    size_t n = 0;
    buf[0] = '\0';
    for (int m = 0; m <= PROTO_GOOD_REGIME_M && n < len; m++) {
        if (m < PROTO_GOOD_REGIME_M && (!declared(m) || declared(m)->not_primary)) continue;
        const char *sep = !n ? "" : m == PROTO_GOOD_REGIME_M ? " or " : ", ";
        int w = snprintf(buf + n, len - n, "%s%s", sep, proto_metric_name(m));
        if (w < 0) break;
        n += (size_t)w;
    }
}

/* "ARM vs REF" into c; -1 when malformed. */
static int parse_pair(const char *v, ProtoCompare *c) {
    char a[PROTO_ARM_MAX], vs[8], r[PROTO_ARM_MAX], extra[2];
    if (sscanf(v, "%95s %7s %95s %1s", a, vs, r, extra) != 3 || strcmp(vs, "vs")) return -1;
    if (!strcmp(a, r)) return -1;
    str_copy(c->arm, sizeof c->arm, a);
    str_copy(c->ref, sizeof c->ref, r);
    c->line = 0;
    return 0;
}

/* The first of arm, ref that breaks the name rule, or NULL. */
static const char *bad_arm(const char *arm, const char *ref) {
    return !name_plain(arm) ? arm : !name_plain(ref) ? ref : NULL;
}

static int find_compare(const Protocol *p, const char *arm, const char *ref) {
    for (int i = 0; i < p->n_compares; i++)
        if (!strcmp(p->compares[i].arm, arm) && !strcmp(p->compares[i].ref, ref)) return i;
    return -1;
}

static int has_metric(const Protocol *p, int m) {
    for (int i = 0; i < p->n_metrics; i++)
        if ((int)p->metrics[i] == m) return 1;
    return 0;
}

static int key_metric(Protocol *p, const char *v, char *err, size_t errlen) {
    int m = proto_metric_of(v);
    const MetricCol *c = declared(m);
    if (c && c->not_primary)
        return seterr(err, errlen,
                      "metric '%s' is not a primary metric: %s (drop the line; the report still "
                      "counts it, exploratory)",
                      c->csv, c->not_primary);
    if (m < 0) {
        char names[400];
        metric_list(names, sizeof names);
        return seterr(err, errlen, "metric '%s' is not %s", v, names);
    }
    if (has_metric(p, m)) return seterr(err, errlen, "metric '%s' given twice", v);
    p->metrics[p->n_metrics++] = m;
    return 0;
}

static int key_compare(Protocol *p, const char *v, char *err, size_t errlen) {
    ProtoCompare c;
    if (parse_pair(v, &c)) return seterr(err, errlen, "compare '%s' is not 'ARM vs REF'", v);
    const char *bad = bad_arm(c.arm, c.ref);
    if (bad)
        return seterr(err, errlen, "compare '%s': arm '%s' is not a run name (" NAME_RULE ")", v,
                      bad);
    if (find_compare(p, c.arm, c.ref) >= 0) return seterr(err, errlen, "compare '%s' twice", v);
    if (find_compare(p, c.ref, c.arm) >= 0)
        return seterr(err, errlen,
                      "compare '%s': '%s vs %s' is already declared (one test twice in the "
                      "family)",
                      v, c.ref, c.arm);
    if (p->n_compares == PROTO_MAX) return seterr(err, errlen, "more than %d compares", PROTO_MAX);
    p->compares[p->n_compares++] = c;
    return 0;
}

/* The claim already made on metric mi for compare ci (or sink-free arm
 * a), or -1. */
static int find_claim(const Protocol *p, int mi, int ci, const char *a) {
    for (int i = 0; i < p->n_claims; i++)
        if ((int)p->claims[i].metric == mi && p->claims[i].compare == ci &&
            (ci >= 0 || !strcmp(p->claims[i].arm, a)))
            return i;
    return -1;
}

/* "METRIC ARM sink-free": F-Attn of ARM at or below the uniform share. */
static int key_sink_free(Protocol *p, const char *v, const char *m, const char *a, char *err,
                         size_t errlen) {
    ProtoMetric sink = proto_metric_of(PROTO_SINK_METRIC);
    if (strcmp(m, PROTO_SINK_METRIC) || !has_metric(p, sink))
        return seterr(
            err, errlen,
            "paper '%s': sink-free is a claim on " PROTO_SINK_METRIC ", declared before it", v);
    if (!name_plain(a))
        return seterr(err, errlen, "paper '%s': arm '%s' is not a run name (" NAME_RULE ")", v, a);
    if (find_claim(p, sink, -1, a) >= 0) return seterr(err, errlen, "paper '%s': given twice", v);
    if (p->n_claims == PROTO_MAX) return seterr(err, errlen, "more than %d claims", PROTO_MAX);
    ProtoClaim *c = &p->claims[p->n_claims++];
    *c = (ProtoClaim){
        .metric = sink, .compare = -1, .lower = 1, .one_sided = 1, .rel = PR_SINK_FREE};
    str_copy(c->arm, sizeof c->arm, a);
    return 0;
}

/* "METRIC ARM < REF [one-sided]" (or >, or ~ for comparable), or "METRIC
 * ARM sink-free": a claim about a declared metric and pair. */
static int key_paper(Protocol *p, const char *v, char *err, size_t errlen) {
    char m[32], a[PROTO_ARM_MAX], op[16], r[PROTO_ARM_MAX] = "", side[16] = "", extra[2];
    int got = sscanf(v, "%31s %95s %15s %95s %15s %1s", m, a, op, r, side, extra);
    if (got == 3 && !strcmp(op, "sink-free")) return key_sink_free(p, v, m, a, err, errlen);
    int dir = !strcmp(op, "<") || !strcmp(op, ">");
    if ((got != 4 && got != 5) || (!dir && strcmp(op, "~")) ||
        (got == 5 && (strcmp(side, "one-sided") || !dir)))
        return seterr(err, errlen,
                      "paper '%s' is not 'METRIC ARM < REF' or '... > ...' (optionally followed "
                      "by 'one-sided'), 'METRIC ARM ~ REF' or 'f_attn ARM sink-free'",
                      v);
    int mi = proto_metric_of(m), ci = find_compare(p, a, r);
    if (mi < 0 || !has_metric(p, mi))
        return seterr(err, errlen, "paper '%s': metric %s is not declared before it", v, m);
    if (ci < 0)
        return seterr(err, errlen, "paper '%s': no 'compare = %s vs %s' before it", v, a, r);
    int old = find_claim(p, mi, ci, a);
    if (old >= 0)
        return seterr(err, errlen, "paper '%s': a claim on %s for %s vs %s is already made (%s)", v,
                      m, a, r,
                      proto_rel_char(p->claims[old].rel) == op[0] ? "the same" : "another");
    if (p->n_claims == PROTO_MAX) return seterr(err, errlen, "more than %d claims", PROTO_MAX);
    ProtoRel rel = op[0] == '~' ? PR_EQUIV : op[0] == '<' ? PR_LOWER : PR_HIGHER;
    p->claims[p->n_claims++] = (ProtoClaim){
        .metric = mi, .compare = ci, .lower = op[0] == '<', .one_sided = got == 5, .rel = rel};
    return 0;
}

char proto_rel_char(ProtoRel r) {
    return r == PR_LOWER      ? '<'
           : r == PR_HIGHER   ? '>'
           : r == PR_EQUIV    ? '~'
           : r == PR_INTERACT ? 'x'
                              : 's';
}

/* "METRIC A2 vs B2 minus A1 vs B1 [< BOUND | > BOUND]": the change of
 * one comparison between two settings, a [secondary] question. */
static int key_interaction(Protocol *p, const char *v, char *err, size_t errlen) {
    if (!p->secondary)
        return seterr(err, errlen,
                      "interaction '%s' in [primary]: how an effect changes between settings is "
                      "a question the paper states no claim on: declare it in [secondary]",
                      v);
    ProtoInteraction x = {.line = 0};
    char m[32], vs1[8], minus[8], vs2[8], op[4] = "", extra[2];
    int got = sscanf(v, "%31s %95s %7s %95s %7s %95s %7s %95s %3s %lf %1s", m, x.arm2, vs1, x.ref2,
                     minus, x.arm1, vs2, x.ref1, op, &x.bound, extra);
    if ((got != 8 && got != 10) || strcmp(vs1, "vs") || strcmp(minus, "minus") ||
        strcmp(vs2, "vs") || (got == 10 && strcmp(op, "<") && strcmp(op, ">")) ||
        !isfinite(x.bound))
        return seterr(err, errlen,
                      "interaction '%s' is not 'METRIC A2 vs B2 minus A1 vs B1', optionally "
                      "followed by '< BOUND' or '> BOUND'",
                      v);
    const char *arms[4] = {x.arm2, x.ref2, x.arm1, x.ref1};
    for (int i = 0; i < 4; i++)
        if (!name_plain(arms[i]))
            return seterr(err, errlen,
                          "interaction '%s': arm '%s' is not a run name (" NAME_RULE ")", v,
                          arms[i]);
    if (!strcmp(x.arm2, x.ref2) || !strcmp(x.arm1, x.ref1) ||
        (!strcmp(x.arm2, x.arm1) && !strcmp(x.ref2, x.ref1)))
        return seterr(err, errlen,
                      "interaction '%s': each pair needs two arms and the pairs must differ", v);
    int mi = proto_metric_of(m);
    if (mi < 0 || !has_metric(p, mi))
        return seterr(err, errlen, "interaction '%s': metric %s is not declared before it", v, m);
    if (p->n_inter == PROTO_INTER_MAX)
        return seterr(err, errlen, "more than %d interactions", PROTO_INTER_MAX);
    x.metric = mi;
    x.side = got == 8 ? 0 : op[0] == '<' ? -1 : 1;
    if (!x.side) x.bound = 0;
    p->inter[p->n_inter++] = x;
    return 0;
}

/* "METRIC TEST": the one test of a declared metric. */
static int key_test(Protocol *p, const char *v, char *err, size_t errlen) {
    char m[32], t[32], extra[2];
    if (sscanf(v, "%31s %31s %1s", m, t, extra) != 2)
        return seterr(err, errlen, "test '%s' is not 'METRIC TEST'", v);
    int mi = proto_metric_of(m), ti = PT_NONE;
    for (int k = PT_WELCH; k <= PT_FISHER; k++)
        if (!strcmp(t, TEST_NAME[k])) ti = k;
    if (mi < 0 || !has_metric(p, mi))
        return seterr(err, errlen, "test '%s': metric %s is not declared before it", v, m);
    if (ti == PT_NONE)
        return seterr(err, errlen,
                      "test '%s': '%s' is not welch, mann-whitney, paired-t, wilcoxon or fisher", v,
                      t);
    if (p->test[mi] != PT_NONE)
        return seterr(err, errlen, "test '%s': %s already has a test (one test per metric)", v, m);
    p->test[mi] = (ProtoTest)ti;
    return 0;
}

/* "val_loss_below VALUE": the threshold that defines good_regime. */
static int key_threshold(Protocol *p, const char *v, char *err, size_t errlen) {
    char k[32], extra[2];
    double x;
    if (sscanf(v, "%31s %lf %1s", k, &x, extra) != 2 || strcmp(k, "val_loss_below") || !(x > 0) ||
        x > 1e30)
        return seterr(err, errlen, "threshold '%s' is not 'val_loss_below VALUE' with VALUE > 0",
                      v);
    if (p->good_below > 0) return seterr(err, errlen, "threshold '%s': given twice", v);
    p->good_below = x;
    return 0;
}

static int key_margin(Protocol *p, const char *v, char *err, size_t errlen) {
    char m[32], extra[2];
    double x;
    if (sscanf(v, "%31s %lf %1s", m, &x, extra) != 2 || !(x > 0) || x > 1e30)
        return seterr(err, errlen, "margin '%s' is not 'METRIC VALUE' with VALUE > 0", v);
    if (!strcmp(m, "sink_free")) {
        if (p->sink_margin > 0) return seterr(err, errlen, "margin '%s': given twice", v);
        p->sink_margin = x;
        return 0;
    }
    int mi = proto_metric_of(m);
    if (mi < 0 || mi == PROTO_GOOD_REGIME_M || declared(mi)->kind == MK_FLAG) /* 0/1: no mean */
        return seterr(err, errlen, "margin '%s': %s has no mean to be equivalent in", v, m);
    if (p->margin[mi] > 0)
        return seterr(err, errlen, "margin '%s': a margin for %s given twice", v, m);
    p->margin[mi] = x;
    return 0;
}

int protocol_key(Protocol *p, const char *key, const char *value, char *err, size_t errlen) {
    if (p->secondary && (!strcmp(key, "paper") || !strcmp(key, "margin")))
        return seterr(err, errlen,
                      "'%s' in [secondary]: its tests are two-sided questions, not claims (the "
                      "paper's claims go in [primary])",
                      key);
    if (!strcmp(key, "metric")) return key_metric(p, value, err, errlen);
    if (!strcmp(key, "compare")) return key_compare(p, value, err, errlen);
    if (!strcmp(key, "paper")) return key_paper(p, value, err, errlen);
    if (!strcmp(key, "margin")) return key_margin(p, value, err, errlen);
    if (!strcmp(key, "test")) return key_test(p, value, err, errlen);
    if (!strcmp(key, "threshold")) return key_threshold(p, value, err, errlen);
    if (!strcmp(key, "interaction")) return key_interaction(p, value, err, errlen);
    return seterr(err, errlen, "unknown key '%s' in [%s] (metric, test, threshold, compare, %s)",
                  key, p->secondary ? "secondary" : "primary",
                  p->secondary ? "interaction" : "paper, margin");
}

/* Each comparable claim has its metric's margin; each sink-free claim the
 * sink_free margin and a paired f_attn test (its one-sample form). */
static int claims_check(const Protocol *p, char *err, size_t errlen) {
    for (int i = 0; i < p->n_claims; i++) {
        const ProtoClaim *c = &p->claims[i];
        const char *name = proto_metric_name(c->metric);
        if (c->rel == PR_EQUIV && !(p->margin[c->metric] > 0))
            return seterr(err, errlen, "%d: a '~' claim on %s needs 'margin = %s VALUE'", c->line,
                          name, name);
        if (c->rel == PR_SINK_FREE && !(p->sink_margin > 0))
            return seterr(
                err, errlen,
                "%d: a sink-free claim needs 'margin = sink_free VALUE' (F-Attn / uniform "
                "share below 1 + VALUE)",
                c->line);
        if (c->rel == PR_SINK_FREE &&
            !proto_test_paired(p->test[proto_metric_of(PROTO_SINK_METRIC)]))
            return seterr(err, errlen,
                          "%d: a sink-free claim is tested by f_attn's test against a constant: "
                          "declare 'test = f_attn wilcoxon' or paired-t",
                          c->line);
    }
    return 0;
}

int protocol_has_tests(const Protocol *p) {
    return p->n_metrics > 0 && (p->n_compares > 0 || p->n_inter > 0);
}

void protocol_set_line(Protocol *p, int nc, int ncl, int nm, int ni, int line) {
    if (p->n_compares > nc) p->compares[nc].line = line;
    if (p->n_claims > ncl) p->claims[ncl].line = line;
    if (p->n_metrics > nm) p->metric_line[p->metrics[nm]] = line;
    if (p->n_inter > ni) p->inter[ni].line = line;
}

int protocol_check(const Protocol *p, char *err, size_t errlen) {
    int tests = p->n_compares * p->n_metrics + p->n_inter;
    if (p->secondary && tests > PROTO_MAX) /* each one a claim of the family's copy */
        return seterr(err, errlen,
                      "%d: [secondary] declares %d tests (%d compares x %d metrics + %d "
                      "interactions), more than %d: split it into fewer compares or metrics",
                      p->n_compares ? p->compares[0].line
                      : p->n_inter  ? p->inter[0].line
                                    : 0,
                      tests, p->n_compares, p->n_metrics, p->n_inter, PROTO_MAX);
    for (int i = 0; i < p->n_inter; i++) {
        const char *name = proto_metric_name(p->inter[i].metric);
        if (!proto_test_paired(p->test[p->inter[i].metric]))
            return seterr(err, errlen,
                          "%d: an interaction pairs four arms by seed: declare 'test = %s "
                          "wilcoxon' or paired-t",
                          p->inter[i].line, name);
    }
    for (int i = 0; i < p->n_metrics; i++) {
        ProtoMetric m = p->metrics[i];
        const char *name = proto_metric_name(m);
        int line = p->metric_line[m], flag = m == PROTO_GOOD_REGIME_M;
        if (p->test[m] == PT_NONE)
            return seterr(err, errlen,
                          "%d: metric %s has no declared test: add 'test = %s %s' (or %s)", line,
                          name, name, flag ? "fisher" : "wilcoxon",
                          flag ? "nothing else: a 0/1 per run" : "welch, mann-whitney, paired-t");
        if (flag != (p->test[m] == PT_FISHER))
            return seterr(err, errlen, "%d: metric %s cannot be tested by %s (%s)", line, name,
                          proto_test_name(p->test[m]),
                          flag ? "good_regime is 0/1 per run: fisher"
                               : "fisher is for good_regime only");
        if (flag && !(p->good_below > 0))
            return seterr(err, errlen,
                          "%d: metric good_regime needs 'threshold = val_loss_below VALUE'", line);
    }
    return claims_check(p, err, errlen);
}

typedef struct {
    Protocol *p;
    const char *section; /* "primary" or "secondary" */
    int seen;            /* a key of it */
} ReadCtx;

/* A key of the file (inifile.h); only the family's section's are read. */
static int on_key(void *user, const IniLine *l, char *why, size_t whylen) {
    ReadCtx *c = user;
    if (strcmp(l->section, c->section)) return 0;
    c->seen = 1;
    Protocol *p = c->p;
    int n = p->n_compares, nm = p->n_metrics, nc = p->n_claims, ni = p->n_inter;
    if (protocol_key(p, l->key, l->value, why, whylen) != 0) return -1;
    protocol_set_line(p, n, nc, nm, ni, l->line);
    return 0;
}

int protocol_read(const char *path, Protocol *p, char *err, size_t errlen) {
    return protocol_read_family(path, 0, p, err, errlen);
}

int protocol_read_family(const char *path, int secondary, Protocol *p, char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    p->secondary = secondary;
    const char *sec = secondary ? "secondary" : "primary";
    if (access(path, F_OK) != 0 && errno == ENOENT) return 1;
    size_t len;
    char *text = input_slurp(path, 1 << 20, &len, err, errlen);
    if (!text) return -1;
    protocol_hash_text(text, len, p->hash);
    str_copy(p->path, sizeof p->path, path);
    ReadCtx c = {p, sec, 0};
    IniHandlers h = {on_key, NULL, &c};
    int rc = ini_read(path, text, &h, err, errlen);
    free(text);
    if (rc != 0) return -1;
    if (!c.seen && secondary) return 1;
    if (!c.seen || !protocol_has_tests(p))
        return seterr(err, errlen, "%s: [%s] needs at least one metric and one compare%s", path,
                      sec, secondary ? " or interaction" : "");
    char why[400];
    if (protocol_check(p, why, sizeof why) != 0) return seterr(err, errlen, "%s:%s", path, why);
    return 0;
}
