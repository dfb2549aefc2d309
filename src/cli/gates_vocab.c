/* gates_vocab.c: `gatelab gates RUN.h5 --vocab` (gates_vocab.h): the
 * layer-0 gate over the vocabulary (docs/metrics.md "The layer-0 gate
 * over the vocabulary"), its shut share, mean, median and the ten most
 * open and most shut tokens, as text or JSON. */
#include "gates_vocab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_json.h"
#include "data.h" /* BYTE_BOS */
#include "forward_open.h"
#include "hf_tokenizer.h"
#include "runfile_read.h"
#include "stop.h"
#include "vocabgate.h"

#define TOK_TEXT 128 /* an escaped token's text, cut beyond */

/* What a token id reads as: bytes (a byte-level trained run), a
 * tokenizer's token (an inspected run that recorded one), or nothing. */
typedef struct {
    int bytes;
    HfTokenizer *tok;
    char note[1700]; /* how ids read, for the text output */
} TokText;

/* The run's reading of its ids: data = brown or text are bytes; an
 * inspected run with a recorded tokenizer reads it from the checkpoint's
 * tokenizer.json (model, or the directory it records). */
static void tok_text_open(TokText *t, const char *run, const char *model) {
    char err[512], dir[1024], rec[512], data[64], path[1100];
    memset(t, 0, sizeof *t);
    snprintf(t->note, sizeof t->note, "ids only (the run records no tokenizer)");
    RunReader *r = runread_open(run, err, sizeof err);
    if (!r) return;
    if (runread_pretrained_string(r, RS_PT_MODEL_DIR, dir, sizeof dir, NULL, 0) != 0) {
        if (runread_config_string(r, "data", data, sizeof data, NULL, 0) == 0 &&
            (!strcmp(data, "brown") || !strcmp(data, "text"))) {
            t->bytes = 1;
            snprintf(t->note, sizeof t->note, "byte-level (id = byte, %d = BOS)", BYTE_BOS);
        }
    } else if (runread_pretrained_string(r, RS_PT_TOKENIZER, rec, sizeof rec, NULL, 0) == 0 &&
               strncmp(rec, "none", 4) != 0) {
        snprintf(path, sizeof path, "%s/tokenizer.json", model ? model : dir);
        if (hf_tokenizer_load(&t->tok, path, err, sizeof err) == 0)
            snprintf(t->note, sizeof t->note, "tokens as %s spells them", path);
        else snprintf(t->note, sizeof t->note, "ids only (%s)", err);
    }
    runread_close(r);
}

/* s[n] escaped into out: printable ASCII as is (but " and \), \n \t \r,
 * other bytes \xHH, except that UTF-8 (utf8 set) passes through. */
static void escape(char *out, size_t outlen, const unsigned char *s, size_t n, int utf8) {
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < outlen; i++) {
        const unsigned char c = s[i];
        if (c == '"' || c == '\\') o += (size_t)snprintf(out + o, outlen - o, "\\%c", c);
        else if (c == '\n') o += (size_t)snprintf(out + o, outlen - o, "\\n");
        else if (c == '\t') o += (size_t)snprintf(out + o, outlen - o, "\\t");
        else if (c == '\r') o += (size_t)snprintf(out + o, outlen - o, "\\r");
        else if ((c >= 0x20 && c < 0x7f) || (utf8 && c >= 0x80)) out[o++] = (char)c;
        else o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
    }
    out[o] = '\0';
}

/* Token id's text, escaped, into out; 0, or -1 when the run gives none. */
static int tok_text(const TokText *t, int id, char *out, size_t outlen) {
    if (t->bytes && id == BYTE_BOS) return snprintf(out, outlen, "<BOS>"), 0;
    if (t->bytes && id >= 0 && id < 256) {
        unsigned char b = (unsigned char)id;
        escape(out, outlen, &b, 1, 0);
        return 0;
    }
    size_t len;
    const char *s = t->tok ? hf_tokenizer_token_text(t->tok, id, &len) : NULL;
    if (!s) return -1;
    escape(out, outlen, (const unsigned char *)s, len, 1);
    return 0;
}

/* One line redrawn on a terminal; in a log, one line per tenth. */
static void progress(int done, int V) {
    static int shown = -1; /* the last tenth printed to a log */
    const int tty = isatty(STDERR_FILENO), tenth = (int)((long long)done * 10 / V);
    if (!tty && tenth == shown) return;
    shown = tenth;
    fprintf(stderr, "%sgatelab gates: layer-0 gate over the vocabulary: %d/%d tokens",
            tty ? "\r" : "", done, V);
    if (!tty || done == V) fputc('\n', stderr);
    fflush(stderr);
}

static void print_list(const char *title, const int *ids, const VocabGates *v, const TokText *t) {
    char txt[TOK_TEXT];
    printf("\n%s:\n  %8s %9s  %s\n", title, "id", "mean", "token");
    for (int k = 0; k < v->n_top; k++) {
        int has = tok_text(t, ids[k], txt, sizeof txt) == 0;
        printf("  %8d %9.5f  %s%s%s\n", ids[k], v->mean[ids[k]], has ? "\"" : "", has ? txt : "-",
               has ? "\"" : "");
    }
}

static void print_text(const char *run, const Forward *f, const VocabGates *v, const TokText *t) {
    printf("run %s: variant %s, layer 0's gate, %d channels, over the vocabulary of %d tokens, "
           "each the first token of a one-token window\n",
           run, f->info.variant, v->C0, v->V);
    printf("per token: the mean of its %d gate scores; tokens: %s\n", v->C0, t->note);
    if (v->bounded)
        printf("shut (mean score < %g): %.4f of the vocabulary (%lld of %d tokens)\n",
               RS_GATE_SPARSE, v->shut, (long long)(v->shut * v->V + 0.5), v->V);
    else
        printf("mean raw act(XW) < %g: %.4f of the vocabulary (an unbounded gate: NOT a shut "
               "share)\n",
               RS_GATE_SPARSE, v->shut);
    printf("mean over tokens %.5f, median %.5f\n", v->mean_all, v->median);
    print_list("most open (highest mean score)", v->open, v, t);
    print_list("most shut (lowest mean score)", v->closed, v, t);
}

static json_t *list_json(const int *ids, const VocabGates *v, const TokText *t) {
    char txt[TOK_TEXT];
    json_t *a = json_array();
    for (int k = 0; k < v->n_top; k++) {
        json_t *e = json_object();
        cj_set(e, "id", json_integer(ids[k]));
        cj_set(e, "mean", cj_num(v->mean[ids[k]]));
        cj_set(e, "text", tok_text(t, ids[k], txt, sizeof txt) == 0 ? cj_str(txt) : json_null());
        json_array_append_new(a, e);
    }
    return a;
}

static int print_json(const char *run, const Forward *f, const VocabGates *v, const TokText *t) {
    json_t *o = json_object(), *all = json_array();
    cj_set(o, "file", cj_str(run));
    cj_set(o, "variant", cj_str(f->info.variant));
    cj_set(o, "layer", json_integer(0));
    cj_set(o, "vocab", json_integer(v->V));
    cj_set(o, "gate_channels", json_integer(v->C0)); /* layer 0's own */
    cj_set(o, "gate_bounded", json_integer(v->bounded));
    cj_set(o, "threshold", cj_num(RS_GATE_SPARSE));
    cj_set(o, "shut_share", cj_num(v->shut));
    cj_set(o, "mean", cj_num(v->mean_all));
    cj_set(o, "median", cj_num(v->median));
    cj_set(o, "most_open", list_json(v->open, v, t));
    cj_set(o, "most_shut", list_json(v->closed, v, t));
    for (int i = 0; i < v->V; i++) json_array_append_new(all, cj_num(v->mean[i]));
    cj_set(o, "token_mean", all);
    return cj_print("gates", o) ? 1 : 0;
}

int gates_vocab(const char *run, const char *model, int threads, int json) {
    char err[1024];
    ForwardOpen fo = {.model = model, .threads = threads};
    Forward *f = forward_open(run, &fo, err, sizeof err);
    if (!f) {
        fprintf(stderr, "gatelab gates: %s\n", err);
        return 2;
    }
    VocabGates v;
    StopGuard guard;
    stop_arm(&guard); /* Ctrl-C stops between forwards */
    int failed = vocab_gates_run(f, &v, json ? NULL : progress, err, sizeof err) != 0;
    stop_disarm(&guard);
    if (failed) {
        fprintf(stderr, "%sgatelab gates: %s\n", !json && isatty(STDERR_FILENO) ? "\n" : "", err);
        forward_close(f);
        return stop_requested() ? STOP_EXIT : 2;
    }
    TokText t;
    tok_text_open(&t, run, model);
    int rc = 0;
    if (json) rc = print_json(run, f, &v, &t);
    else print_text(run, f, &v, &t);
    hf_tokenizer_free(t.tok);
    vocab_gates_free(&v);
    forward_close(f);
    return rc;
}
