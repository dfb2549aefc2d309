/* protocol_pin.c: see protocol_pin.h. */
#include "protocol_pin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatelab_build.h"
#include "gatelab_version.h"
#include "inifile.h"

void pin_rules(char *out, size_t n) {
    snprintf(out, n, "%s, alpha %g", PIN_RULES_VERSION, CONFIRM_ALPHA);
}

const char *pin_build(void) { return GATELAB_VERSION " (git " GATELAB_DESCRIBE ")"; }

/* text + "key = value\n" (realloc'd); -1 when memory runs out. */
static int append_line(char **text, const char *key, const char *value) {
    size_t old = *text ? strlen(*text) : 0, add = strlen(key) + strlen(value) + 5;
    char *n = realloc(*text, old + add);
    if (!n) return -1;
    snprintf(n + old, add, "%s = %s\n", key, value);
    *text = n;
    return 0;
}

/* A line of the protocol's families: [primary]'s as "key = value",
 * [secondary]'s as "secondary.key = value", so that a line moved between
 * the two families is a difference. */
static int primary_key(void *user, const IniLine *l, char *why, size_t whylen) {
    int sec = !strcmp(l->section, "secondary");
    if (!sec && strcmp(l->section, "primary")) return 0;
    char key[128];
    snprintf(key, sizeof key, "%s%s", sec ? "secondary." : "", l->key);
    return append_line(user, key, l->value) ? seterr(why, whylen, "out of memory") : 0;
}

char *pin_primary(const char *name, const char *text, char *err, size_t errlen) {
    char *out = NULL;
    IniHandlers h = {primary_key, NULL, &out};
    if (ini_read(name, text, &h, err, errlen) != 0) {
        free(out);
        return NULL;
    }
    return out ? out : calloc(1, 1);
}

/* "0" or "1" into *out; -1 for anything else. */
static int flag_of(const char *v, int *out) {
    if (strcmp(v, "0") && strcmp(v, "1")) return -1;
    *out = v[0] == '1';
    return 0;
}

/* `file = COMMIT HASH REL` */
static int pin_file(ProtocolPin *p, const char *v, char *why, size_t whylen) {
    PinFile f;
    int at = 0;
    if (sscanf(v, "%63s %24s %n", f.commit, f.hash, &at) != 2 || !at || !v[at] ||
        str_copy(f.rel, sizeof f.rel, v + at))
        return seterr(why, whylen, "file '%s' is not 'COMMIT HASH PATH'", v);
    PinFile *n = realloc(p->files, (size_t)(p->n_files + 1) * sizeof *n);
    if (!n) return seterr(why, whylen, "out of memory");
    p->files = n;
    p->files[p->n_files++] = f;
    return 0;
}

/* `run = NAME SEED SEED ...` */
static int pin_runs(ProtocolPin *p, const char *v, char *why, size_t whylen) {
    char name[96];
    int at = 0;
    if (sscanf(v, "%95s %n", name, &at) != 1 || !at)
        return seterr(why, whylen, "run '%s' is not 'NAME SEED ...'", v);
    for (const char *s = v + at; *s;) {
        char *end;
        unsigned long long seed = strtoull(s, &end, 10);
        if (end == s) return seterr(why, whylen, "run '%s': '%s' is not a seed", v, s);
        PinRun *n = realloc(p->runs, (size_t)(p->n_runs + 1) * sizeof *n);
        if (!n) return seterr(why, whylen, "out of memory");
        p->runs = n;
        str_copy(p->runs[p->n_runs].name, sizeof p->runs[p->n_runs].name, name);
        p->runs[p->n_runs++].seed = seed;
        for (s = end; *s == ' '; s++) {}
    }
    return 0;
}

/* l's value into dst[n]; -1 with a reason when it does not fit. */
static int copy_value(char *dst, size_t n, const IniLine *l, char *why, size_t whylen) {
    return str_copy(dst, n, l->value) ? seterr(why, whylen, "%s too long", l->key) : 0;
}

static int source_key(ProtocolPin *p, const IniLine *l, char *why, size_t whylen) {
    const char *k = l->key, *v = l->value;
    if (!strcmp(k, "sweep_file"))
        return copy_value(p->sweep_file, sizeof p->sweep_file, l, why, whylen);
    if (!strcmp(k, "sweep_commit"))
        return copy_value(p->sweep_commit, sizeof p->sweep_commit, l, why, whylen);
    if (!strcmp(k, "sweep_dirty") && !flag_of(v, &p->sweep_dirty)) return 0;
    if (!strcmp(k, "uncommitted") && !flag_of(v, &p->uncommitted)) return 0;
    return seterr(why, whylen, "[source] %s = %s is not what gatelab sweep writes", k, v);
}

static int on_key(void *user, const IniLine *l, char *why, size_t whylen) {
    ProtocolPin *p = user;
    const char *k = l->key, *v = l->value;
    if (!strcmp(l->section, "source")) return source_key(p, l, why, whylen);
    if (!strcmp(l->section, "runs")) {
        p->has_runs = 1;
        if (strcmp(k, "run")) return seterr(why, whylen, "unknown key '%s' in [runs] (run)", k);
        return pin_runs(p, v, why, whylen);
    }
    if (strcmp(l->section, "pin")) return 0;
    p->has_pin = 1;
    if (!strcmp(k, "file")) return pin_file(p, v, why, whylen);
    if (!strcmp(k, "repo")) return copy_value(p->repo, sizeof p->repo, l, why, whylen);
    if (!strcmp(k, "unchecked"))
        return copy_value(p->unchecked, sizeof p->unchecked, l, why, whylen);
    if (!strcmp(k, "gatelab")) return copy_value(p->gatelab, sizeof p->gatelab, l, why, whylen);
    if (!strcmp(k, "rules")) return copy_value(p->rules, sizeof p->rules, l, why, whylen);
    if (!strcmp(k, "training")) return copy_value(p->training, sizeof p->training, l, why, whylen);
    return seterr(why, whylen,
                  "unknown key '%s' in [pin] (repo, unchecked, file, gatelab, training, rules)", k);
}

int pin_read(const char *path, const char *text, ProtocolPin *p, char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    str_copy(p->sweep_file, sizeof p->sweep_file, "unknown");
    str_copy(p->sweep_commit, sizeof p->sweep_commit, "unknown");
    p->sweep_dirty = p->uncommitted = -1;
    char *own = NULL;
    if (!text) {
        size_t len;
        if (!(own = input_slurp(path, 1 << 20, &len, err, errlen))) return -1;
        text = own;
    }
    IniHandlers h = {on_key, NULL, p};
    int rc = ini_read(path, text, &h, err, errlen);
    if (rc == 0 && !(p->primary = pin_primary(path, text, err, errlen))) rc = -1;
    free(own);
    if (rc != 0) pin_free(p);
    return rc;
}

void pin_free(ProtocolPin *p) {
    free(p->files);
    free(p->runs);
    free(p->primary);
    p->files = NULL;
    p->runs = NULL;
    p->primary = NULL;
    p->n_files = p->n_runs = 0;
}
