/* protocol.c: see protocol.h. */
#include "protocol.h"

#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static const char *const METRIC_NAMES[PM_COUNT] = {"f_attn", "sink_formed", "m_act", "val_loss"};

const char *proto_metric_name(ProtoMetric m) {
    return m >= 0 && m < PM_COUNT ? METRIC_NAMES[m] : NULL;
}

static int metric_of(const char *s) {
    for (int m = 0; m < PM_COUNT; m++)
        if (!strcmp(s, METRIC_NAMES[m])) return m;
    return -1;
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
    int m = metric_of(v);
    if (m < 0)
        return seterr(err, errlen, "metric '%s' is not f_attn, sink_formed, m_act or val_loss", v);
    if (has_metric(p, m)) return seterr(err, errlen, "metric '%s' given twice", v);
    p->metrics[p->n_metrics++] = (ProtoMetric)m;
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

/* "METRIC ARM < REF" (or >): a claim about a declared metric and pair. */
static int key_paper(Protocol *p, const char *v, char *err, size_t errlen) {
    char m[32], a[PROTO_ARM_MAX], op[4], r[PROTO_ARM_MAX], extra[2];
    if (sscanf(v, "%31s %95s %3s %95s %1s", m, a, op, r, extra) != 4 ||
        (strcmp(op, "<") && strcmp(op, ">")))
        return seterr(err, errlen, "paper '%s' is not 'METRIC ARM < REF' or '... > ...'", v);
    int mi = metric_of(m), ci = find_compare(p, a, r);
    if (mi < 0 || !has_metric(p, mi))
        return seterr(err, errlen, "paper '%s': metric %s is not declared before it", v, m);
    if (ci < 0)
        return seterr(err, errlen, "paper '%s': no 'compare = %s vs %s' before it", v, a, r);
    for (int i = 0; i < p->n_claims; i++)
        if ((int)p->claims[i].metric == mi && p->claims[i].compare == ci)
            return seterr(err, errlen,
                          "paper '%s': a claim on %s for %s vs %s is already made (%s)", v, m, a, r,
                          p->claims[i].lower == (op[0] == '<') ? "the same" : "the opposite");
    if (p->n_claims == PROTO_MAX) return seterr(err, errlen, "more than %d claims", PROTO_MAX);
    p->claims[p->n_claims++] = (ProtoClaim){(ProtoMetric)mi, ci, op[0] == '<'};
    return 0;
}

static int key_margin(Protocol *p, const char *v, char *err, size_t errlen) {
    char m[32], extra[2];
    double x;
    if (sscanf(v, "%31s %lf %1s", m, &x, extra) != 2 || !(x > 0) || x > 1e30)
        return seterr(err, errlen, "margin '%s' is not 'METRIC VALUE' with VALUE > 0", v);
    int mi = metric_of(m);
    if (mi < 0 || mi == PM_SINK_FORMED)
        return seterr(err, errlen, "margin '%s': %s has no mean to be equivalent in", v, m);
    if (p->margin[mi] > 0)
        return seterr(err, errlen, "margin '%s': a margin for %s given twice", v, m);
    p->margin[mi] = x;
    return 0;
}

int protocol_key(Protocol *p, const char *key, const char *value, char *err, size_t errlen) {
    if (!strcmp(key, "metric")) return key_metric(p, value, err, errlen);
    if (!strcmp(key, "compare")) return key_compare(p, value, err, errlen);
    if (!strcmp(key, "paper")) return key_paper(p, value, err, errlen);
    if (!strcmp(key, "margin")) return key_margin(p, value, err, errlen);
    return seterr(err, errlen, "unknown key '%s' in [primary] (metric, compare, paper, margin)",
                  key);
}

typedef struct {
    Protocol *p;
    const char *path;
    FILE *f;
    int line; /* of the line inih is handling */
    char *err;
    size_t errlen;
    int bad, seen;
} ReadCtx;

/* inih's fgets: one line per call, counted, so a key knows its line. */
static char *read_line(char *str, int num, void *stream) {
    ReadCtx *c = stream;
    char *s = fgets(str, num, c->f);
    if (s) c->line++;
    return s;
}

static int on_key(void *user, const char *section, const char *key, const char *value) {
    ReadCtx *c = user;
    if (strcmp(section, "primary") || c->bad) return 1;
    c->seen = 1;
    char why[300];
    int n = c->p->n_compares;
    if (protocol_key(c->p, key, value, why, sizeof why) == 0) {
        if (c->p->n_compares > n) c->p->compares[n].line = c->line;
        return 1;
    }
    seterr(c->err, c->errlen, "%s:%d: %s", c->path, c->line, why);
    c->bad = 1;
    return 0;
}

int protocol_read(const char *path, Protocol *p, char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    if (access(path, F_OK) != 0 && errno == ENOENT) return 1;
    FILE *f = input_fopen(path, err, errlen);
    if (!f) return -1;
    ReadCtx c = {p, path, f, 0, err, errlen, 0, 0};
    int rc = ini_parse_stream(read_line, &c, on_key, &c);
    fclose(f);
    if (c.bad) return -1;
    if (rc != 0) return seterr(err, errlen, "%s:%d: not 'key = value'", path, rc);
    if (!c.seen || !p->n_metrics || !p->n_compares)
        return seterr(err, errlen, "%s: [primary] needs at least one metric and one compare", path);
    return 0;
}
