/* cmd_train.c: `gatelab train` (the config: config_args.c). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_args.h"
#include "config_derive.h"
#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "data.h"
#include "model.h"
#include "train_loop.h"
#include "util.h"

/* --print-params: the parameter table of the resolved config. */
static int print_param_table(const Config *cfg) {
    Model m;
    char err[256];
    if (model_shape(&m, cfg, err, sizeof err) != 0) { /* the table only: no arena */
        fprintf(stderr, "gatelab train: %s\n", err);
        return 1;
    }
    printf("%-32s %12s %9s %5s %5s\n", "tensor", "shape", "numel", "decay", "added");
    for (int i = 0; i < m.table.count; i++) {
        const ParamInfo *p = &m.table.info[i];
        char shape[32];
        if (p->ndim == 2) snprintf(shape, sizeof shape, "%dx%d", p->shape[0], p->shape[1]);
        else snprintf(shape, sizeof shape, "%d", p->shape[0]);
        printf("%-32s %12s %9zu %5d %5d\n", p->name, shape, p->numel, p->decay, p->added);
    }
    printf("variant %s: %zu parameters, %zu added by the variant's own tensors\n", cfg->variant,
           m.table.total, model_added_params(&m));
    model_free(&m);
    return 0;
}

/* The parsed command line: the config, its --set overrides in order, and
 * the trainer's options. threads_set backs the --threads override. */
typedef struct {
    const char *config;
    char *sets[256], threads_set[64];
    int nsets, print_params;
    TrainOptions opt;
} TrainArgs;
static const TrainArgs train_defaults = {.opt = {.progress_fd = -1}};

/* Options that go together or are required; 0 when the line is usable. */
static int check_train_args(TrainArgs *a) {
    TrainOptions *opt = &a->opt;
    if (a->print_params && a->config) opt->out_path = "-"; /* nothing is written */
    if (!a->config || !opt->out_path) {
        fprintf(stderr, "gatelab train: --config and --out are required (see --help)\n");
        return 2;
    }
    if (strlen(opt->out_path) >= CFG_STR) {
        fprintf(stderr, "gatelab train: --out path is longer than %d bytes\n", CFG_STR - 1);
        return 2;
    }
    return 0;
}

enum { O_PRINT_PARAMS = OPT_LONG, O_PROGRESS_FD, O_PROTOCOL };
static const OptRow train_rows[] = {
    {'c', "config", OPT_STR, "FILE", 0, 0, NULL, "preset INI file, e.g. experiments/small.ini", 0,
     1, &train_defaults.config},
    {'s', "set", OPT_STR, "K=V", 0, 0, NULL,
     "override one config key (repeatable; applied in order;\n"
     "variant=ID applies a catalog variant)",
     1, 0, OPT_SPECIAL},
    {'o', "out", OPT_STR, "RUN.h5", 0, 0, NULL,
     "run file to write; a checkpoint goes to RUN.h5.ckpt", 0, 1, &train_defaults.opt.out_path},
    {'r', "resume", OPT_FLAG, NULL, 0, 0, NULL, "continue from RUN.h5.ckpt (bit-identical losses)",
     0, 0, &train_defaults.opt.resume},
    {'f', "force", OPT_FLAG, NULL, 0, 0, NULL, "overwrite an existing RUN.h5", 0, 0,
     &train_defaults.opt.force},
    {'t', "threads", OPT_INT, "N", 1, 64, NULL, "worker threads (same as --set threads=N)", 0, 0,
     OPT_SPECIAL},
    {'q', "quiet", OPT_FLAG, NULL, 0, 0, NULL, "no progress lines", 0, 0,
     &train_defaults.opt.quiet},
    {O_PROGRESS_FD, "progress-fd", OPT_INT, "FD", 0, 1 << 20, OPT_NO_DEF,
     "also write progress for programs to the open fd FD\n"
     "(\"progress STEP STEPS ETA_SECONDS\" lines; docs/sweeps.md)",
     0, 0, &train_defaults.opt.progress_fd},
    {O_PROTOCOL, "protocol", OPT_STR, "FILE", 0, 0, NULL,
     "record FILE (a sweep's protocol.ini) in the run file's\n"
     "/protocol as the run starts (docs/runfile.md)",
     0, 0, &train_defaults.opt.protocol_path},
    {O_PRINT_PARAMS, "print-params", OPT_FLAG, NULL, 0, 0, NULL,
     "list every tensor (name, shape, decay, added) and the\n"
     "totals for the resolved config, then exit",
     0, 0, &train_defaults.print_params},
    {0}};
const OptTable train_options = {
    .cmd = "train",
    .operands = "[options]",
    .about = "Train one model and write its HDF5 run file (schema: docs/runfile.md).\n",
    .footer = "Exit codes: 0 done, 1 failure, 2 bad input, 3 diverged (data kept),\n"
              "130 interrupted (checkpoint saved).\n",
    .rows = train_rows,
    OPT_DEFAULTS(train_defaults),
};

/* 0 when fd is open for writing; else -1 after one line naming it. Checked
 * before any file is opened, so a closed fd is never one of ours (the
 * lock file's, the run file's) by the time progress lines go to it. */
static int check_progress_fd(int fd) {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || ((fl & O_ACCMODE) != O_WRONLY && (fl & O_ACCMODE) != O_RDWR)) {
        fprintf(stderr, "gatelab train: --progress-fd %d: fd %d is not %s\n", fd, fd,
                fl < 0 ? "open" : "open for writing");
        return -1;
    }
    return 0;
}

/* Fills *a from the command line. Returns -1 to go on, else the exit code
 * (0 after --help, 2 on a bad option). */
static int parse_train_args(int argc, char **argv, TrainArgs *a) {
    *a = train_defaults;
    OptParser p;
    opt_init(&p, &train_options, argc, argv);
    for (int c; (c = opt_parse(&p, a)) != OPT_END;) {
        if (c < 0) return opt_exit(c);
        if (c == 's') {
            if (a->nsets == 255) return cu_too_many("train", "--set", 255);
            a->sets[a->nsets++] = p.str;
        }
        if (c == 't') { /* in order among the --set overrides */
            snprintf(a->threads_set, sizeof a->threads_set, "threads=%lld", p.num);
            if (a->nsets == 255) return cu_too_many("train", "--set and --threads", 255);
            a->sets[a->nsets++] = a->threads_set;
        }
    }
    if (a->opt.progress_fd >= 0 && check_progress_fd(a->opt.progress_fd) != 0) return 2;
    if (p.optind < argc) {
        fprintf(stderr, "gatelab train: unexpected argument '%s'\n", argv[p.optind]);
        return 2;
    }
    int rc = check_train_args(a);
    return rc ? rc : -1;
}

/* One warning on stderr when threads exceed the batch's shards: the extra
 * threads would idle, so only config_workers(cfg) of them run. */
static void warn_idle_threads(const Config *cfg) {
    int ns = config_shards(cfg);
    if (cfg->threads <= ns) return;
    fprintf(stderr,
            "gatelab train: warning: threads %d above the batch's %d shards (min(shards %d, "
            "batch_size %d)); only %d of them run; raise shards to use more (it changes the run's "
            "bits, docs/speed.md)\n",
            cfg->threads, ns, cfg->shards, cfg->batch_size, config_workers(cfg));
}

int cmd_train(int argc, char **argv) {
    TrainArgs a;
    int rc = parse_train_args(argc, argv, &a);
    if (rc >= 0) return rc;
    Config cfg;
    char err[1200];
    if (config_from_args(&cfg, a.config, a.sets, a.nsets, err, sizeof err) != 0 ||
        data_fill_vocab(&cfg, err, sizeof err) != 0) {
        fprintf(stderr, "gatelab train: %s\n", err);
        return 2;
    }
    if (a.print_params) return print_param_table(&cfg);
    warn_idle_threads(&cfg);
    rc = train_run(&cfg, &a.opt, err, sizeof err);
    if (rc == TRAIN_OK && !a.opt.quiet) printf("run file: %s\n", a.opt.out_path);
    if (rc == TRAIN_BADINPUT || rc == TRAIN_FAIL) fprintf(stderr, "gatelab train: %s\n", err);
    return rc;
}
