/* hf_tokenizer.c: encoding with a loaded tokenizer.json: added tokens,
 * normalizer, pre-tokenizer steps, BPE; and the small queries. */
#include "hf_tokenizer.h"

#include <stdlib.h>
#include <string.h>

#include "hf_normalize.h"
#include "hf_tokenizer_priv.h"
#include "hf_utf8.h"
#include "util.h"

#define MAX_TEXT (1u << 30)

/* The state of one encode call. */
typedef struct {
    const HfTokenizer *tok;
    HfIds out;
    size_t section_start; /* fuse_unk does not cross it */
    HfBpeScratch bpe;
    pcre2_match_data *md[HF_MAX_STEPS + 1]; /* per step; [n_steps] ByteLevel regex */
    HfSpan *spans[HF_MAX_STEPS];            /* per Split step: the spans of its text */
    size_t spans_cap[HF_MAX_STEPS];
    size_t n_spans; /* filled by on_split */
    char *prefixed; /* " " + piece for add_prefix_space */
    size_t prefixed_cap;
    char *err;
    size_t errlen;
} Enc;

/* Context of one regex split: the text it splits and the step after. */
typedef struct {
    Enc *e;
    const char *base;
    int step;
} Piece;

static int pretok(Enc *e, int step, const char *s, size_t n);

static int oom(Enc *e) { return seterr(e->err, e->errlen, "out of memory while tokenizing"); }

static int bpe_piece(Enc *e, const char *s, size_t n) {
    if (n == 0) return 0;
    if (n > INT32_MAX / 2)
        return seterr(e->err, e->errlen, "a pre-token of %zu bytes is too long", n);
    return hf_bpe_word(&e->tok->bpe, &e->bpe, s, n, &e->out, e->section_start) < 0 ? oom(e) : 0;
}

/* Split callback: the span is kept for the step's behaviour. */
static int on_split(void *ctx, size_t a, size_t b, int match) {
    Piece *p = ctx;
    Enc *e = p->e;
    const int k = p->step - 1;
    if (e->n_spans == e->spans_cap[k]) {
        size_t cap = e->spans_cap[k] ? 2 * e->spans_cap[k] : 64;
        HfSpan *v = realloc(e->spans[k], cap * sizeof *v);
        if (!v) return oom(e);
        e->spans[k] = v, e->spans_cap[k] = cap;
    }
    e->spans[k][e->n_spans++] = (HfSpan){a, b, match};
    return 0;
}

/* ByteLevel regex callback: only matches are kept (they cover the text). */
static int on_bytelevel(void *ctx, size_t a, size_t b, int match) {
    Piece *p = ctx;
    return match ? bpe_piece(p->e, p->base + a, b - a) : 0;
}

/* s[n] with a space in front, in e->prefixed. */
static const char *with_space(Enc *e, const char *s, size_t n) {
    if (n + 1 > e->prefixed_cap) {
        char *b = realloc(e->prefixed, n + 1);
        if (!b) return NULL;
        e->prefixed = b;
        e->prefixed_cap = n + 1;
    }
    e->prefixed[0] = ' ';
    memcpy(e->prefixed + 1, s, n);
    return e->prefixed;
}

static int bytelevel(Enc *e, const HfStep *st, const char *s, size_t n) {
    if (st->add_prefix_space && s[0] != ' ') {
        if (!(s = with_space(e, s, n))) return oom(e);
        ++n;
    }
    if (!st->use_regex) return bpe_piece(e, s, n);
    Piece p = {e, s, 0};
    const HfTokenizer *t = e->tok;
    return hf_regex_split(t->bytelevel_re, e->md[t->n_steps], t->mctx, s, n, on_bytelevel, &p,
                          e->err, e->errlen);
}

/* Pre-tokenize s[n] from step on; the pieces go to BPE. */
static int pretok(Enc *e, int step, const char *s, size_t n) {
    const HfStep *st = &e->tok->steps[step];
    if (n == 0) return 0;
    if (st->kind == HF_STEP_BYTELEVEL) return bytelevel(e, st, s, n);
    Piece p = {e, s, step + 1};
    e->n_spans = 0;
    int rc =
        hf_regex_split(st->re, e->md[step], e->tok->mctx, s, n, on_split, &p, e->err, e->errlen);
    if (rc != 0) return rc;
    HfSpan *v = e->spans[step];
    size_t k = hf_split_apply(v, e->n_spans, st->behavior, st->invert);
    for (size_t i = 0; i < k && rc == 0; ++i)
        rc = pretok(e, step + 1, s + v[i].start, v[i].end - v[i].start);
    return rc;
}

/* Text after normalization: split at the normalized added tokens. */
static int normalized_text(Enc *e, const char *s, size_t n) {
    const HfTokenizer *t = e->tok;
    HfSections secs = {0};
    int rc = hf_added_split(&t->added, &t->added.norm, s, n, &secs) < 0 ? oom(e) : 0;
    for (size_t i = 0; i < secs.n && rc == 0; ++i) {
        const HfSection *c = &secs.v[i];
        e->section_start = e->out.n;
        if (c->tok >= 0) rc = hf_ids_push(&e->out, t->added.toks[c->tok].id) < 0 ? oom(e) : 0;
        else rc = pretok(e, 0, s + c->start, c->end - c->start);
    }
    free(secs.v);
    return rc;
}

/* Plain text between raw added tokens: normalize, then on. */
static int plain_text(Enc *e, const char *s, size_t n) {
    const HfTokenizer *t = e->tok;
    if (n == 0) return 0;
    if (t->n_norm == 0) return normalized_text(e, s, n);
    char *cur = NULL;
    size_t len = n;
    for (int i = 0; i < t->n_norm; ++i) {
        char *next;
        int rc = hf_normalize(t->norm[i], cur ? cur : s, len, &next, &len, e->err, e->errlen);
        free(cur);
        if (rc < 0) return -1;
        cur = next;
    }
    int rc = normalized_text(e, cur, len);
    free(cur);
    return rc;
}

static int encode_text(Enc *e, const char *s, size_t n) {
    const HfTokenizer *t = e->tok;
    HfSections secs = {0};
    int rc = hf_added_split(&t->added, &t->added.raw, s, n, &secs) < 0 ? oom(e) : 0;
    for (size_t i = 0; i < secs.n && rc == 0; ++i) {
        const HfSection *c = &secs.v[i];
        if (c->tok >= 0) rc = hf_ids_push(&e->out, t->added.toks[c->tok].id) < 0 ? oom(e) : 0;
        else rc = plain_text(e, s + c->start, c->end - c->start);
    }
    free(secs.v);
    return rc;
}

static int enc_init(Enc *e, const HfTokenizer *t, char *err, size_t errlen) {
    memset(e, 0, sizeof *e);
    e->tok = t;
    e->err = err;
    e->errlen = errlen;
    for (int i = 0; i <= t->n_steps; ++i) {
        const pcre2_code *re = i < t->n_steps ? t->steps[i].re : t->bytelevel_re;
        if (re && !(e->md[i] = pcre2_match_data_create_from_pattern(re, NULL))) return oom(e);
    }
    return 0;
}

static void enc_free(Enc *e) {
    for (int i = 0; i <= HF_MAX_STEPS; ++i) pcre2_match_data_free(e->md[i]);
    hf_bpe_scratch_free(&e->bpe);
    for (int i = 0; i < HF_MAX_STEPS; ++i) free(e->spans[i]);
    free(e->prefixed);
}

int hf_tokenizer_encode(const HfTokenizer *tok, const char *text, size_t len, int add_bos,
                        int32_t **ids, size_t *n, char *err, size_t errlen) {
    Enc e;
    size_t sn;
    memset(&e, 0, sizeof e);
    *ids = NULL;
    *n = 0;
    if (add_bos && hf_tokenizer_bos_id(tok) < 0)
        return seterr(err, errlen,
                      "this tokenizer adds no BOS (its post-processor puts none first)");
    if (len > MAX_TEXT)
        return seterr(err, errlen, "text of %zu bytes is too long to tokenize (over 1 GB)", len);
    char *s = hf_utf8_sanitize(text, len, &sn);
    int rc =
        s ? enc_init(&e, tok, err, errlen) : seterr(err, errlen, "out of memory while tokenizing");
    if (s && rc == 0 && add_bos)
        rc = hf_ids_push(&e.out, hf_tokenizer_bos_id(tok)) < 0 ? oom(&e) : 0;
    if (s && rc == 0) rc = encode_text(&e, s, sn);
    if (s) enc_free(&e);
    free(s);
    if (rc < 0) {
        free(e.out.v);
        return -1;
    }
    *ids = e.out.v ? e.out.v : malloc(sizeof(int32_t));
    *n = e.out.n;
    return *ids ? 0 : seterr(err, errlen, "out of memory while tokenizing");
}

/* ---- queries and free --------------------------------------------------- */

int32_t hf_tokenizer_bos_id(const HfTokenizer *tok) {
    return tok->prefix.n ? tok->prefix.v[0] : -1;
}

void hf_tokenizer_template(const HfTokenizer *tok, const int32_t **prefix, size_t *n_prefix,
                           const int32_t **suffix, size_t *n_suffix) {
    *prefix = tok->prefix.v;
    *n_prefix = tok->prefix.n;
    *suffix = tok->suffix.v;
    *n_suffix = tok->suffix.n;
}

int32_t hf_tokenizer_token_id(const HfTokenizer *tok, const char *token) {
    int32_t id;
    return hf_map_get(&tok->token_ids, token, strlen(token), &id) ? id : -1;
}

const char *hf_tokenizer_token_text(const HfTokenizer *tok, int32_t id, size_t *len) {
    if (id < 0 || id > tok->max_id || tok->id_slot[id] < 0) return NULL;
    const HfMapSlot *s = &tok->token_ids.slots[tok->id_slot[id]];
    *len = s->len;
    return tok->token_ids.keys + s->off;
}

int32_t hf_tokenizer_vocab_size(const HfTokenizer *tok) { return tok->max_id + 1; }

void hf_tokenizer_free(HfTokenizer *tok) {
    if (!tok) return;
    hf_bpe_free(&tok->bpe);
    hf_map_free(&tok->token_ids);
    hf_added_free(&tok->added);
    for (int i = 0; i < tok->n_steps; ++i) pcre2_code_free(tok->steps[i].re);
    pcre2_code_free(tok->bytelevel_re);
    pcre2_match_context_free(tok->mctx);
    free(tok->prefix.v);
    free(tok->suffix.v);
    free(tok->id_slot);
    free(tok);
}
