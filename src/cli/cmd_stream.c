/* cmd_stream.c: `gatelab stream RUN.h5`: streaming evaluation of a trained
 * run or an inspected checkpoint (stream.c over the run's Forward:
 * forward_open.h): loss with every attention limited to a window that
 * keeps the first K tokens, against
 * dense attention, with the paired test of keeping none against keeping
 * the most; stored under /stream/W_<window>. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_json.h"
#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "forward_open.h"
#include "runfile.h"
#include "runlock.h"
#include "stats.h"
#include "stream.h"
#include "util.h"

typedef struct {
    StreamOpts s;
    const char *run, *model, *text;
    int threads, json, nowrite; /* threads 0: the online CPUs */
} Args;
/* window, len and n_seqs 0: the run's own (stream.h) */
static const Args stream_defaults = {.s = {.n_keep = 3, .keep = {0, 1, 4}}};

static const OptRow stream_rows[] = {
    {'W', "window", OPT_INT, "W", 1, 1 << 20, "L/4", "keys each attention sees", 0, 0,
     &stream_defaults.s.window},
    {'K', "keep", OPT_STR, "LIST", 0, 0, "0,1,4", "first tokens kept, comma-separated", 0, 0,
     OPT_SPECIAL},
    {'L', "len", OPT_INT, "L", 2, 1 << 20, "seq_len; checkpoints 512 within their positions",
     "sequence length", 0, 0, &stream_defaults.s.len},
    {'n', "n-seq", OPT_INT, "N", 2, 1 << 16, "8, or the windows a checkpoint's input gives",
     "sequences", 0, 0, &stream_defaults.s.n_seqs},
    {'x', "text", OPT_STR, "FILE", 0, 0, NULL, "a checkpoint's text instead of its recorded input",
     0, 0, &stream_defaults.text},
    {'m', "model", OPT_STR, "DIR", 0, 0, NULL,
     "a checkpoint's directory instead of the recorded one", 0, 0, &stream_defaults.model},
    CU_RERUN_ROWS(stream_defaults),
    {0}};
const OptTable stream_options = {
    .cmd = "stream",
    .operands = "RUN.h5 [options]",
    .about = "Streaming evaluation (StreamingLLM's test): the loss on N held-out sequences\n"
             "of L tokens when every attention sees only W keys, the first K tokens and the\n"
             "latest W - K (a KV cache that evicts all but its first K entries), against\n"
             "dense attention; only the predictions at positions >= W count. A model with\n"
             "an attention sink needs K >= 1; the paired t-test over sequences compares the\n"
             "first K with the last. Stored in RUN.h5 under /stream/W_<W>.\n"
             "Trained runs score the held-out split `gatelab eval` uses; a run of `gatelab\n"
             "inspect` its recorded input (or --text) through its checkpoint.\n",
    .footer = "Exit codes: 0 ok, 1 failure, 2 bad input.\n",
    .rows = stream_rows,
    OPT_DEFAULTS(stream_defaults),
};

/* "0,1,4" into o->keep: -1 for an empty entry, a non-number, too many. */
static int parse_keep(const char *spec, StreamOpts *o) {
    char buf[256];
    size_t n = strlen(spec);
    if (n >= sizeof buf || n == 0 || spec[0] == ',' || spec[n - 1] == ',' || strstr(spec, ",,"))
        return -1;
    strcpy(buf, spec);
    o->n_keep = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (o->n_keep == STREAM_MAX_KEEP || cu_parse_int(tok, 0, 1 << 20, &o->keep[o->n_keep]))
            return -1;
        o->n_keep++;
    }
    return o->n_keep > 0 ? 0 : -1;
}

static int bad(const char *what, const char *arg) {
    fprintf(stderr, "gatelab stream: %s '%s' (see --help)\n", what, arg);
    return 2;
}

/* 0 ok, 1 help printed, 2 bad usage. */
static int parse(int argc, char **argv, Args *a) {
    *a = stream_defaults;
    OptParser op;
    opt_init(&op, &stream_options, argc, argv);
    for (int c; (c = opt_parse(&op, a)) != OPT_END;) {
        if (c < 0) return c == OPT_HELP ? 1 : 2;
        if (c == 'K' && parse_keep(op.str, &a->s)) return bad("bad --keep", op.str);
    }
    if (!a->threads) a->threads = cu_online_cpus();
    if (op.optind != argc - 1) return bad("need exactly one", "RUN.h5");
    a->run = argv[op.optind];
    return 0;
}

static double row_mean(const double *v, int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += v[i];
    return s / n;
}

/* keep[0] against keep[n_keep - 1], paired over sequences: Welch's test of
 * the differences against zeros is the one-sample t-test on them. */
static void paired_test(const StreamOpts *o, const double *loss, double *delta, double *p) {
    const int N = o->n_seqs;
    double *d = calloc((size_t)N, sizeof *d), *z = calloc((size_t)N, sizeof *z);
    StatsWelch t;
    *delta = *p = NAN;
    for (int i = 0; d && i < N; i++)
        d[i] = loss[(size_t)1 * N + i] - loss[(size_t)o->n_keep * N + i];
    if (d && z && o->n_keep > 1 && stats_welch(&t, d, N, z, N, NULL, 0) == 0)
        *delta = t.mean_a, *p = t.p;
    free(d), free(z);
}

static void print_text(const Args *a, const double *loss, double delta, double p) {
    const StreamOpts *o = &a->s;
    printf("%s: streaming, window %d of %d tokens, %d sequences (loss at positions >= %d)\n",
           a->run, o->window, o->len, o->n_seqs, o->window);
    printf("  %-10s %9s %9s\n", "attention", "loss", "vs dense");
    double dense = row_mean(loss, o->n_seqs);
    printf("  %-10s %9.4f %9s\n", "dense", dense, "");
    for (int k = 0; k < o->n_keep; k++) {
        double v = row_mean(loss + (size_t)(k + 1) * o->n_seqs, o->n_seqs);
        printf("  keep %-5d %9.4f %+9.4f\n", o->keep[k], v, v - dense);
    }
    if (o->n_keep > 1)
        printf("  keep %d - keep %d: %+.4f, paired t-test p = %.3g\n", o->keep[0],
               o->keep[o->n_keep - 1], delta, p);
}

static int print_json(const Args *a, const double *loss, double delta, double p) {
    const StreamOpts *o = &a->s;
    json_t *j = cj_set(json_object(), "run", cj_str(a->run)), *ks = json_array();
    cj_set(j, "window", json_integer(o->window));
    cj_set(j, "len", json_integer(o->len));
    cj_set(j, "n_seqs", json_integer(o->n_seqs));
    cj_set(j, "loss_dense", cj_num(row_mean(loss, o->n_seqs)));
    for (int k = 0; k < o->n_keep; k++) {
        json_t *e = cj_set(json_object(), "keep", json_integer(o->keep[k]));
        cj_set(e, "loss", cj_num(row_mean(loss + (size_t)(k + 1) * o->n_seqs, o->n_seqs)));
        json_array_append_new(ks, e);
    }
    cj_set(j, "keeps", ks);
    cj_set(j, "delta", cj_num(delta));
    cj_set(j, "p_paired", cj_num(p));
    return cj_print("stream", j);
}

/* Evaluate, print, store; the exit code. */
static int run_stream(Args *a) {
    char err[1024];
    StreamOpts *o = &a->s;
    ForwardOpen fo = {.model = a->model, .text = a->text, .threads = a->threads};
    Forward *f = forward_open(a->run, &fo, err, sizeof err);
    if (!f) {
        fprintf(stderr, "gatelab stream: %s\n", err);
        return 2;
    }
    char note[512];
    double *loss = NULL;
    int rc = stream_fit(f, o, note, sizeof note, err, sizeof err);
    if (rc == 0 && note[0]) fprintf(stderr, "gatelab stream: %s\n", note);
    if (rc == 0) loss = malloc((size_t)(STREAM_MAX_KEEP + 1) * o->n_seqs * sizeof *loss);
    if (rc == 0)
        rc = loss ? stream_run(f, o, loss, err, sizeof err)
                  : seterr(err, sizeof err, "out of memory");
    forward_close(f);
    if (rc != 0) {
        fprintf(stderr, "gatelab stream: %s\n", err);
        free(loss);
        return 2;
    }
    double delta, p;
    paired_test(o, loss, &delta, &p);
    rc = a->json ? print_json(a, loss, delta, p) != 0 : (print_text(a, loss, delta, p), 0);
    StreamData d = {o->window, o->len, o->n_seqs, o->n_keep, o->keep, loss, delta, p};
    if (!a->nowrite && runfile_write_stream(a->run, &d, err, sizeof err) != 0) {
        fprintf(stderr, "gatelab stream: %s\n", err);
        rc = 1;
    }
    free(loss);
    return rc;
}

int cmd_stream(int argc, char **argv) {
    Args a;
    int rc = parse(argc, argv, &a);
    if (rc) return rc == 1 ? 0 : rc;
    char err[1024];
    RunLock lock = {.fd = -1};
    if (!a.nowrite && cu_check_out("stream", a.run, OUT_RUNFILE) < 0) return 2;
    if (!a.nowrite && runlock_acquire(&lock, a.run, err, sizeof err) != 0) {
        fprintf(stderr, "gatelab stream: %s\n", err);
        return lock.refused ? 2 : 1;
    }
    rc = run_stream(&a);
    runlock_release(&lock);
    return rc;
}
