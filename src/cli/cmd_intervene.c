/* cmd_intervene.c: `gatelab intervene RUN.h5 KIND...`: rerun a finished
 * run's probe with one change per KIND (intervene.c, over the run's
 * Forward: forward_open.h) and store each result under /intervene/NAME
 * in the run file (the kind, or for a kind with one result per layer or
 * per c, KIND-L<layer> or gate-const-c<c>), with the unchanged rerun under
 * /intervene/none, in one copy-and-rename commit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_json.h"
#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "forward_open.h"
#include "intervene.h"
#include "runfile.h"
#include "runlock.h"
#include "runstats.h"

static int parse_kinds(int argc, char **argv, InterventionKind *kinds, int *n) {
    *n = 0;
    kinds[(*n)++] = IV_NONE;
    for (int i = 0; i < argc; i++) {
        int all = !strcmp(argv[i], "all"), k = intervention_kind(argv[i]);
        if (!all && k < 0) {
            fprintf(stderr, "gatelab intervene: unknown KIND '%s' (see --help)\n", argv[i]);
            return -1;
        }
        for (int j = all ? 1 : k; j <= (all ? IV_COUNT - 1 : k); j++) {
            if (all && !intervention_has((InterventionKind)j, IVP_IN_ALL)) continue;
            int seen = 0;
            for (int q = 0; q < *n; q++) seen |= kinds[q] == (InterventionKind)j;
            if (!seen) kinds[(*n)++] = (InterventionKind)j;
        }
    }
    return 0;
}

/* The names of kinds[n] (IV_NONE left out) that do (want 1) or do not
 * (want 0) take --layer, joined by ", " into buf. */
static void layer_kinds(const InterventionKind *kinds, int n, int want, char *buf, size_t len) {
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < n && at < len; i++)
        if (kinds[i] != IV_NONE && intervention_per_layer(kinds[i]) == want)
            at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "",
                                   intervention_name(kinds[i]));
}

/* One warning on stderr when --layer (layer >= 0) is given but none of
 * kinds[n] takes it (intervention_per_layer): it would do nothing. */
static void warn_unused_layer(int layer, const InterventionKind *kinds, int n) {
    char given[512], takes[256];
    InterventionKind every[IV_COUNT];
    for (int k = 0; k < IV_COUNT; k++) every[k] = (InterventionKind)k;
    layer_kinds(kinds, n, 1, takes, sizeof takes);
    if (layer < 0 || takes[0]) return;
    layer_kinds(kinds, n, 0, given, sizeof given);
    layer_kinds(every, IV_COUNT, 1, takes, sizeof takes);
    fprintf(stderr,
            "gatelab intervene: warning: --layer %d does nothing for %s (only %s take a layer); "
            "it is ignored\n",
            layer, given, takes);
}

/* One warning on stderr when f has no gate but kinds[n] set gate scores
 * (IVP_SETS_GATES; gate-const, which needs them, is refused later): their
 * results equal the plain rerun. */
static void warn_no_gate(const Forward *f, const InterventionKind *kinds, int n) {
    char names[256];
    size_t k = 0;
    names[0] = 0;
    for (int i = 0; i < n && !f->info.gated && k < sizeof names; i++)
        if (intervention_has(kinds[i], IVP_SETS_GATES) &&
            !intervention_has(kinds[i], IVP_NEEDS_GATES))
            k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", k ? ", " : "",
                                  intervention_name(kinds[i]));
    if (names[0])
        fprintf(stderr,
                "gatelab intervene: warning: %s (%s) has no gate, so %s change nothing: their "
                "results equal the plain rerun\n",
                f->run, f->info.variant, names);
}

/* One line redrawn on a terminal; in a log (a sweep's), one line each. */
static void progress(const char *name, int i, int n) {
    const int tty = isatty(STDERR_FILENO);
    fprintf(stderr, "%sgatelab intervene: %-20s (%d/%d)", tty ? "\r" : "", name, i + 1, n);
    if (!tty || i + 1 == n) fputc('\n', stderr);
    fflush(stderr);
}

static void print_table(const char *run, const IntervResult *r, int n) {
    const ProbeRecord *p0 = &r[0].probe;
    double f0 = rs_share(p0, -1), m0 = rs_m_act(p0);
    printf("%s  probe step %lld  N %d  T %d\n", run, p0->step, p0->N, p0->T);
    printf("%-22s %8s %8s %9s %9s %9s %8s %8s\n", "intervention", "F-Attn", "dF-Attn", "M-Act",
           "dM-Act", "BOS-act", "loss", "dloss");
    for (int i = 0; i < n; i++) {
        const ProbeRecord *p = &r[i].probe;
        double f = rs_share(p, -1), m = rs_m_act(p);
        printf("%-22s %8.4f %+8.4f %9.3f %+9.3f %9.3f %8.4f %+8.4f\n", r[i].name, f, f - f0, m,
               m - m0, rs_bos_act(p), r[i].loss, r[i].loss - r[0].loss);
    }
    for (int i = 0; i < n; i++)
        if (r[i].kind == IV_HEAD_ZERO) printf("head-zero heads: %s\n", r[i].heads);
    for (int i = 0; i < n; i++)
        if (intervention_mact(r[i].kind)) {
            char t[96];
            printf("mact-* massive when %s\n",
                   intervention_mact_text(t, sizeof t, r[i].mact_abs, r[i].mact_ratio));
            break;
        }
}

/* One JSON object for the whole call, through cli_json (escaping, null). */
static int print_json(const char *run, const IntervResult *r, int n) {
    json_t *o = cj_set(json_object(), "run", cj_str(run)), *a = json_array();
    cj_set(o, "step", json_integer(r[0].probe.step));
    for (int i = 0; i < n; i++) {
        const ProbeRecord *p = &r[i].probe;
        json_t *e = cj_set(json_object(), "kind", cj_str(intervention_name(r[i].kind)));
        cj_set(e, "name", cj_str(r[i].name));
        cj_set(e, "layer", r[i].layer >= 0 ? json_integer(r[i].layer) : json_null());
        cj_set(e, "gate_const", cj_num(r[i].gate_const));
        cj_set(e, "mact_abs", cj_num(r[i].mact_abs));
        cj_set(e, "mact_ratio", cj_num(r[i].mact_ratio));
        cj_set(e, "heads", r[i].kind == IV_HEAD_ZERO ? cj_str(r[i].heads) : json_null());
        cj_set(e, "T", json_integer(p->T));
        cj_set(e, "first_share", cj_num(rs_share(p, -1)));
        cj_set(e, "m_act", cj_num(rs_m_act(p)));
        cj_set(e, "bos_act", cj_num(rs_bos_act(p)));
        cj_set(e, "loss", cj_num(r[i].loss));
        cj_set(e, "loss_n", json_integer(r[i].loss_n));
        cj_set(e, "loss_none", cj_num(r[0].loss));
        cj_set(e, "clip_k", json_integer(r[i].clip_k));
        json_array_append_new(a, e);
    }
    cj_set(o, "kinds", a);
    return cj_print("intervene", o);
}

/* r[0] is the unchanged rerun: each result's pair. */
static int store(const char *run, const IntervResult *r, int n) {
    InterventionOut *out = calloc((size_t)n, sizeof *out);
    char err[512];
    if (!out) {
        fprintf(stderr, "gatelab intervene: out of memory\n");
        return -1;
    }
    for (int i = 0; i < n; i++)
        out[i] = (InterventionOut){intervention_name(r[i].kind),
                                   &r[i].probe,
                                   r[i].loss,
                                   r[i].loss_n,
                                   r[i].clip_k,
                                   r[i].name,
                                   r[i].layer,
                                   r[i].gate_const,
                                   r[i].kind == IV_HEAD_ZERO ? r[i].heads : NULL,
                                   r[0].loss,
                                   r[i].mact_abs,
                                   r[i].mact_ratio};
    int rc = runfile_write_interventions(run, out, n, err, sizeof err);
    if (rc != 0) fprintf(stderr, "gatelab intervene: %s\n", err);
    free(out);
    return rc;
}

/* A number >= 0 of option name (strtod, the whole text), or -1 naming it. */
static int parse_nonneg(const char *name, const char *s, double *v) {
    char *end;
    *v = strtod(s, &end);
    if (!*s || *end || !(*v >= 0) || !isfinite(*v)) {
        fprintf(stderr, "gatelab intervene: --%s '%s' is not a number >= 0\n", name, s);
        return -1;
    }
    return 0;
}

typedef struct {
    IvParams prm;
    const char *model; /* NULL: the one the run records */
    int threads;       /* 0: the online CPUs */
    int json, nowrite;
} IntervOpts;
static const IntervOpts intervene_defaults = {IV_PARAMS_DEFAULT, NULL, 0, 0, 0};

static const OptRow intervene_rows[] = {
    {'k', "clip-k", OPT_INT, "K", 1, 1 << 20, NULL, "bos-clip's K", 0, 0,
     &intervene_defaults.prm.clip_k},
    {'m', "model", OPT_STR, "DIR", 0, 0, "the one it records", "checkpoint of an inspected run", 0,
     0, &intervene_defaults.model},
    CU_RERUN_ROWS(intervene_defaults),
    {'H', "heads", OPT_STR, "L.H,...", 0, 0, NULL,
     "head-zero's heads (0-based layer.head); \"dormant\": the run file's\ndormant heads", 0, 0,
     &intervene_defaults.prm.heads},
    {'l', "layer", OPT_INT, "L", 0, 1 << 20, "each layer, one result each",
     "the one layer of gates-open-layer, mact-mean and\nmact-zero", 0, 0,
     &intervene_defaults.prm.layer},
    {'c', "gate-const", OPT_STR, "C,...", 0, 0, NULL, "gate-const's values, each in [0, 1]", 0, 0,
     &intervene_defaults.prm.consts},
    {OPT_LONG, "mact-abs", OPT_STR, "A", 0, 0, OPT_DEF(MACT_ABS_MIN),
     "mact-*: a massive activation's |h| exceeds A ...", 0, 0, OPT_SPECIAL},
    {OPT_LONG + 1, "mact-ratio", OPT_STR, "R", 0, 0, OPT_DEF(MACT_MEDIAN_RATIO),
     "... and R times its block output's median |h|", 0, 0, OPT_SPECIAL},
    {0}};
const OptTable intervene_options = {
    .cmd = "intervene",
    .operands = "RUN.h5 KIND... [options]",
    .about = "Rerun a finished run's probe (its final weights, the tokens of its last\n"
             "probe) with one change, and store each result under /intervene/KIND in\n"
             "RUN.h5 beside the unchanged rerun /intervene/none, with the loss of the\n"
             "model on the probe tokens (predicting tokens 2..T-1). A run of `gatelab\n"
             "inspect` is rerun through its checkpoint: the model directory it records,\n"
             "or --model DIR. KIND is one of:\n",
    .footer = "Without --layer, the kinds of one layer give one result per layer, stored\n"
              "as KIND-L<layer>; gate-const's as gate-const-c<c>.\n"
              "Definitions: docs/metrics.md \"Interventions\".\n"
              "Exit codes: 0 ok, 1 failure, 2 bad input.\n",
    .rows = intervene_rows,
    .more = intervention_help,
    OPT_DEFAULTS(intervene_defaults),
};

int cmd_intervene(int argc, char **argv) {
    IntervOpts o = intervene_defaults;
    IvParams *prm = &o.prm;
    OptParser op;
    opt_init(&op, &intervene_options, argc, argv);
    for (int c; (c = opt_parse(&op, &o)) != OPT_END;) {
        if (c < 0) return opt_exit(c);
        if (c == OPT_LONG && parse_nonneg("mact-abs", op.str, &prm->mact_abs) != 0) return 2;
        if (c == OPT_LONG + 1 && parse_nonneg("mact-ratio", op.str, &prm->mact_ratio) != 0)
            return 2;
    }
    int opnd = op.optind;
    if (argc - opnd < 2) {
        fprintf(stderr, "gatelab intervene: need RUN.h5 and at least one KIND (see --help)\n");
        return 2;
    }
    const char *run = argv[opnd];
    InterventionKind kinds[IV_COUNT];
    int n;
    if (parse_kinds(argc - opnd - 1, argv + opnd + 1, kinds, &n) != 0) return 2;
    warn_unused_layer(prm->layer, kinds, n);
    /* one writer per run file (runlock.h), from before the read to the
     * last write; and never through a link or into a foreign file */
    RunLock lock = {.fd = -1};
    char err[1024];
    if (!o.nowrite && cu_check_out("intervene", run, OUT_RUNFILE) < 0) return 2;
    if (!o.nowrite && runlock_acquire(&lock, run, err, sizeof err) != 0) {
        fprintf(stderr, "gatelab intervene: %s\n", err);
        return lock.refused ? 2 : 1;
    }
    ForwardOpen fo = {.model = o.model, .threads = o.threads ? o.threads : cu_online_cpus()};
    Forward *f = forward_open(run, &fo, err, sizeof err);
    if (!f) {
        fprintf(stderr, "gatelab intervene: %s\n", err);
        runlock_release(&lock);
        return 2;
    }
    int nr = 0, rc = 0;
    IntervResult *res =
        intervene_run(f, kinds, n, prm, &nr, o.json ? NULL : progress, err, sizeof err);
    if (res) warn_no_gate(f, kinds, n); /* a refusal stays one line */
    forward_close(f);
    if (!res) {
        /* on a terminal, off the progress line first */
        fprintf(stderr, "%sgatelab intervene: %s\n", isatty(STDERR_FILENO) ? "\n" : "", err);
        runlock_release(&lock);
        return 2;
    }
    if (o.json) rc = print_json(run, res, nr) != 0;
    else print_table(run, res, nr);
    if (!o.nowrite && store(run, res, nr) != 0) rc = 1;
    intervene_free(res, nr);
    free(res);
    runlock_release(&lock);
    return rc;
}
