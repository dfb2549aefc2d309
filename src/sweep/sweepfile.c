/* sweepfile.c: parse and expand sweep files (format in sweep.h).
 *
 * The INI syntax is read by inifile.c, which tells each handler its line
 * and adds the "FILE:LINE: " of a handler's refusal; the checks after the
 * read (presets, includes, run ids, [primary] arms) name their lines
 * themselves. Every error is one line starting "FILE:LINE: ".
 */
#include "sweep.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <search.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakequant.h"
#include "inifile.h"
#include "intervention.h"
#include "protocol.h"
#include "seedlist.h"
#include "sweepclaims.h"
#include "util.h"

#define LINE_MAX_LEN (INI_LINE_MAX + 1) /* room for any one line's text */

typedef struct {
    char name[SWEEP_NAME_MAX];
    int line;
    char **keys; /* "key=value" in file order */
    int n_keys;
} FileRun;

typedef struct {
    char path[SWEEP_PATH_MAX];
    int line;
} Include;

/* State of one file being parsed. */
typedef struct {
    const char *path;
    int line; /* the line being read */
    char *err;
    size_t errlen;
    char *why; /* while reading: inifile's buffer for a refusal's reason */
    size_t whylen;
    int failed;
    enum { SEC_NONE, SEC_SWEEP, SEC_RUN, SEC_PRIMARY, SEC_SECONDARY } sec;
    char preset[SWEEP_PATH_MAX];
    int preset_line;
    unsigned long long seeds[SWEEP_MAX_SEEDS];
    int n_seeds, seeds_line;
    char **sets;
    int n_sets;
    FileRun *runs;
    int n_runs;
    Include *incs;
    int n_incs;
    char eval_lengths[128];              /* "1x,2x,..." from eval_lengths = 1,2,... */
    char intervene[96];                  /* "gates-open bos-mean ..." from intervene = */
    char eval_quant[64];                 /* "w8a8,w4a4" from eval_quant = */
    int quant_keep, quant_keep_line;     /* eval_quant_keep_first = K (needs eval_quant) */
    int quant_source, quant_source_line; /* eval_quant_source = 1 (needs eval_quant) */
    int quant_per_tensor;                /* eval_quant has a per-tensor mode (fq_calibrated) */
    int eval_needle, eval_needle_line;   /* eval_needle = 1 (needs eval_lengths) */
    Protocol proto, proto2;              /* [primary] and [secondary], checked key by key */
    char *primary, *second;              /* each as "key = value" lines */
    int primary_line;                    /* [primary]'s header line (0: none) */
    int second_line;                     /* [secondary]'s header line (0: none) */
} FileCtx;

#define MAX_FILES 256 /* distinct sweep files in one sweep, includes and all */

/* The state of one sweep_parse: the include chain being read (real paths,
 * to refuse loops), every file read so far (each is expanded once, however
 * often and under whatever spellings it is included), and the run ids
 * already in the sweep (hsearch_r: run index + 1), so expansion stays
 * linear in the number of runs. */
typedef struct {
    char *paths[32];
    int n;
    char *seen[MAX_FILES];
    int n_seen;
    struct hsearch_data ids;
    char **keys; /* the table's keys (hsearch_r keeps pointers) */
    int cap;     /* room in sw->runs and keys */
} Chain;

/* The first error wins: while the file is read, its reason goes to c->why
 * (inifile adds "FILE:LINE: " of the line being read); after, the whole
 * "FILE:LINE: reason" goes to c->err. Returns 0. */
static int fail(FileCtx *c, int line, const char *fmt, const char *a, const char *b) {
    if (c->failed) return 0;
    c->failed = 1;
    if (c->why) {
        snprintf(c->why, c->whylen, fmt, a ? a : "", b ? b : "");
        return 0;
    }
    int k = snprintf(c->err, c->errlen, "%s:%d: ", c->path, line);
    if (k >= 0 && (size_t)k < c->errlen)
        snprintf(c->err + k, c->errlen - (size_t)k, fmt, a ? a : "", b ? b : "");
    return 0; /* inih: handler error */
}

/* Keys end up in argv: keep them plain (run names: name_plain, util.h). */
static int key_ok(const char *s) {
    if (!*s) return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_') return 0;
    return 1;
}

static int push_str(char ***v, int *n, const char *s) {
    char **nv = realloc(*v, (size_t)(*n + 1) * sizeof **v);
    if (!nv) return -1;
    *v = nv;
    if (!(nv[*n] = strdup(s))) return -1;
    (*n)++;
    return 0;
}

static void free_strs(char **v, int n) {
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* A [section] header: the text between '[' and the first ']' (inifile
 * refuses a header without ']' as a syntax error). */
static void section_header(FileCtx *c, char *name_text) {
    char *s = str_trim(name_text);
    if (!strcmp(s, "sweep")) {
        c->sec = SEC_SWEEP;
        return;
    }
    if (!strcmp(s, "primary") || !strcmp(s, "secondary")) {
        int second = s[0] == 's', *line = second ? &c->second_line : &c->primary_line;
        if (*line) fail(c, c->line, "[%s] given twice", s, NULL);
        *line = c->line;
        c->sec = second ? SEC_SECONDARY : SEC_PRIMARY;
        c->proto2.secondary = 1;
        return;
    }
    if (strncmp(s, "run", 3) || (s[3] && !isspace((unsigned char)s[3]))) {
        fail(c, c->line,
             "unknown section [%s] (expected [sweep], [primary], [secondary] or [run NAME])", s,
             NULL);
        return;
    }
    char *name = str_trim(s + 3);
    if (!*name) {
        fail(c, c->line, "[run] needs a name: [run NAME]", NULL, NULL);
        return;
    }
    if (strlen(name) >= SWEEP_NAME_MAX || !name_plain(name)) {
        fail(c, c->line, "bad run name '%s' (" NAME_RULE " only, under 96 chars)", name, NULL);
        return;
    }
    for (int i = 0; i < c->n_runs; i++)
        if (!strcmp(c->runs[i].name, name)) {
            char first[32];
            snprintf(first, sizeof first, "%d", c->runs[i].line);
            fail(c, c->line, "duplicate run name '%s' (first at line %s)", name, first);
            return;
        }
    FileRun *nr = realloc(c->runs, (size_t)(c->n_runs + 1) * sizeof *nr);
    if (!nr) {
        fail(c, c->line, "out of memory", NULL, NULL);
        return;
    }
    c->runs = nr;
    FileRun *r = &nr[c->n_runs++];
    memset(r, 0, sizeof *r);
    str_copy(r->name, sizeof r->name, name);
    r->line = c->line;
    c->sec = SEC_RUN;
}

/* `seeds =` (seedlist.h) into c's seeds. */
static void parse_seeds(FileCtx *c, const char *value) {
    char why[LINE_MAX_LEN + 96];
    if (seed_list_parse(value, c->seeds, SWEEP_MAX_SEEDS, &c->n_seeds, why, sizeof why))
        fail(c, c->line, "%s", why, NULL);
}

/* Check one "key=value" override; the trainer validates the value. */
static int check_override(FileCtx *c, const char *key, const char *value) {
    if (!key_ok(key))
        return fail(c, c->line, "bad key '%s' (letters, digits, _ only)", key, NULL), -1;
    if (!*value) return fail(c, c->line, "key '%s' has no value", key, NULL), -1;
    if (!strcmp(key, "init_seed") || !strcmp(key, "data_seed"))
        return fail(c, c->line, "%s is set per run by seeds = in [sweep]", key, NULL), -1;
    return 0;
}

/* eval_lengths = 1,2,4,8 (multiples of seq_len) -> "1x,2x,4x,8x" */
static int parse_eval_lengths(FileCtx *c, const char *value) {
    char tmp[128];
    if (c->eval_lengths[0]) return fail(c, c->line, "eval_lengths given twice", NULL, NULL);
    if (!*value || strlen(value) >= 40)
        return fail(c, c->line, "bad eval_lengths '%s'", value, NULL);
    snprintf(tmp, sizeof tmp, "%s", value);
    size_t k = 0;
    int n = 0;
    for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        long v = strtol(t, &end, 10);
        while (*end == ' ') end++;
        if (end == t || *end || v < 1 || v > 64 || ++n > 16)
            return fail(c, c->line, "bad eval_lengths '%s' (want multiples like 1,2,4,8)", value,
                        NULL);
        k += (size_t)snprintf(c->eval_lengths + k, sizeof c->eval_lengths - k, "%s%ldx",
                              k ? "," : "", v);
    }
    return 1; /* inih: nonzero is success */
}

/* intervene = all | KIND[ ,KIND...] (gatelab intervene's kinds), kept as
 * the space-separated argument list of that command. */
static int parse_intervene(FileCtx *c, const char *value) {
    char tmp[128];
    if (c->intervene[0]) return fail(c, c->line, "intervene given twice", NULL, NULL);
    if (!*value || strlen(value) >= 80) return fail(c, c->line, "bad intervene '%s'", value, NULL);
    snprintf(tmp, sizeof tmp, "%s", value);
    size_t k = 0;
    for (char *save = NULL, *t = strtok_r(tmp, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        char names[256];
        if (strcmp(t, "all") && intervention_kind(t) <= IV_NONE)
            return fail(c, c->line, "bad intervene kind '%s' (%s)", t,
                        intervention_names(names, sizeof names, 1));
        k += (size_t)snprintf(c->intervene + k, sizeof c->intervene - k, "%s%s", k ? " " : "", t);
    }
    return 1;
}

/* eval_quant = MODE[,MODE...] (fakequant.h's quantized modes, each once),
 * kept as the comma-separated list `gatelab eval --quant` takes. */
static int parse_eval_quant(FileCtx *c, const char *value) {
    char tmp[128];
    int seen[FQ_MODE_COUNT] = {0};
    if (c->eval_quant[0]) return fail(c, c->line, "eval_quant given twice", NULL, NULL);
    if (!*value || strlen(value) >= 60) return fail(c, c->line, "bad eval_quant '%s'", value, NULL);
    snprintf(tmp, sizeof tmp, "%s", value);
    size_t k = 0;
    for (char *save = NULL, *t = strtok_r(tmp, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        int m = fq_mode_parse(t);
        if (m <= FQ_FLOAT || seen[m]++)
            return fail(c, c->line, "bad eval_quant mode '%s' (" FQ_NAMES_TEXT ", each once)", t,
                        NULL);
        k += (size_t)snprintf(c->eval_quant + k, sizeof c->eval_quant - k, "%s%s", k ? "," : "", t);
        c->quant_per_tensor |= fq_calibrated((FqMode)m);
    }
    return 1;
}

/* eval_quant_keep_first = K (a whole number, 0: none) and
 * eval_quant_source = 1 | 0: `gatelab eval --quant`'s --quant-keep-first
 * and --quant-source; that their eval_quant is there is checked after the
 * file is read (parse_file). */
static int parse_quant_opt(FileCtx *c, const char *name, const char *value) {
    int keep = !strcmp(name, "eval_quant_keep_first"), *line, *out;
    line = keep ? &c->quant_keep_line : &c->quant_source_line;
    out = keep ? &c->quant_keep : &c->quant_source;
    if (*line) return fail(c, c->line, "%s given twice", name, NULL);
    char *end;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (end == value || *end || errno || v < 0 || v > (keep ? INT_MAX : 1))
        return fail(c, c->line,
                    keep ? "bad %s '%s' (a whole number K: hold the first K positions out)"
                         : "bad %s '%s' (1: find each mode's damage source, 0: not)",
                    name, value);
    *out = (int)v;
    *line = c->line;
    return 1;
}

/* eval_needle = 1 | 0: the needle task at eval_lengths' lengths. */
static int parse_eval_needle(FileCtx *c, const char *value) {
    if (c->eval_needle_line) return fail(c, c->line, "eval_needle given twice", NULL, NULL);
    if (strcmp(value, "0") && strcmp(value, "1"))
        return fail(c, c->line, "bad eval_needle '%s' (1: score the needle task, 0: not)", value,
                    NULL);
    c->eval_needle = value[0] == '1';
    c->eval_needle_line = c->line;
    return 1;
}

static int sweep_key(FileCtx *c, const char *name, const char *value) {
    if (!strcmp(name, "preset")) {
        if (c->preset_line) return fail(c, c->line, "preset given twice", NULL, NULL);
        if (!*value || strlen(value) >= SWEEP_PATH_MAX - 8)
            return fail(c, c->line, "bad preset '%s'", value, NULL);
        str_copy(c->preset, sizeof c->preset, value);
        c->preset_line = c->line;
    } else if (!strcmp(name, "eval_lengths")) {
        return parse_eval_lengths(c, value);
    } else if (!strcmp(name, "intervene")) {
        return parse_intervene(c, value);
    } else if (!strcmp(name, "eval_quant")) {
        return parse_eval_quant(c, value);
    } else if (!strcmp(name, "eval_quant_keep_first") || !strcmp(name, "eval_quant_source")) {
        return parse_quant_opt(c, name, value);
    } else if (!strcmp(name, "eval_needle")) {
        return parse_eval_needle(c, value);
    } else if (!strcmp(name, "seeds")) {
        if (c->seeds_line) return fail(c, c->line, "seeds given twice", NULL, NULL);
        c->seeds_line = c->line;
        parse_seeds(c, value);
    } else if (!strcmp(name, "set")) {
        char tmp[LINE_MAX_LEN];
        snprintf(tmp, sizeof tmp, "%s", value);
        char *eq = strchr(tmp, '=');
        if (!eq) return fail(c, c->line, "set = '%s' is not key=value", value, NULL);
        *eq = '\0';
        char kv[LINE_MAX_LEN];
        char *k = str_trim(tmp), *v = str_trim(eq + 1);
        if (check_override(c, k, v)) return 0;
        snprintf(kv, sizeof kv, "%s=%s", k, v);
        if (push_str(&c->sets, &c->n_sets, kv))
            return fail(c, c->line, "out of memory", NULL, NULL);
    } else if (!strcmp(name, "include")) {
        Include *ni = realloc(c->incs, (size_t)(c->n_incs + 1) * sizeof *ni);
        if (!ni) return fail(c, c->line, "out of memory", NULL, NULL);
        c->incs = ni;
        if (!*value || str_copy(ni[c->n_incs].path, SWEEP_PATH_MAX, value))
            return fail(c, c->line, "bad include '%s'", value, NULL);
        ni[c->n_incs++].line = c->line;
    } else {
        return fail(c, c->line,
                    "unknown key '%s' in [sweep] (preset, seeds, "
                    "set, include, eval_lengths, eval_needle, intervene, eval_quant, "
                    "eval_quant_keep_first, eval_quant_source)",
                    name, NULL);
    }
    return 1;
}

/* One [primary] or [secondary] key: checked by protocol.c, kept as text
 * for protocol.ini. */
static int primary_key(FileCtx *c, const char *name, const char *value) {
    char why[300], **text = c->sec == SEC_SECONDARY ? &c->second : &c->primary;
    Protocol *p = c->sec == SEC_SECONDARY ? &c->proto2 : &c->proto;
    int nc = p->n_compares, nm = p->n_metrics, ncl = p->n_claims, ni = p->n_inter;
    if (protocol_key(p, name, value, why, sizeof why) != 0)
        return fail(c, c->line, "%s", why, NULL);
    protocol_set_line(p, nc, ncl, nm, ni, c->line);
    size_t old = *text ? strlen(*text) : 0, add = strlen(name) + strlen(value) + 5;
    char *n = realloc(*text, old + add);
    if (!n) return fail(c, c->line, "out of memory", NULL, NULL);
    snprintf(n + old, add, "%s = %s\n", name, value);
    *text = n;
    return 1;
}

static int handler(FileCtx *c, const char *name, const char *value) {
    if (c->failed) return 0;
    if (c->sec == SEC_NONE)
        return fail(c, c->line,
                    "key '%s' outside a section ([sweep] or "
                    "[run NAME])",
                    name, NULL);
    if (c->sec == SEC_SWEEP) return sweep_key(c, name, value);
    if (c->sec == SEC_PRIMARY || c->sec == SEC_SECONDARY) return primary_key(c, name, value);
    FileRun *r = &c->runs[c->n_runs - 1];
    if (check_override(c, name, value)) return 0;
    size_t kl = strlen(name);
    for (int i = 0; i < r->n_keys; i++)
        if (!strncmp(r->keys[i], name, kl) && r->keys[i][kl] == '=')
            return fail(c, c->line, "key '%s' given twice in [run %s]", name, r->name);
    char kv[LINE_MAX_LEN];
    snprintf(kv, sizeof kv, "%s=%s", name, value);
    if (push_str(&r->keys, &r->n_keys, kv)) return fail(c, c->line, "out of memory", NULL, NULL);
    return 1;
}

/* inifile's handlers: the line being read, then the section or key
 * checked above; -1 with the reason in why once one refused. */
static int on_section(void *user, const IniLine *l, char *why, size_t whylen) {
    FileCtx *c = user;
    char name[LINE_MAX_LEN];
    snprintf(name, sizeof name, "%s", l->section);
    c->line = l->line, c->why = why, c->whylen = whylen;
    section_header(c, name);
    c->why = NULL;
    return c->failed ? -1 : 0;
}

static int on_key(void *user, const IniLine *l, char *why, size_t whylen) {
    FileCtx *c = user;
    c->line = l->line, c->why = why, c->whylen = whylen;
    handler(c, l->key, l->value);
    c->why = NULL;
    return c->failed ? -1 : 0;
}

static void ctx_free(FileCtx *c) {
    free_strs(c->sets, c->n_sets);
    for (int i = 0; i < c->n_runs; i++) free_strs(c->runs[i].keys, c->runs[i].n_keys);
    free(c->runs);
    free(c->incs);
    free(c->primary);
    free(c->second);
}

/* dir of path + rel; rel used as is when absolute. */
static int join_rel(char *out, size_t len, const char *path, const char *rel) {
    if (rel[0] == '/') return str_copy(out, len, rel);
    const char *slash = strrchr(path, '/');
    int dl = slash ? (int)(slash - path) : 0;
    int k = slash ? snprintf(out, len, "%.*s/%s", dl, path, rel) : snprintf(out, len, "%s", rel);
    return (k < 0 || (size_t)k >= len) ? -1 : 0;
}

/* preset "small" means DIR/small.ini; a value with '/' or ".ini" is a path. */
static int resolve_preset(FileCtx *c, char *out, size_t len) {
    const char *p = c->preset;
    size_t n = strlen(p);
    char rel[SWEEP_PATH_MAX + 8];
    if (strchr(p, '/') || (n > 4 && !strcmp(p + n - 4, ".ini"))) snprintf(rel, sizeof rel, "%s", p);
    else snprintf(rel, sizeof rel, "%s.ini", p);
    if (join_rel(out, len, c->path, rel))
        return fail(c, c->preset_line, "preset path too long: %s", p, NULL), -1;
    if (!file_exists(out)) return fail(c, c->preset_line, "preset '%s': no file %s", p, out), -1;
    char why[SWEEP_PATH_MAX + 64];
    if (input_check(out, why, sizeof why))
        return fail(c, c->preset_line, "preset '%s': %s", p, why), -1;
    return 0;
}

static int same_settings(const SweepRun *a, const SweepRun *b) {
    if (a->n_sets != b->n_sets) return 0;
    for (int i = 0; i < a->n_sets; i++)
        if (strcmp(a->sets[i], b->sets[i])) return 0;
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!realpath(a->preset, ra) || !realpath(b->preset, rb)) return 0;
    return !strcmp(ra, rb);
}

static void run_free(SweepRun *r) {
    free_strs(r->sets, r->n_sets);
    r->sets = NULL;
    r->n_sets = 0;
}

/* Add run fr x seed to sw; an identical run already there (a file included
 * twice, or the same run in two sweeps) is dropped, a different one with
 * the same id is an error. */
/* Room for one more run in sw and chain->keys, growing geometrically up
 * to SWEEP_MAX_RUNS; -1 after fail() when that is exceeded or memory ends. */
static int grow_runs(FileCtx *c, Chain *chain, Sweep *sw, int line) {
    if (sw->n_runs < chain->cap) return 0;
    if (sw->n_runs >= SWEEP_MAX_RUNS) {
        char n[32];
        snprintf(n, sizeof n, "%d", SWEEP_MAX_RUNS);
        return fail(c, line, "the sweep expands to more than %s runs; split it into smaller sweeps",
                    n, NULL),
               -1;
    }
    int cap = chain->cap ? 2 * chain->cap : 64;
    if (cap > SWEEP_MAX_RUNS) cap = SWEEP_MAX_RUNS;
    SweepRun *nr = realloc(sw->runs, (size_t)cap * sizeof *nr);
    if (nr) sw->runs = nr;
    char **nk = nr ? realloc(chain->keys, (size_t)cap * sizeof *nk) : NULL;
    if (nk) chain->keys = nk;
    if (!nr || !nk) return fail(c, line, "out of memory", NULL, NULL), -1;
    chain->cap = cap;
    return 0;
}

static int add_run(FileCtx *c, Chain *chain, Sweep *sw, const FileRun *fr, const char *preset,
                   unsigned long long seed) {
    SweepRun r;
    memset(&r, 0, sizeof r);
    str_copy(r.name, sizeof r.name, fr->name);
    r.seed = seed;
    snprintf(r.id, sizeof r.id, "%s_s%llu", fr->name, seed);
    snprintf(r.out_name, sizeof r.out_name, "%s.h5", r.id);
    str_copy(r.preset, sizeof r.preset, preset);
    snprintf(r.where, sizeof r.where, "%s:%d", c->path, fr->line);
    /* eval_lengths belongs to the runs of the file that sets it, never to
     * a parent's or an include's runs */
    str_copy(r.eval_lengths, sizeof r.eval_lengths, c->eval_lengths);
    str_copy(r.intervene, sizeof r.intervene, c->intervene);
    str_copy(r.eval_quant, sizeof r.eval_quant, c->eval_quant);
    r.eval_quant_keep_first = c->quant_keep;
    r.eval_quant_source = c->quant_source;
    r.eval_needle = c->eval_needle;
    char kv[64];
    int bad = 0;
    for (int i = 0; i < c->n_sets; i++) bad |= push_str(&r.sets, &r.n_sets, c->sets[i]);
    for (int i = 0; i < fr->n_keys; i++) bad |= push_str(&r.sets, &r.n_sets, fr->keys[i]);
    snprintf(kv, sizeof kv, "init_seed=%llu", seed);
    bad |= push_str(&r.sets, &r.n_sets, kv);
    snprintf(kv, sizeof kv, "data_seed=%llu", seed);
    bad |= push_str(&r.sets, &r.n_sets, kv);
    if (bad) {
        run_free(&r);
        return fail(c, fr->line, "out of memory", NULL, NULL), -1;
    }
    ENTRY want = {r.id, NULL}, *found = NULL;
    hsearch_r(want, FIND, &found, &chain->ids);
    if (found) {
        int i = (int)(intptr_t)found->data - 1;
        int same = same_settings(&sw->runs[i], &r);
        const char *other = sw->runs[i].where;
        /* trained once, evaluated if any defining file asks */
        if (same && !sw->runs[i].eval_lengths[0])
            str_copy(sw->runs[i].eval_lengths, sizeof sw->runs[i].eval_lengths, r.eval_lengths);
        if (same && !sw->runs[i].intervene[0])
            str_copy(sw->runs[i].intervene, sizeof sw->runs[i].intervene, r.intervene);
        if (same && !sw->runs[i].eval_quant[0]) { /* the eval with its options */
            str_copy(sw->runs[i].eval_quant, sizeof sw->runs[i].eval_quant, r.eval_quant);
            sw->runs[i].eval_quant_keep_first = r.eval_quant_keep_first;
            sw->runs[i].eval_quant_source = r.eval_quant_source;
        }
        if (same) sw->runs[i].eval_needle |= r.eval_needle;
        run_free(&r);
        if (same) return 0;
        return fail(c, fr->line,
                    "run '%s' is also defined at %s with other "
                    "settings",
                    fr->name, other),
               -1;
    }
    char *key = grow_runs(c, chain, sw, fr->line) == 0 ? strdup(r.id) : NULL;
    ENTRY e = {key, (void *)(intptr_t)(sw->n_runs + 1)};
    if (!key || !hsearch_r(e, ENTER, &found, &chain->ids)) {
        free(key);
        run_free(&r);
        return fail(c, fr->line, "out of memory", NULL, NULL), -1;
    }
    chain->keys[sw->n_runs] = key;
    sw->runs[sw->n_runs++] = r;
    return 0;
}

static int parse_file(const char *path, Chain *chain, Sweep *sw, char *err, size_t errlen);

static int already_read(const Chain *chain, const char *real) {
    for (int k = 0; k < chain->n_seen; k++)
        if (!strcmp(chain->seen[k], real)) return 1;
    return 0;
}

static int expand(FileCtx *c, Chain *chain, Sweep *sw) {
    if (c->n_runs > 0) {
        if (!c->preset_line)
            return fail(c, c->runs[0].line,
                        "no preset = in [sweep] for the "
                        "runs of this file",
                        NULL, NULL),
                   -1;
        char preset[SWEEP_PATH_MAX];
        if (resolve_preset(c, preset, sizeof preset)) return -1;
        if (!c->n_seeds) c->seeds[c->n_seeds++] = 1; /* default seed */
        for (int i = 0; i < c->n_runs; i++)
            for (int s = 0; s < c->n_seeds; s++)
                if (add_run(c, chain, sw, &c->runs[i], preset, c->seeds[s])) return -1;
    }
    for (int i = 0; i < c->n_incs; i++) {
        char p[SWEEP_PATH_MAX], real[PATH_MAX];
        const Include *in = &c->incs[i];
        if (join_rel(p, sizeof p, c->path, in->path))
            return fail(c, in->line, "include path too long: %s", in->path, NULL), -1;
        if (!realpath(p, real))
            return fail(c, in->line, "include '%s': cannot open %s", in->path, p), -1;
        for (int k = 0; k < chain->n; k++)
            if (!strcmp(chain->paths[k], real))
                return fail(c, in->line,
                            "include loop: %s is already being "
                            "read (via %s)",
                            p, c->path),
                       -1;
        if (already_read(chain, real)) continue; /* its runs are in the sweep */
        if (parse_file(p, chain, sw, c->err, c->errlen)) {
            c->failed = 1;
            return -1;
        }
    }
    return 0;
}

static int parse_file(const char *path, Chain *chain, Sweep *sw, char *err, size_t errlen) {
    char real[PATH_MAX];
    FileCtx c;
    memset(&c, 0, sizeof c);
    c.path = path;
    c.err = err;
    c.errlen = errlen;
    char why[PATH_MAX + 64];
    if (!realpath(path, real))
        return seterr(err, errlen, "%s:0: cannot open sweep file: %s", path, strerror(errno));
    if (input_check(path, why, sizeof why))
        return seterr(err, errlen, "%s:0: sweep file %s", path, why);
    if (chain->n == (int)(sizeof chain->paths / sizeof chain->paths[0]))
        return seterr(err, errlen, "%s:0: includes nested too deep (over %d levels)", path,
                      (int)(sizeof chain->paths / sizeof chain->paths[0]));
    if (chain->n_seen == MAX_FILES || !(chain->seen[chain->n_seen] = strdup(real)))
        return seterr(err, errlen, "%s:0: the sweep includes more than %d files", path, MAX_FILES);
    chain->n_seen++;
    chain->paths[chain->n++] = real;
    IniHandlers h = {on_key, on_section, &c};
    if (ini_read(path, NULL, &h, err, errlen) != 0) c.failed = 1; /* err says where */
    if (!c.failed && c.eval_needle && !c.eval_lengths[0])
        fail(&c, c.eval_needle_line,
             "eval_needle = 1 needs eval_lengths in the same [sweep] (the lengths it is scored at)",
             NULL, NULL);
    for (int k = 0; k < 2 && !c.failed && !c.eval_quant[0]; k++)
        if (k ? c.quant_source_line : c.quant_keep_line)
            fail(&c, k ? c.quant_source_line : c.quant_keep_line,
                 "%s needs eval_quant in the same [sweep] (the modes it applies to)",
                 k ? "eval_quant_source" : "eval_quant_keep_first", NULL);
    if (!c.failed && c.quant_source == 1 && !c.quant_per_tensor)
        fail(&c, c.quant_source_line,
             "eval_quant_source = 1 finds a per-tensor mode's damage source; put " FQ_NAME_W8A8
             ", " FQ_NAME_W8A8_PCT " or " FQ_NAME_W4A4 " in eval_quant",
             NULL, NULL);
    if (!c.failed && c.second_line && !c.primary_line)
        fail(&c, c.second_line, "[secondary] needs a [primary] beside it", NULL, NULL);
    for (int k = 0; k < 2 && !c.failed; k++) {
        Protocol *p = k ? &c.proto2 : &c.proto;
        int line = k ? c.second_line : c.primary_line;
        if (line && !protocol_has_tests(p))
            fail(&c, line,
                 k ? "[secondary] needs at least one metric and one compare or interaction"
                   : "[primary] needs at least one metric and one compare",
                 NULL, NULL);
        else if (line && protocol_check(p, why, sizeof why) != 0)
            c.failed = 1, seterr(err, errlen, "%s:%s", path, why);
    }
    if (!c.failed && chain->n == 1 && c.primary) { /* the top-level file's counts */
        sw->protocol = sweep_join_families(c.primary, c.second);
        if (!sw->protocol) fail(&c, c.primary_line, "out of memory", NULL, NULL);
    }
    int ret = c.failed ? -1 : expand(&c, chain, sw);
    if (ret == 0 && chain->n == 1) ret = sweep_protocol_arms(&c.proto, sw, path, err, errlen);
    if (ret == 0 && chain->n == 1) ret = sweep_protocol_arms(&c.proto2, sw, path, err, errlen);
    chain->n--;
    ctx_free(&c);
    return ret;
}

static void chain_free(Chain *chain, int n_keys) {
    hdestroy_r(&chain->ids);
    for (int i = 0; i < n_keys; i++) free(chain->keys[i]);
    free(chain->keys);
    for (int i = 0; i < chain->n_seen; i++) free(chain->seen[i]);
}

int sweep_parse(const char *path, Sweep *sw, char *err, size_t errlen) {
    memset(sw, 0, sizeof *sw);
    if (str_copy(sw->path, sizeof sw->path, path))
        return seterr(err, errlen, "%s:0: path too long", path);
    Chain chain;
    memset(&chain, 0, sizeof chain);
    if (!hcreate_r((size_t)SWEEP_MAX_RUNS * 2, &chain.ids))
        return seterr(err, errlen, "%s:0: out of memory", path);
    int rc = parse_file(path, &chain, sw, err, errlen);
    if (rc == 0 && sweep_note_files(sw, chain.seen, chain.n_seen))
        rc = seterr(err, errlen, "%s:0: out of memory", path);
    chain_free(&chain, sw->n_runs);
    if (rc) {
        sweep_free(sw);
        return -1;
    }
    for (int i = 0; i < sw->n_runs && !sw->eval_lengths[0]; i++)
        str_copy(sw->eval_lengths, sizeof sw->eval_lengths, sw->runs[i].eval_lengths);
    for (int i = 0; i < sw->n_runs && !sw->intervene[0]; i++)
        str_copy(sw->intervene, sizeof sw->intervene, sw->runs[i].intervene);
    for (int i = 0; i < sw->n_runs && !sw->eval_quant[0]; i++)
        str_copy(sw->eval_quant, sizeof sw->eval_quant, sw->runs[i].eval_quant);
    if (sw->n_runs == 0) {
        seterr(err, errlen,
               "%s:1: sweep has no runs ([run NAME] sections or "
               "include =)",
               path);
        sweep_free(sw);
        return -1;
    }
    return 0;
}

void sweep_free(Sweep *sw) {
    for (int i = 0; i < sw->n_files; i++) free(sw->files[i]);
    free(sw->files);
    sw->files = NULL;
    sw->n_files = 0;
    free(sw->protocol);
    sw->protocol = NULL;
    for (int i = 0; i < sw->n_runs; i++) run_free(&sw->runs[i]);
    free(sw->runs);
    sw->runs = NULL;
    sw->n_runs = 0;
}
