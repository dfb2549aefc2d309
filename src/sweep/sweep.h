/* sweep.h: a sweep is a list of independent training runs, described by a
 * sweep file (INI, parsed with inih) and run as child `gatelab train`
 * processes: N at a time on one machine, one per MPI rank share, or one per
 * Slurm array task (--only K).
 *
 *   [sweep]
 *   preset = small            ; DIR/small.ini, DIR = the sweep file's dir
 *   seeds = 1,2,3             ; each run x each seed (init_seed, data_seed)
 *   set = steps=800           ; an override for every run (repeatable)
 *   include = other.sweep     ; that file's runs, with its own settings
 *   [primary]                 ; the confirmatory protocol (protocol.h),
 *   metric = f_attn           ; copied to OUT/protocol.ini for the report
 *   compare = g1-elem vs baseline
 *   [run g1-elem-lr2x]        ; every key becomes --set key=value
 *   variant = g1-elem
 *   lr = 6e-3
 *
 * Parsing expands the file into SweepRun records in a fixed order (this
 * file's runs in file order, each over its seeds; then each include's runs in
 * include order), so index K means the same run everywhere (--only K,
 * --list, the Slurm array and the MPI partition).
 */
#ifndef GATELAB_SWEEP_H
#define GATELAB_SWEEP_H

#include <stddef.h>

#include "util.h" /* PROTOCOL_HASH_LEN */

#define SWEEP_NAME_MAX 96 /* run names go into file names */
#define SWEEP_PATH_MAX 1024
#define SWEEP_MAX_SEEDS 64
#define SWEEP_MAX_RUNS 65536 /* runs of one sweep, includes expanded: more is refused */

typedef struct {
    char name[SWEEP_NAME_MAX]; /* from [run NAME] */
    unsigned long long seed;
    char id[SWEEP_NAME_MAX + 24];       /* NAME_sSEED: log and run file stem */
    char out_name[SWEEP_NAME_MAX + 28]; /* NAME_sSEED.h5 */
    char preset[SWEEP_PATH_MAX];        /* preset INI path, as the child sees it */
    char where[SWEEP_PATH_MAX + 16];    /* "file:line" of the [run] header */
    char **sets;                        /* "key=value", in the order applied */
    int n_sets;
    /* "1x,2x,4x,8x" from eval_lengths in the [sweep] of the file that
     * defines this run ("" = not evaluated). A run defined identically in
     * two files (trained once) carries the first non-empty value. */
    char eval_lengths[128];
    /* "gates-open bos-mean ..." from intervene in the same [sweep] ("" =
     * none), with the same scope: `gatelab intervene` after training. */
    char intervene[96];
    /* "w8a8,w4a4" from eval_quant in the same [sweep] ("" = none), with
     * the same scope: `gatelab eval --quant` after training. */
    char eval_quant[64];
    /* eval_quant_keep_first = K and eval_quant_source = 1 in the same
     * [sweep] (0: not given): that eval's --quant-keep-first K and
     * --quant-source (sweep_quant_argv). */
    int eval_quant_keep_first, eval_quant_source;
    /* 1 from eval_needle = 1 in the same [sweep] (which also sets
     * eval_lengths): the eval adds --needle, the needle task at each of
     * its lengths; a run whose /lceval lacks it is evaluated again. */
    int eval_needle;
} SweepRun;

typedef struct {
    char path[SWEEP_PATH_MAX]; /* the top-level sweep file */
    SweepRun *runs;
    int n_runs;
    /* [sweep] eval_lengths = 1,2,4,8: after training, each run that ended
     * done and carries SweepRun.eval_lengths is evaluated by `gatelab eval
     * --lengths 1x,2x,4x,8x --both`. Here: the first run's non-empty value
     * ("" = no run is evaluated), only to tell whether any run is. */
    char eval_lengths[128];
    /* [sweep] intervene = all (or kinds): after training (and eval), each
     * run that ended done and carries SweepRun.intervene and has no
     * /intervene yet gets `gatelab intervene RUN KIND...`. Here: the first
     * run's non-empty value, only to tell whether any run does. */
    char intervene[96];
    /* [sweep] eval_quant = w8a8,w8a8-pct,w4a4: after training, each run
     * that ended done, carries SweepRun.eval_quant and has no /quant yet
     * gets `gatelab eval RUN --quant LIST`. Here: the first run's
     * non-empty value, only to tell whether any run does. */
    char eval_quant[64];
    /* The top-level file's [primary] section (protocol.h) as "key =
     * value" lines, or NULL; included files' [primary] sections are not
     * read into it. */
    char *protocol;
    /* Every file the sweep reads, as real paths: the top-level sweep file
     * first, then each include in the order read, then each distinct
     * preset. A confirmatory sweep pins them all (sweep_source). */
    char **files;
    int n_files;
} Sweep;

/* Parse and expand a sweep file (and its includes). 0, or -1 with a
 * one-line reason that starts with "FILE:LINE: ". */
int sweep_parse(const char *path, Sweep *sw, char *err, size_t errlen);
void sweep_free(Sweep *sw);
/* sweepfile.c's helper (sweepproto.c): read[n_read] (real paths of the
 * sweep files read) and each run's preset into sw->files; -1 when memory
 * runs out. */
int sweep_note_files(Sweep *sw, char *const *read, int n_read);

/* One file a confirmatory sweep pins: its last commit ("none": never
 * committed or outside a repository), protocol_hash_text of its bytes,
 * and its path in the repository (the real path outside one). */
typedef struct {
    char commit[64];
    char hash[PROTOCOL_HASH_LEN];
    char rel[SWEEP_PATH_MAX];
} SweepPinned;

/* Where a sweep's files stand in git (sweepgit.c), recorded with its
 * protocol: the repository's top (real path; "" outside one), the sweep
 * file's last commit ("unknown" without git or outside a repository,
 * "none" when never committed), whether any pinned file differs from its
 * last commit, was never committed or leaves the repository (1, 0; -1
 * unknown), why (naming the first such file), and whether the sweep ran
 * with --uncommitted. */
typedef struct {
    char file[SWEEP_PATH_MAX];
    char repo[SWEEP_PATH_MAX];
    char commit[64];
    int dirty, uncommitted;
    char why[SWEEP_PATH_MAX + 96];
    int n_files;
    SweepPinned *files; /* sw->files in order */
} SweepSource;
/* Asks git about every file of sw (sw->files): `git rev-parse
 * --show-toplevel` in the sweep file's directory, then for each file
 * `git log -1 --format=%H -- REL` and `git cat-file blob COMMIT:REL`
 * against its bytes. Symbolic links are resolved first, so a file is
 * judged by what it points to; one outside the repository is not clean.
 * git runs without GIT_* variables (gitrun.h). Never fails; free with
 * sweep_source_free. */
void sweep_source(const Sweep *sw, SweepSource *s);
void sweep_source_free(SweepSource *s);
/* 0 when s is committed and clean or uncommitted is set; else -1 with one
 * line that names the file, why, and --uncommitted. */
int sweep_source_check(const SweepSource *s, int uncommitted, char *err, size_t errlen);

/* OUT_DIR/protocol.ini from sw->protocol (nothing when NULL), written as
 * every finished output is (atomic_write.h), with src's [source] and
 * [pin] sections (training, when not NULL, as its `training =` line) and
 * the expanded run list as [runs] (protocol_pin.h). One whose `training =`
 * differs from training was made by a build that trains otherwise: refused
 * (such a build cannot add runs to the study).
 * An OUT_DIR/protocol.ini the sweep did not write (a symbolic link, not a
 * regular file, or a file that does not start with PIN_HEADER) is refused,
 * never replaced; one that differs from the new text only in its
 * `gatelab =` line (a rerun by another build) is kept as it is, so the
 * runs made before keep its hash. 0, or -1 with a reason. */
int sweep_write_protocol(const Sweep *sw, const SweepSource *src, const char *out_dir,
                         const char *training, char *err, size_t errlen);

/* What the runner does with one run, decided from files in the out dir. */
typedef enum {
    SWEEP_START = 0,    /* no run file: train from scratch */
    SWEEP_RESUME,       /* run file + checkpoint: train --resume */
    SWEEP_RESTART,      /* run file but no checkpoint: train --force */
    SWEEP_SKIP_DONE,    /* status done: finished, not rerun */
    SWEEP_SKIP_DIVERGED /* status diverged: finished (recorded), not rerun */
} SweepAction;

const char *sweep_action_name(SweepAction a);

/* Decide the action for run r whose files live in out_dir. */
SweepAction sweep_plan_run(const char *out_dir, const SweepRun *r);

/* MPI partition: rank owns run index i when i % size == rank. */
int sweep_rank_owns(int index, int rank, int size);

typedef struct {
    const char *out_dir;
    int jobs;        /* parallel children; <= 0: online cores */
    int only;        /* run only this index; -1: all */
    int rank, size;  /* MPI share (0, 1 without MPI) */
    int dry_run;     /* print the plan and commands, run nothing */
    int uncommitted; /* run a [primary] sweep from an uncommitted or edited file */
    /* a piece of the sweep (--seeds): only the runs of these n_seeds
     * seeds; n_seeds 0: every run */
    const unsigned long long *seeds;
    int n_seeds;
    /* this build's training fingerprint (src/cli/fingerprint.h), pinned
     * in a confirmatory sweep's protocol.ini; NULL: not pinned */
    const char *training;
    double progress_every; /* seconds between progress lines; 0: 5 */
    const char *train_exe; /* the gatelab binary every child runs (train,
                            * eval, intervene); NULL: testhook_exe(),
                            * else self */
} SweepOptions;

/* 1 when a run of this seed is in o's piece (every seed when o->n_seeds
 * is 0). */
int sweep_seed_chosen(const SweepOptions *o, unsigned long long seed);

typedef struct {
    int total;                               /* runs in this process's share */
    int done, diverged, failed, interrupted; /* skipped runs count too */
    int skipped;                             /* of done+diverged, how many were already finished */
} SweepSummary;

/* The fd on which a trainer child writes its progress lines (the protocol
 * of train_loop.h, `gatelab train --progress-fd`): the write end of a pipe
 * whose read end the sweep polls for its progress lines. */
#define SWEEP_PROGRESS_FD 3
#define SWEEP_PROGRESS_FD_STR "3"

/* Seconds until a sweep's runs are all done, as its progress lines show
 * it ("ETA ..."): the mean ETA of the running runs that reported one (eta[running], -1 for a run
 * not heard from yet), plus the `left` runs not started, each taking the
 * mean wall time of the done_n runs finished (done_secs in all; before
 * any, the running runs' elapsed[i] + eta[i]), `jobs` at a time. -1 when
 * nothing is known yet. */
double sweep_eta_estimate(const double *eta, const double *elapsed, int running, int left,
                          double done_secs, int done_n, int jobs);

/* Run this process's share of sw. Every child's stdout+stderr goes to
 * OUT/logs/ID.log, its progress to the sweep through a pipe on
 * SWEEP_PROGRESS_FD; every child that ends is recorded in
 * OUT/sweep_status.tsv. SIGINT/SIGTERM are forwarded to children, which are
 * waited for. Returns 0 when every run in the share finished (done or
 * diverged), 1 when some failed or were interrupted, -1 with a reason when
 * the sweep could not start (bad out dir, bad --only). */
int sweep_execute(const Sweep *sw, const SweepOptions *o, SweepSummary *sum, char *err,
                  size_t errlen);

/* Before any work: 0 when the sweep file, the out dir and the script path
 * can stand in a Slurm script (no control character; sweepslurm.c), else
 * -1 with one line naming the path and its option. */
int sweep_slurm_check(const char *sweep_file, const char *out_dir, const char *script_path,
                      char *err, size_t errlen);

/* Write an sbatch job-array script (sweepslurm.c): one array task per
 * run, each running `gatelab sweep FILE --out DIR --only
 * $SLURM_ARRAY_TASK_ID` (and `--uncommitted` when uncommitted: each task
 * checks the sweep file). Every path is one sh word in single quotes, so
 * no $(...), backquote or quote in a path runs or splits anything; a
 * path with a control character is refused (sweep_slurm_check). */
int sweep_write_slurm(const Sweep *sw, const char *sweep_file, const char *out_dir,
                      const char *script_path, int uncommitted, char *err, size_t errlen);

/* After training: `gatelab eval` of every finished run at its
 * eval_lengths (with --needle under eval_needle), then `gatelab intervene`
 * at its intervene kinds (runs that already hold /lceval, with the needle
 * when asked, or /intervene, skip that step). Returns how many steps
 * failed. */
int sweep_post_runs(const Sweep *sw, const SweepOptions *o);

/* The arguments of run r's quantized eval, `gatelab eval H5 --quant LIST
 * [--quant-keep-first K] [--quant-source]`, from "eval" on into argv[8]
 * (NULL-ended; K's text in kbuf[klen]); argv points into r, h5 and kbuf.
 * Returns the count. */
int sweep_quant_argv(const SweepRun *r, const char *h5, char *kbuf, size_t klen, char **argv);

#endif
