/* prompt.c: one prompt through a run's model (prompt.h). */
#include "prompt.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h" /* parse_ll_range */
#include "runfile_read.h"
#include "util.h"

int prompt_run(Forward *f, const int *ids, int T, long long step, const char *what, PromptResult *r,
               char *err, size_t errlen) {
    const ForwardInfo *fi = &f->info;
    memset(r, 0, sizeof *r);
    if (T < PROMPT_MIN_TOKENS)
        return seterr(err, errlen,
                      "%s: %s gives %d token%s; a prompt needs at least %d (the first-token "
                      "share reads the queries after position 0)",
                      f->run, what, T, T == 1 ? "" : "s", PROMPT_MIN_TOKENS);
    for (int t = 0; t < T; t++)
        if (ids[t] < 0 || ids[t] >= fi->V)
            return seterr(err, errlen,
                          "%s: %s: token id %d (position %d) is outside the model's vocabulary "
                          "of %d",
                          f->run, what, ids[t], t, fi->V);
    if (fi->max_len > 0 && T > fi->max_len)
        return seterr(err, errlen,
                      "%s: %s gives %d tokens, more than the model's %d positions (%s%s); give "
                      "a shorter prompt",
                      f->run, what, T, fi->max_len, fi->positions,
                      fi->learned_pos ? ", which cannot extrapolate" : "");
    r->over_train = !fi->checkpoint && T > fi->seq_len;
    int *tg = malloc((size_t)T * sizeof *tg);
    if (!tg) return seterr(err, errlen, "out of memory for the prompt's targets");
    for (int t = 0; t < T; t++) tg[t] = t + 1 < T ? ids[t + 1] : -1;
    int rc = forward_check_memory(f, 1, T, T, 1, f->run, err, errlen);
    if (rc == 0) rc = f->ops->prepare(f, 1, T, 1.0, err, errlen);
    ForwardProbeIn in = {.tokens = ids, .targets = tg, .N = 1, .T = T, .M = T, .step = step};
    if (rc == 0) rc = f->ops->probe(f, &in, &r->probe, &r->loss, &r->loss_n, err, errlen);
    free(tg);
    return rc;
}

void prompt_free(PromptResult *r) {
    if (r) runread_probe_free(&r->probe);
}

int prompt_parse_ids(const char *s, int **ids, int *n, char *err, size_t errlen) {
    *ids = NULL, *n = 0;
    if (!s || !*s) return seterr(err, errlen, "--tokens: empty list");
    size_t cap = 1;
    for (const char *q = s; *q; q++) cap += *q == ',';
    if (!(*ids = malloc(cap * sizeof **ids))) return seterr(err, errlen, "out of memory");
    for (const char *q = s;;) {
        const char *end = strchr(q, ',');
        int len = end ? (int)(end - q) : (int)strlen(q);
        char buf[32];
        long long v;
        snprintf(buf, sizeof buf, "%.*s", len < 31 ? len : 31, q);
        if (len == 0 || len > 30 || parse_ll_range(buf, 0, 2147483647LL, &v) != 0) {
            free(*ids), *ids = NULL, *n = 0;
            if (len == 0)
                return seterr(err, errlen,
                              "--tokens: an empty entry in '%.200s' (ids are ID,ID,...)", s);
            return seterr(err, errlen, "--tokens: '%.*s' is not a token id (an integer >= 0)",
                          len > 40 ? 40 : len, q);
        }
        (*ids)[(*n)++] = (int)v;
        if (!end) break;
        q = end + 1;
    }
    return 0;
}

/* Length of the UTF-8 sequence at s[0..n) (2..4), or 0 when it is none. */
static int utf8_seq(const unsigned char *s, size_t n) {
    int k = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (!k || s[0] >= 0xf5 || (size_t)k > n) return 0;
    for (int i = 1; i < k; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    if (k == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))) return 0;
    if (k == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))) return 0;
    return k;
}

/* One byte or UTF-8 character of a label at raw[0..n): its shown form
 * into piece, its width in characters into *w; the bytes it takes. */
static int label_piece(const unsigned char *raw, int n, char piece[8], int *w) {
    int k = utf8_seq(raw, (size_t)n);
    unsigned char c = raw[0];
    *w = 1;
    if (k) {
        memcpy(piece, raw, (size_t)k), piece[k] = '\0';
        return k;
    }
    if (c == ' ') snprintf(piece, 8, "\xe2\x90\xa3");
    else if (c == '\n') snprintf(piece, 8, "\\n");
    else if (c == '\t') snprintf(piece, 8, "\\t");
    else if (c == '\r') snprintf(piece, 8, "\\r");
    else if (c < 0x20 || c >= 0x7f) snprintf(piece, 8, "\\x%02x", c);
    else piece[0] = (char)c, piece[1] = '\0';
    if (piece[0] == '\\') *w = (int)strlen(piece);
    return 1;
}

void prompt_label(Forward *f, int id, int width, char *out, size_t len) {
    unsigned char raw[PROMPT_LABEL_MAX];
    int n = f->ops->piece ? f->ops->piece(f, id, (char *)raw, sizeof raw) : -1;
    if (!len) return;
    out[0] = '\0';
    if (n <= 0) {
        snprintf(out, len, "#%d", id);
        return;
    }
    int total = 0, w;
    char piece[8];
    for (int i = 0; i < n;) {
        i += label_piece(raw + i, n - i, piece, &w);
        total += w;
    }
    /* a label past width keeps width - 1 characters and an ellipsis */
    const int cut = width > 0 && total > width, room = cut ? width - 1 : total;
    size_t at = 0;
    for (int i = 0, chars = 0; i < n;) {
        int step = label_piece(raw + i, n - i, piece, &w);
        size_t pl = strlen(piece);
        if (chars + w > room || at + pl + 4 > len) break;
        memcpy(out + at, piece, pl), at += pl, chars += w, i += step;
    }
    if (cut && at + 4 <= len) memcpy(out + at, "\xe2\x80\xa6", 3), at += 3;
    out[at] = '\0';
}

void prompt_default_name(const char *text, const int *ids, int n, char *out, size_t len) {
    size_t at = 0;
    int dash = 0;
    for (const char *q = text ? text : ""; *q && at < 32 && at + 1 < len; q++) {
        unsigned char c = (unsigned char)*q;
        if (c < 0x80 && isalnum(c)) {
            if (dash && at) out[at++] = '-';
            if (at + 1 < len) out[at++] = (char)tolower(c);
            dash = 0;
        } else dash = 1;
    }
    out[at] = '\0';
    if (at) return;
    at = (size_t)snprintf(out, len, "tokens");
    for (int i = 0; i < n && i < 6 && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "-%d", ids[i]);
}

int prompt_check_name(const char *name, char *err, size_t errlen) {
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n >= PROMPT_NAME_MAX ||
        strspn(name, "abcdefghijklmnopqrstuvwxyz"
                     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != n ||
        !strcmp(name, ".") || !strcmp(name, ".."))
        return seterr(err, errlen,
                      "--name '%.80s': a prompt's name is 1 to %d characters of letters, digits, "
                      "'.', '_' and '-' (not . or ..)",
                      name ? name : "", PROMPT_NAME_MAX - 1);
    return 0;
}
