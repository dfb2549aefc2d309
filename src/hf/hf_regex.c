/* hf_regex.c: Oniguruma -> PCRE2 escape translation, compile, split. */
#include "hf_regex.h"
#include "env.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hf_utf8.h"
#include "util.h"

#define WORD_IN_CLASS "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}"
#define WORD_EXTRA "\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}"
/* pcre2 match limits: bound the work of one match on hostile patterns */
#define HF_MATCH_LIMIT 10000000u
#define HF_DEPTH_LIMIT 100000u

/* The replacement for escape letter c, in or outside a class; NULL: keep. */
static const char *escape_rewrite(char c, int in_class) {
    switch (c) {
    case 's': return "\\p{White_Space}";
    case 'S': return "\\P{White_Space}";
    case 'h': return in_class ? "0-9A-Fa-f" : "[0-9A-Fa-f]";
    case 'H': return in_class ? NULL : "[^0-9A-Fa-f]";
    case 'w': return in_class ? WORD_IN_CLASS : "[" WORD_IN_CLASS WORD_EXTRA "]";
    case 'W': return in_class ? NULL : "[^" WORD_IN_CLASS WORD_EXTRA "]";
    default: return NULL;
    }
}

/* Append s[n] to the growing buffer; -1 when out of memory. */
static int put(char **buf, size_t *len, size_t *cap, const char *s, size_t n) {
    if (*len + n + 1 > *cap) {
        size_t c = *cap * 2 + n + 64;
        char *b = realloc(*buf, c);
        if (!b) return -1;
        *buf = b;
        *cap = c;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = 0;
    return 0;
}

/* Class state: 0 outside, else inside [...] (POSIX [:x:] passes through). */
static size_t class_step(const char *p, size_t i, size_t len, int *in_class) {
    if (!*in_class) {
        if (p[i] != '[') return 0;
        *in_class = 1;
        size_t j = i + 1;
        if (j < len && p[j] == '^') ++j;
        if (j < len && p[j] == ']') ++j; /* a leading ] is literal */
        return j - i;
    }
    if (p[i] == '[' && i + 1 < len && p[i + 1] == ':') {
        const char *end = strstr(p + i + 2, ":]");
        if (end && (size_t)(end - p) < len) return (size_t)(end - p) + 2 - i;
    }
    if (p[i] == ']') *in_class = 0;
    return p[i] == ']' ? 1 : 0;
}

char *hf_regex_translate(const char *p, size_t len) {
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int in_class = 0, rc = put(&buf, &n, &cap, "", 0);
    for (size_t i = 0; i < len && rc == 0;) {
        if (p[i] == '\\' && i + 1 < len) {
            const char *r = escape_rewrite(p[i + 1], in_class);
            rc = r ? put(&buf, &n, &cap, r, strlen(r)) : put(&buf, &n, &cap, p + i, 2);
            i += 2;
            continue;
        }
        size_t k = class_step(p, i, len, &in_class);
        if (k == 0) k = 1;
        rc = put(&buf, &n, &cap, p + i, k);
        i += k;
    }
    if (rc < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int compile_error(int code, size_t off, const char *what, char *err, size_t errlen) {
    PCRE2_UCHAR msg[160];
    pcre2_get_error_message(code, msg, sizeof msg);
    return seterr(err, errlen, "%s does not compile with PCRE2: %s (at offset %zu)", what,
                  (const char *)msg, off);
}

int hf_regex_compile(pcre2_code **out, const char *pattern, size_t len, int literal,
                     const char *what, char *err, size_t errlen) {
    *out = NULL;
    if (!hf_utf8_valid(pattern, len)) return seterr(err, errlen, "%s is not valid UTF-8", what);
    char *pat = literal ? NULL : hf_regex_translate(pattern, len);
    if (!literal && !pat) return seterr(err, errlen, "out of memory translating %s", what);
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    if (!cc) {
        free(pat);
        return seterr(err, errlen, "out of memory compiling %s", what);
    }
    pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
    uint32_t opts = PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE | (literal ? PCRE2_LITERAL : 0);
    int code;
    PCRE2_SIZE off;
    *out = pcre2_compile((PCRE2_SPTR)(literal ? pattern : pat), literal ? len : strlen(pat), opts,
                         &code, &off, cc);
    pcre2_compile_context_free(cc);
    free(pat);
    if (!*out) return compile_error(code, (size_t)off, what, err, errlen);
    pcre2_jit_compile(*out, PCRE2_JIT_COMPLETE); /* optional: falls back to the interpreter */
    return 0;
}

pcre2_match_context *hf_regex_match_context(void) {
    pcre2_match_context *c = pcre2_match_context_create(NULL);
    if (c) {
        pcre2_set_match_limit(c, HF_MATCH_LIMIT);
        pcre2_set_depth_limit(c, HF_DEPTH_LIMIT);
    }
    return c;
}

/* The wall-clock bound on splitting one text with one regex: each match
 * is bounded by HF_MATCH_LIMIT, but a pattern that backtracks
 * catastrophically on every piece of a long text would still run for
 * minutes. GATELAB_TEST_SPLIT_SECONDS (the test suite's) lowers it. */
#define HF_SPLIT_SECONDS 60.0
#define HF_SPLIT_CHECK 64 /* matches between two looks at the clock */

static double split_budget(void) {
    const char *e = env_get("GATELAB_TEST_SPLIT_SECONDS");
    char *end;
    double v = e ? strtod(e, &end) : HF_SPLIT_SECONDS;
    return e && (end == e || *end || !(v >= 0)) ? HF_SPLIT_SECONDS : v;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int hf_regex_split(const pcre2_code *re, pcre2_match_data *md, pcre2_match_context *mc,
                   const char *s, size_t n, HfPieceFn fn, void *ctx, char *err, size_t errlen) {
    size_t prev = 0, start = 0, matches = 0;
    const double t0 = now_s(), budget = split_budget();
    while (start <= n) {
        if (++matches % HF_SPLIT_CHECK == 0 && now_s() - t0 > budget)
            return seterr(err, errlen,
                          "pre-tokenizer regex still splitting a %zu-byte text after %g s "
                          "(a pattern that backtracks catastrophically?); refusing it",
                          n, budget);
        int rc = pcre2_match(re, (PCRE2_SPTR)s, n, start, PCRE2_NO_UTF_CHECK, md, mc);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT) /* the interpreter keeps its stack on the heap */
            rc =
                pcre2_match(re, (PCRE2_SPTR)s, n, start, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md, mc);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            PCRE2_UCHAR msg[160];
            pcre2_get_error_message(rc, msg, sizeof msg);
            return seterr(err, errlen, "pre-tokenizer regex failed on the text: %s",
                          (const char *)msg);
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t a = ov[0], b = ov[1];
        if (a > b || b > n || a < start)
            return seterr(err, errlen, "pre-tokenizer regex gave a match outside the text (\\K?)");
        int r = 0;
        if (a > prev) r = fn(ctx, prev, a, 0);
        if (r == 0 && b > a) r = fn(ctx, a, b, 1);
        if (r) return r;
        prev = b;
        start = b > a ? b : b + (b < n ? hf_utf8_len((unsigned char)s[b]) : 1);
    }
    return prev < n ? fn(ctx, prev, n, 0) : 0;
}
