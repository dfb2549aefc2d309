/* opts.c: option tables, their parser and their --help (opts.h). */
#include "opts.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

const char opt_special[1];

/* The row every table ends with, implicitly. */
static const OptRow help_row = {'h', "help", OPT_FLAG, NULL, 0, 0, NULL, "this help", 0, 0, NULL};

/* Row i of t, counting the implicit --help after the table's own rows;
 * NULL past the end. */
static const OptRow *row_at(const OptTable *t, int i) {
    int n = 0;
    while (t->rows[n].name) n++;
    if (i < n) return &t->rows[i];
    return i == n ? &help_row : NULL;
}

int parse_ll_range(const char *s, long long lo, long long hi, long long *out) {
    if (!s || !*s || isspace((unsigned char)*s)) return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

void *opt_target(const OptTable *t, const OptRow *r, void *opts) {
    if (!r->var || r->var == OPT_SPECIAL || !t->defaults) return NULL;
    return (char *)opts + ((const char *)r->var - (const char *)t->defaults);
}

/* A table's rows are a program's text: each row with a target in the
 * table's defaults (an OPT_INT's bounds within int's) or OPT_SPECIAL, or
 * the program stops here, before any option is read. */
static void check_rows(const OptTable *t) {
    const char *d = t->defaults;
    for (const OptRow *r = t->rows; r->name; r++) {
        const char *v = r->var;
        int ok = v == OPT_SPECIAL || (d && v >= d && v < d + t->size);
        if (ok && v != OPT_SPECIAL && r->type == OPT_INT) ok = r->lo >= INT_MIN && r->hi <= INT_MAX;
        if (!ok) {
            fprintf(stderr, "gatelab %s: option --%s has no target and is not OPT_SPECIAL\n",
                    t->cmd, r->name);
            abort();
        }
    }
}

void opt_init(OptParser *p, const OptTable *t, int argc, char **argv) {
    check_rows(t);
    memset(p, 0, sizeof *p);
    p->t = t;
    p->argc = argc;
    p->argv = argv;
    char *s = p->shortopts;
    *s++ = ':'; /* a missing value comes back as ':' */
    const OptRow *r;
    for (int i = 0; i < OPT_MAX && (r = row_at(t, i)); i++) {
        int has = r->type == OPT_FLAG     ? no_argument
                  : r->type == OPT_OPTSTR ? optional_argument
                                          : required_argument;
        p->lo[i] = (struct option){r->name, has, NULL, r->key};
        if (r->key > 0 && r->key < 128) {
            *s++ = (char)r->key;
            if (has == required_argument) *s++ = ':';
        }
    }
    *s = 0;
    optind = 0; /* glibc: a full re-init, so a command can parse twice */
    opterr = 0;
}

/* The word getopt_long just refused: "--name" (up to '=') or "-x". */
static void bad_word(const OptParser *p, char *w, size_t n) {
    const char *a = optind > 0 && optind - 1 < p->argc ? p->argv[optind - 1] : "";
    if (optopt > 0 && optopt < 128 && a[0] == '-' && a[1] != '-') snprintf(w, n, "-%c", optopt);
    else snprintf(w, n, "%.*s", (int)strcspn(a, "="), a);
}

/* The long name of t nearest to the mistyped long option word ("--name"),
 * or NULL when none is near: at most a third of its letters wrong (one at
 * least). */
static const char *nearest(const OptTable *t, const char *word) {
    if (strncmp(word, "--", 2)) return NULL; /* a short option: no hint */
    word += 2;
    const char *best = NULL;
    size_t best_d = strlen(word) / 3 > 0 ? strlen(word) / 3 : 1;
    const OptRow *r;
    for (int i = 0; (r = row_at(t, i)); i++) {
        size_t d = str_edits(word, r->name);
        if (d <= best_d && (!best || d < best_d)) best = r->name, best_d = d;
    }
    return best;
}

int opt_next(OptParser *p) {
    const char *cmd = p->t->cmd;
    int li = -1;
    int c = getopt_long(p->argc, p->argv, p->shortopts, p->lo, &li);
    p->optind = optind;
    p->str = optarg;
    p->num = 0;
    if (c == -1) return OPT_END;
    char w[80];
    if (c == '?' || c == ':') {
        bad_word(p, w, sizeof w);
        const char *near = c == '?' ? nearest(p->t, w) : NULL;
        if (c == ':')
            fprintf(stderr, "gatelab %s: option '%s' needs a value (try gatelab %s --help)\n", cmd,
                    w, cmd);
        else if (near)
            fprintf(stderr, "gatelab %s: unknown option '%s' (did you mean --%s?)\n", cmd, w, near);
        else
            fprintf(stderr, "gatelab %s: unknown option '%s' (try gatelab %s --help)\n", cmd, w,
                    cmd);
        return OPT_BAD;
    }
    const OptRow *r = NULL;
    int i = li;
    if (i < 0)
        for (i = 0; (r = row_at(p->t, i)) && r->key != c; i++) {}
    r = row_at(p->t, i);
    if (!r) return OPT_BAD; /* not reached: getopt returns only the table's keys */
    p->name = r->name;
    if (p->seen[i]++ && !r->repeat) {
        fprintf(stderr, "gatelab %s: option '--%s' given twice (try gatelab %s --help)\n", cmd,
                r->name, cmd);
        return OPT_BAD;
    }
    if (r == &help_row) {
        opt_help(p->t, stdout);
        return OPT_HELP;
    }
    if ((r->type == OPT_INT || r->type == OPT_LL) &&
        parse_ll_range(optarg, r->lo, r->hi, &p->num) != 0) {
        char v[48];
        snprintf(v, sizeof v, "%.40s", optarg);
        fprintf(stderr, "gatelab %s: --%s wants an integer in %lld..%lld, got '%s'\n", cmd, r->name,
                r->lo, r->hi, one_line(v));
        return OPT_BAD;
    }
    return c;
}

/* Store the value opt_next just read for row r into its target t. */
static void store(const OptRow *r, void *t, const OptParser *p) {
    switch (r->type) {
    case OPT_FLAG: *(int *)t = 1; break;
    case OPT_INT: *(int *)t = (int)p->num; break;
    case OPT_LL: *(long long *)t = p->num; break;
    case OPT_STR: *(const char **)t = p->str; break;
    case OPT_OPTSTR: *(const char **)t = p->str ? p->str : ""; break;
    }
}

int opt_parse(OptParser *p, void *opts) {
    for (;;) {
        int c = opt_next(p);
        if (c < 0) return c;
        const OptRow *r = opt_find(p->t, p->name, strlen(p->name));
        void *t = opt_target(p->t, r, opts);
        if (!t) return c;
        store(r, t, p);
    }
}

int opt_parse_all(const OptTable *t, void *opts, int argc, char **argv) {
    memcpy(opts, t->defaults, t->size);
    OptParser p;
    opt_init(&p, t, argc, argv);
    int c = opt_parse(&p, opts);
    if (c >= 0) { /* not reached: check_rows and the test hold every row */
        fprintf(stderr, "gatelab %s: --%s is OPT_SPECIAL but parsed whole\n", t->cmd, p.name);
        return OPT_BAD;
    }
    return c == OPT_END ? p.optind : c;
}

int opt_given(const OptParser *p, int key) {
    const OptRow *r;
    for (int i = 0; (r = row_at(p->t, i)); i++)
        if (r->key == key) return p->seen[i] > 0;
    return 0;
}

int opt_exit(int c) { return c == OPT_HELP ? 0 : 2; }

/* Row r's default as --help shows it: its def, else its target's initial
 * value in t->defaults (none for a flag or a NULL string); NULL for none. */
static const char *default_text(const OptTable *t, const OptRow *r, char *buf, size_t n) {
    if (r->def) return *r->def ? r->def : NULL;
    const void *v = opt_target(t, r, (void *)t->defaults);
    if (!v) return NULL;
    switch (r->type) {
    case OPT_INT: snprintf(buf, n, "%d", *(const int *)v); return buf;
    case OPT_LL: snprintf(buf, n, "%lld", *(const long long *)v); return buf;
    case OPT_STR:
    case OPT_OPTSTR: return *(const char *const *)v;
    default: return NULL;
    }
}

/* "  -c, --config FILE" (or "      --only K") into s[n]; its length. */
static int left_column(const OptRow *r, char *s, size_t n) {
    char letter[8] = "    ";
    if (r->key > 0 && r->key < 128) snprintf(letter, sizeof letter, "-%c, ", r->key);
    const char *arg = r->arg ? r->arg : "";
    if (r->type == OPT_OPTSTR) return snprintf(s, n, "  %s--%s[=%s]", letter, r->name, arg);
    return snprintf(s, n, "  %s--%s%s%s", letter, r->name, *arg ? " " : "", arg);
}

const OptRow *opt_find(const OptTable *t, const char *name, size_t n) {
    const OptRow *r;
    for (int i = 0; (r = row_at(t, i)); i++)
        if (strlen(r->name) == n && !strncmp(r->name, name, n)) return r;
    return NULL;
}

void opt_help(const OptTable *t, FILE *f) {
    fprintf(f, "usage: gatelab %s", t->cmd);
    const OptRow *r;
    for (int i = 0; (r = row_at(t, i)); i++)
        if (r->in_usage) fprintf(f, " --%s%s%s", r->name, r->arg ? " " : "", r->arg ? r->arg : "");
    fprintf(f, "%s%s\n", t->operands && *t->operands ? " " : "", t->operands ? t->operands : "");
    if (t->about) fprintf(f, "\n%s", t->about);
    if (t->more) t->more(f);
    int width = 0;
    char col[96];
    for (int i = 0; (r = row_at(t, i)); i++) {
        int w = left_column(r, col, sizeof col);
        if (w > width && w <= 26) width = w;
    }
    fputc('\n', f);
    for (int i = 0; (r = row_at(t, i)); i++) {
        int w = left_column(r, col, sizeof col);
        /* a column too wide for the others: its help starts on the next line */
        if (w > width) fprintf(f, "%s\n%*s", col, width + 2, "");
        else fprintf(f, "%-*s", width + 2, col);
        for (const char *h = r->help; *h;) {
            size_t k = strcspn(h, "\n");
            fprintf(f, "%.*s", (int)k, h);
            h += k;
            if (*h) fprintf(f, "\n%*s", width + 2, ""), h++;
        }
        /* a help ending in a newline puts the default on a line of its own */
        size_t hl = strlen(r->help);
        char buf[32];
        const char *def = default_text(t, r, buf, sizeof buf);
        if (def) fprintf(f, "%s(default: %s)", hl && r->help[hl - 1] == '\n' ? "" : " ", def);
        fputc('\n', f);
    }
    if (t->footer) fprintf(f, "\n%s", t->footer);
}
