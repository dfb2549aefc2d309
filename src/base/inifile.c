/* inifile.c: the one INI reader (inifile.h), inih over a counted reader. */
#define _POSIX_C_SOURCE 200809L
#include "inifile.h"

#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

typedef struct {
    const IniHandlers *h;
    const char *path;
    FILE *f;       /* file source, or */
    const char *s; /* string source */
    char *buf;     /* getline's line */
    size_t cap;
    int line;
    int failed; /* msg holds the first error, at fail_line */
    int fail_line;
    char msg[1200];
} Ctx;

/* The first error wins; always returns 0 (inih: stop). */
static int fail(Ctx *c, int line, const char *why) {
    if (!c->failed) snprintf(c->msg, sizeof c->msg, "%s:%d: %.900s", c->path, line, why);
    if (!c->failed) c->fail_line = line;
    c->failed = 1;
    return 0;
}

/* The next line into buf (getline's, or a copy from the string); its
 * length, -1 at the end. */
static long next_line(Ctx *c) {
    if (c->f) {
        ssize_t n = getline(&c->buf, &c->cap, c->f);
        return n < 0 ? -1 : (long)n;
    }
    if (!*c->s) return -1;
    size_t n = strcspn(c->s, "\n");
    if (c->s[n] == '\n') n++;
    if (n + 1 > c->cap) {
        char *b = realloc(c->buf, n + 1);
        if (!b) return -1;
        c->buf = b, c->cap = n + 1;
    }
    memcpy(c->buf, c->s, n);
    c->buf[n] = 0;
    c->s += n;
    return (long)n;
}

/* inih's fgets: one counted line per call, newline and CR stripped and
 * put back as one "\n", blanks in front dropped; a line too long stops the
 * read with its error. */
static char *reader(char *str, int num, void *stream) {
    Ctx *c = stream;
    if (c->failed) return NULL;
    long n = next_line(c);
    if (n < 0) return NULL;
    c->line++;
    char *s = c->buf;
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r')) s[--n] = 0;
    if (n > INI_LINE_MAX || n + 3 > num) {
        char why[64];
        snprintf(why, sizeof why, "line longer than %d characters", INI_LINE_MAX);
        fail(c, c->line, why);
        return NULL;
    }
    while (*s == ' ' || *s == '\t') s++;
    if (*s == '[' && c->h->on_section) {
        char name[INI_LINE_MAX + 1], why[900] = "";
        size_t k = strcspn(s + 1, "]");
        snprintf(name, sizeof name, "%.*s", (int)k, s + 1);
        IniLine l = {c->path, c->line, name, NULL, NULL};
        if (c->h->on_section(c->h->user, &l, why, sizeof why) != 0) {
            fail(c, c->line, why);
            return NULL;
        }
    }
    snprintf(str, (size_t)num, "%s\n", s);
    return str;
}

static int on_key(void *user, const char *section, const char *key, const char *value) {
    Ctx *c = user;
    if (c->failed) return 0;
    char why[900] = "";
    IniLine l = {c->path, c->line, section, key, value};
    if (c->h->on_key(c->h->user, &l, why, sizeof why) != 0) return fail(c, c->line, why);
    return 1;
}

int ini_read(const char *path, const char *text, const IniHandlers *h, char *err, size_t errlen) {
    Ctx c = {.h = h, .path = path, .s = text};
    if (!text && !(c.f = input_fopen(path, err, errlen))) return -1;
    int rc = ini_parse_stream(reader, &c, on_key, &c);
    if (c.f && ferror(c.f)) fail(&c, c.line, "read error");
    if (c.f) fclose(c.f);
    free(c.buf);
    if (rc > 0 && (!c.failed || rc < c.fail_line)) { /* inih's syntax error, if first */
        c.failed = 0;
        fail(&c, rc, "expected 'key = value' or a [section]");
    }
    if (c.failed) return seterr(err, errlen, "%s", c.msg);
    if (rc < 0) return seterr(err, errlen, "%s: out of memory", path);
    return 0;
}
