/* cmd_sweep.c: `gatelab sweep`: options, MPI ranks, Slurm script, and the
 * report at the end; the runner itself is src/sweep/sweep.c. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "env.h"
#include "fingerprint.h"
#include "gatelab_build.h"
#include "report.h"
#include "seedlist.h"
#include "sweep.h"
#include "util.h"

#if GATELAB_HAVE_MPI
#include <mpi.h>
#endif

/* Report over the finished sweep (the analysis layer's report_run). */
static int write_report(const char *dir) {
    char err[512];
    if (report_run(dir, dir, err, sizeof err) != 0) {
        fprintf(stderr, "gatelab sweep: report: %s\n", err);
        return 1;
    }
    return 0;
}

static void print_run_list(const Sweep *sw, const SweepOptions *o) {
    for (int i = 0; i < sw->n_runs; i++) {
        const SweepRun *r = &sw->runs[i];
        if (!sweep_seed_chosen(o, r->seed)) continue;
        printf("%d\t%s\t%s", i, r->id, r->preset);
        for (int k = 0; k < r->n_sets; k++) printf("%s%s", k ? " " : "\t", r->sets[k]);
        putchar('\n');
    }
}

typedef struct {
    const char *file, *out, *slurm, *seeds;
    /* jobs 0: the cores; only -1: all */
    int jobs, only, list, dry, emit, no_report, no_figures, uncommitted;
} SweepArgs;
static const SweepArgs sweep_defaults = {.only = -1};

enum { O_ONLY = OPT_LONG, O_SEEDS, O_LIST, O_DRY, O_SLURM, O_NOREPORT, O_NOFIGURES, O_UNCOMMITTED };
static const OptRow sweep_rows[] = {
    {'o', "out", OPT_STR, "DIR", 0, 0, NULL, "where run files, logs/ and sweep_status.tsv go", 0, 1,
     &sweep_defaults.out},
    {'j', "jobs", OPT_INT, "N", 1, 4096, "online cores; 1 per MPI rank",
     "parallel runs; each child runs with\nthreads=1", 0, 0, &sweep_defaults.jobs},
    {O_ONLY, "only", OPT_INT, "K", 0, INT_MAX, OPT_NO_DEF,
     "run only expanded run K (0-based; Slurm tasks)", 0, 0, &sweep_defaults.only},
    {O_SEEDS, "seeds", OPT_STR, "LIST", 0, 0, NULL,
     "run only the runs of these seeds of the sweep\n"
     "(\"1501-1525\", \"3,5\"): one piece of a study run\n"
     "in pieces; the report joins the pieces",
     0, 0, &sweep_defaults.seeds},
    {O_LIST, "list", OPT_FLAG, NULL, 0, 0, NULL, "print the expanded runs and exit", 0, 0,
     &sweep_defaults.list},
    {O_DRY, "dry-run", OPT_FLAG, NULL, 0, 0, NULL, "print what each run would do and exit", 0, 0,
     &sweep_defaults.dry},
    {O_SLURM, "emit-slurm", OPT_OPTSTR, "PATH", 0, 0, "DIR/sweep.sbatch",
     "write an sbatch job-array script and\nexit", 0, 0, OPT_SPECIAL},
    {O_NOREPORT, "no-report", OPT_FLAG, NULL, 0, 0, NULL, "do not write the report at the end", 0,
     0, &sweep_defaults.no_report},
    {O_NOFIGURES, "no-figures", OPT_FLAG, NULL, 0, 0, NULL,
     "write the report without its figures\n(gatelab report DIR draws them later)", 0, 0,
     &sweep_defaults.no_figures},
    {O_UNCOMMITTED, "uncommitted", OPT_FLAG, NULL, 0, 0, NULL,
     "run a confirmatory sweep ([primary]) whose sweep file,\n"
     "includes or presets are uncommitted or edited since\n"
     "their last commit (recorded in protocol.ini and every\n"
     "run file, and stated in the report's headline)",
     0, 0, &sweep_defaults.uncommitted},
    {0}};
const OptTable sweep_options = {
    .cmd = "sweep",
    .operands = "FILE [options]",
    .about = "Run every run of a sweep file (variants x seeds), one `gatelab train`\n"
             "child per run, then write the report over DIR.\n",
    .footer = "Resumable: runs whose file says status done (or diverged) are skipped,\n"
              "runs with a checkpoint resume, others restart. A failed run is\n"
              "recorded in DIR/sweep_status.tsv and the others continue; the exit\n"
              "code is 0 only when every run finished. Under mpirun (built with\n"
              "MPI) rank r runs the runs with index % size == r.\n"
              "A study too long for one sitting runs in pieces, one --seeds range at\n"
              "a time into the same DIR: each piece's report joins the rows of the\n"
              "earlier pieces from DIR/results.csv (docs/sweeps.md, \"A study in\n"
              "pieces\") and states its tests only when every declared run is there.\n",
    .rows = sweep_rows,
    OPT_DEFAULTS(sweep_defaults),
};

static int parse_args(int argc, char **argv, SweepArgs *a) {
    *a = sweep_defaults;
    OptParser op;
    opt_init(&op, &sweep_options, argc, argv);
    for (int c; (c = opt_parse(&op, a)) != OPT_END;) {
        if (c < 0) return opt_exit(c);
        if (c != O_SLURM) continue; /* the one OPT_SPECIAL row */
        a->emit = 1;
        a->slurm = op.str;
        /* "--emit-slurm PATH": take the next word unless it is the
         * sweep file or an option */
        if (!op.str && optind < argc && argv[optind][0] != '-') {
            const char *w = argv[optind];
            size_t n = strlen(w);
            if (n < 6 || strcmp(w + n - 6, ".sweep")) a->slurm = argv[optind++];
        }
    }
    if (op.optind != argc - 1) {
        fprintf(stderr, "gatelab sweep: expected one sweep FILE (try --help)\n");
        return 2;
    }
    a->file = argv[op.optind];
    if (!a->out && !a->list) {
        fprintf(stderr, "gatelab sweep: --out DIR is required\n");
        return 2;
    }
    if (a->seeds && (a->only >= 0 || a->emit)) {
        fprintf(stderr,
                "gatelab sweep: --seeds picks a piece of the sweep; it does not go with "
                "%s (drop one)\n",
                a->emit ? "--emit-slurm" : "--only");
        return 2;
    }
    return -1; /* go on */
}

/* --seeds LIST into o->seeds: every seed of LIST must be a seed of some run
 * of sw, so that a typo cannot make an empty piece. 0, or 2 after saying
 * why in one line. */
static int choose_seeds(const Sweep *sw, const char *list, SweepOptions *o,
                        unsigned long long *seeds) {
    char why[256];
    if (seed_list_parse(list, seeds, SWEEP_MAX_SEEDS, &o->n_seeds, why, sizeof why)) {
        fprintf(stderr, "gatelab sweep: --seeds: %s\n", why);
        return 2;
    }
    o->seeds = seeds;
    for (int k = 0; k < o->n_seeds; k++) {
        int found = 0;
        for (int i = 0; i < sw->n_runs && !found; i++) found = sw->runs[i].seed == seeds[k];
        if (!found) {
            fprintf(stderr,
                    "gatelab sweep: --seeds: seed %llu is not a seed of %s (gatelab sweep %s "
                    "--list shows its runs)\n",
                    seeds[k], sw->path, sw->path);
            return 2;
        }
    }
    int in = 0;
    for (int i = 0; i < sw->n_runs; i++) in += sweep_seed_chosen(o, sw->runs[i].seed);
    fprintf(stderr, "gatelab sweep: --seeds %s: %d of the sweep's %d runs\n", list, in, sw->n_runs);
    return 0;
}

/* World size mpirun (or srun) announced in the environment, 0 when not
 * started that way. MPI_Init is called only then, so a plain run of an MPI
 * build needs no MPI runtime. */
static int mpi_env_size(void) {
    const char *names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (v && atoi(v) > 0) return atoi(v);
    }
    return 0;
}

/* MPI_Init when mpirun started us for a real run (not --list, --emit-slurm
 * or an --only task); sets *rank and *size. Returns 1 when MPI is in use,
 * 0 when not, -1 (after saying why) when mpirun started a build without MPI. */
static int mpi_start(const SweepArgs *a, int *rank, int *size) {
    int wanted = !a->list && !a->emit && a->only < 0;
#if GATELAB_HAVE_MPI
    if (wanted && mpi_env_size() > 0) {
        MPI_Init(NULL, NULL);
        MPI_Comm_rank(MPI_COMM_WORLD, rank);
        MPI_Comm_size(MPI_COMM_WORLD, size);
        return 1;
    }
#else
    (void)rank, (void)size;
    if (mpi_env_size() > 1 && wanted) {
        fprintf(stderr, "gatelab sweep: started by mpirun but built without MPI "
                        "(every rank would run every run); rebuild with -Dmpi=enabled\n");
        return -1;
    }
#endif
    return 0;
}

static void mpi_end(int use_mpi) {
#if GATELAB_HAVE_MPI
    if (use_mpi) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
    }
#endif
    (void)use_mpi;
}

/* --emit-slurm: the sbatch script (default DIR/sweep.sbatch). Exit code. */
static int emit_slurm(const Sweep *sw, const SweepArgs *a) {
    char path[SWEEP_PATH_MAX + 32], err[1024];
    if (!a->slurm) snprintf(path, sizeof path, "%s/sweep.sbatch", a->out);
    else snprintf(path, sizeof path, "%s", a->slurm);
    if (sweep_slurm_check(a->file, a->out, path, err, sizeof err)) {
        fprintf(stderr, "gatelab sweep: %s\n", err);
        return 2;
    }
    /* Slurm opens --output DIR/logs/... before the script runs */
    char logs[SWEEP_PATH_MAX + 8];
    snprintf(logs, sizeof logs, "%s/logs", a->out);
    if (dir_make(logs)) {
        fprintf(stderr, "gatelab sweep: cannot create %s: %s\n", logs, strerror(errno));
        return 1;
    }
    if (sweep_write_slurm(sw, a->file, a->out, path, a->uncommitted, err, sizeof err)) {
        fprintf(stderr, "gatelab sweep: %s\n", err);
        return 1;
    }
    printf("%s: %d array tasks (sbatch %s)\n", path, sw->n_runs, path);
    return 0;
}

/* Run this rank's share, then the long-context evals and the report.
 * Returns the exit code (the worst over all ranks under MPI). */
static int run_sweep(const Sweep *sw, const SweepArgs *a, const SweepOptions *pick, int rank,
                     int size, int use_mpi) {
    char err[1024];
    SweepOptions o = {.out_dir = a->out,
                      .jobs = a->jobs,
                      .only = a->only,
                      .rank = rank,
                      .size = size,
                      .dry_run = a->dry,
                      .uncommitted = a->uncommitted,
                      .seeds = pick->seeds,
                      .n_seeds = pick->n_seeds};
    if (use_mpi && !o.jobs) o.jobs = 1;
    /* a confirmatory sweep pins the build's training fingerprint */
    char training[PROTOCOL_HASH_LEN];
    if (sw->protocol && !a->dry) {
        if (training_fingerprint(training, NULL, NULL, NULL, err, sizeof err) != 0) {
            fprintf(stderr, "gatelab sweep: %s\n", err);
            return 1;
        }
        o.training = training;
    }
    SweepSummary s;
    int r = sweep_execute(sw, &o, &s, err, sizeof err);
    if (r < 0) fprintf(stderr, "gatelab sweep: %s\n", err);
    int rc = r < 0 ? 2 : r;
#if GATELAB_HAVE_MPI
    if (use_mpi) { /* every rank reaches this, whatever its own rc */
        int all = 0;
        MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        rc = all;
    }
#endif
    /* the report covers a whole sweep: not one --only task, not a
     * sweep stopped by a signal */
    if (r >= 0 && !a->dry && !s.interrupted &&
        (sw->eval_lengths[0] || sw->intervene[0] || sw->eval_quant[0]) && sweep_post_runs(sw, &o) &&
        rc == 0)
        rc = 1;
    int whole = a->only < 0 && !a->dry && rc != 2 && !a->no_report && !(r >= 0 && s.interrupted);
    report_set_figures(!a->no_figures);
    if (whole && rank == 0 && write_report(a->out) && rc == 0) rc = 1;
    /* stopped by SIGINT/SIGTERM: the exit code says so (docs/failures.md) */
    if (r >= 0 && s.interrupted && rc != 2) rc = 130;
    return rc;
}

int cmd_sweep(int argc, char **argv) {
    SweepArgs a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    int rank = 0, size = 1;
    int use_mpi = mpi_start(&a, &rank, &size);
    if (use_mpi < 0) return 2;
    char err[1024];
    Sweep sw;
    if (sweep_parse(a.file, &sw, err, sizeof err)) {
        if (rank == 0) fprintf(stderr, "gatelab sweep: %s\n", err);
        mpi_end(use_mpi);
        return 2;
    }
    SweepOptions pick = {0};
    unsigned long long seeds[SWEEP_MAX_SEEDS];
    if (a.seeds && (rc = choose_seeds(&sw, a.seeds, &pick, seeds)) != 0) {
        /* said why */
    } else if (a.list) {
        print_run_list(&sw, &pick);
        rc = 0;
    } else if (a.emit) {
        rc = emit_slurm(&sw, &a);
    } else {
        if (rank == 0) env_note_hooks("gatelab sweep");
        rc = run_sweep(&sw, &a, &pick, rank, size, use_mpi);
    }
    sweep_free(&sw);
    mpi_end(use_mpi);
    return rc;
}
