/* cmd_intervene.c: `gatelab intervene RUN.h5 KIND...`: rerun a finished
 * run's probe with one change per KIND (intervene.c, over the run's
 * Forward: forward_open.h) and store each under
 * /intervene/KIND in the run file, with the unchanged rerun under
 * /intervene/none, in one copy-and-rename commit. */
#include <getopt.h>
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

static void usage(FILE *f) {
    fprintf(f,
            "usage: gatelab intervene RUN.h5 KIND... [--clip-k K] [--json] [--no-write]\n"
            "                       [--model DIR] [--threads N]\n"
            "\n"
            "Rerun a finished run's probe (its final weights, the tokens of its last\n"
            "probe) with one change, and store each result under /intervene/KIND in\n"
            "RUN.h5 beside the unchanged rerun /intervene/none, with the loss of the\n"
            "model on the probe tokens (predicting tokens 2..T-1). A run of `gatelab\n"
            "inspect` is rerun through its checkpoint: the model directory it records,\n"
            "or --model DIR. KIND is one of:\n"
            "  gates-open   every gate score = identity (1; 0 for additive gates)\n"
            "  gates-mean   each gate score = its channel's mean over the sequence's tokens\n"
            "  bos-clip     after every block, position 0's K largest |h| features are\n"
            "               clipped to the sequence's median |h|\n"
            "  bos-mean     after every block, position 0's residual = the mean of the\n"
            "               other tokens'\n"
            "  no-bos       the probe without its first token (T-1 tokens)\n"
            "  all          all five\n"
            "Definitions: docs/metrics.md \"Interventions\".\n"
            "\n"
            "  -k, --clip-k K   bos-clip's K (default %d)\n"
            "  -m, --model DIR  checkpoint of an inspected run (default: the one it records)\n"
            "  -t, --threads N  threads for a checkpoint (default: the online CPUs)\n"
            "  -j, --json       print JSON instead of a table\n"
            "  -w, --no-write   do not store the results in RUN.h5\n"
            "\n"
            "Exit codes: 0 ok, 1 failure, 2 bad input.\n",
            IV_CLIP_K_DEFAULT);
}

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
            int seen = 0;
            for (int q = 0; q < *n; q++) seen |= kinds[q] == (InterventionKind)j;
            if (!seen) kinds[(*n)++] = (InterventionKind)j;
        }
    }
    return 0;
}

/* One line redrawn on a terminal; in a log (a sweep's), one line each. */
static void progress(const char *kind, int i, int n) {
    const int tty = isatty(STDERR_FILENO);
    fprintf(stderr, "%sgatelab intervene: %-10s (%d/%d)", tty ? "\r" : "", kind, i + 1, n);
    if (!tty || i + 1 == n) fputc('\n', stderr);
    fflush(stderr);
}

static void print_table(const char *run, const IntervResult *r, int n) {
    const ProbeRecord *p0 = &r[0].probe;
    double f0 = rs_share(p0, -1), m0 = rs_m_act(p0);
    printf("%s  probe step %lld  N %d  T %d\n", run, p0->step, p0->N, p0->T);
    printf("%-11s %8s %8s %9s %9s %9s %8s %8s\n", "kind", "F-Attn", "dF-Attn", "M-Act", "dM-Act",
           "BOS-act", "loss", "dloss");
    for (int i = 0; i < n; i++) {
        const ProbeRecord *p = &r[i].probe;
        double f = rs_share(p, -1), m = rs_m_act(p);
        printf("%-11s %8.4f %+8.4f %9.3f %+9.3f %9.3f %8.4f %+8.4f\n", intervention_name(r[i].kind),
               f, f - f0, m, m - m0, rs_bos_act(p), r[i].loss, r[i].loss - r[0].loss);
    }
}

/* One JSON object for the whole call, through cli_json (escaping, null). */
static int print_json(const char *run, const IntervResult *r, int n) {
    json_t *o = cj_set(json_object(), "run", cj_str(run)), *a = json_array();
    cj_set(o, "step", json_integer(r[0].probe.step));
    for (int i = 0; i < n; i++) {
        const ProbeRecord *p = &r[i].probe;
        json_t *e = cj_set(json_object(), "kind", cj_str(intervention_name(r[i].kind)));
        cj_set(e, "T", json_integer(p->T));
        cj_set(e, "first_share", cj_num(rs_share(p, -1)));
        cj_set(e, "m_act", cj_num(rs_m_act(p)));
        cj_set(e, "bos_act", cj_num(rs_bos_act(p)));
        cj_set(e, "loss", cj_num(r[i].loss));
        cj_set(e, "loss_n", json_integer(r[i].loss_n));
        cj_set(e, "clip_k", json_integer(r[i].clip_k));
        json_array_append_new(a, e);
    }
    cj_set(o, "kinds", a);
    return cj_print("intervene", o);
}

static int store(const char *run, const IntervResult *r, int n) {
    InterventionOut out[IV_COUNT];
    char err[512];
    for (int i = 0; i < n; i++)
        out[i] = (InterventionOut){intervention_name(r[i].kind), &r[i].probe, r[i].loss,
                                   r[i].loss_n, r[i].clip_k};
    if (runfile_write_interventions(run, out, n, err, sizeof err) != 0) {
        fprintf(stderr, "gatelab intervene: %s\n", err);
        return -1;
    }
    return 0;
}

static const struct option intervene_long[] = {{"clip-k", required_argument, 0, 'k'},
                                               {"model", required_argument, 0, 'm'},
                                               {"threads", required_argument, 0, 't'},
                                               {"json", no_argument, 0, 'j'},
                                               {"no-write", no_argument, 0, 'w'},
                                               {"help", no_argument, 0, 'h'},
                                               {0, 0, 0, 0}};
const CliOpts intervene_options = {"intervene", ":k:m:t:jwh", "", intervene_long};

int cmd_intervene(int argc, char **argv) {
    int json = 0, nowrite = 0, clip_k = IV_CLIP_K_DEFAULT, threads = cu_online_cpus(), c;
    const char *model = NULL;
    optind = 1;
    opterr = 0;
    unsigned char seen[CU_MAX_OPTS] = {0};
    while ((c = cu_getopt(&intervene_options, argc, argv, seen)) != -1) {
        char *end;
        switch (c) {
        case 'k':
            clip_k = (int)strtol(optarg, &end, 10);
            if (end == optarg || *end || clip_k < 1 || clip_k > 1 << 20) {
                fprintf(stderr, "gatelab intervene: --clip-k '%s' is not a positive integer\n",
                        optarg);
                return 2;
            }
            break;
        case 'm': model = optarg; break;
        case 't':
            if (cu_parse_int(optarg, 1, 64, &threads)) {
                fprintf(stderr, "gatelab intervene: --threads '%s' is not in 1..64\n", optarg);
                return 2;
            }
            break;
        case 'j': json = 1; break;
        case 'w': nowrite = 1; break;
        case 'h': usage(stdout); return 0;
        default: return cu_bad_option("intervene", c, argv);
        }
    }
    if (argc - optind < 2) {
        fprintf(stderr, "gatelab intervene: need RUN.h5 and at least one KIND (see --help)\n");
        return 2;
    }
    const char *run = argv[optind];
    InterventionKind kinds[IV_COUNT];
    int n;
    if (parse_kinds(argc - optind - 1, argv + optind + 1, kinds, &n) != 0) return 2;
    /* one writer per run file (runlock.h), from before the read to the
     * last write; and never through a link or into a foreign file */
    RunLock lock = {.fd = -1};
    char err[1024];
    if (!nowrite && cu_check_out("intervene", run, OUT_RUNFILE) < 0) return 2;
    if (!nowrite && runlock_acquire(&lock, run, err, sizeof err) != 0) {
        fprintf(stderr, "gatelab intervene: %s\n", err);
        return lock.refused ? 2 : 1;
    }
    IntervResult res[IV_COUNT];
    ForwardOpen fo = {.model = model, .threads = threads};
    Forward *f = forward_open(run, &fo, err, sizeof err);
    if (!f) {
        fprintf(stderr, "gatelab intervene: %s\n", err);
        runlock_release(&lock);
        return 2;
    }
    int rc = intervene_run(f, kinds, n, clip_k, res, json ? NULL : progress, err, sizeof err);
    forward_close(f);
    if (rc != 0) {
        /* on a terminal, off the progress line first */
        fprintf(stderr, "%sgatelab intervene: %s\n", isatty(STDERR_FILENO) ? "\n" : "", err);
        runlock_release(&lock);
        return 2;
    }
    if (json) rc = print_json(run, res, n) != 0;
    else print_table(run, res, n);
    if (!nowrite && store(run, res, n) != 0) rc = 1;
    intervene_free(res, n);
    runlock_release(&lock);
    return rc;
}
