/* sweep.c: the sweep runner. Plans each run from the files already in the
 * out dir (resume), runs `gatelab train` children N at a time (each
 * single-threaded: side-by-side runs give the most throughput for small
 * models), isolates failures, forwards SIGINT/SIGTERM, writes Slurm
 * scripts. The `gatelab sweep` command is src/cli/cmd_sweep.c.
 */
#include "sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "atomic_write.h"
#include "outpath.h"
#include "protocol.h"     /* PROTO_FILE */
#include "runfile_read.h" /* runfile_read_status, runfile_has_group */
#include "runschema.h"
#include "runlock.h"
#include "stop.h"
#include "testhook.h"
#include "train_loop.h" /* TRAIN_DIVERGED */
#include "util.h"

const char *sweep_action_name(SweepAction a) {
    switch (a) {
    case SWEEP_START: return "start";
    case SWEEP_RESUME: return "resume";
    case SWEEP_RESTART: return "restart";
    case SWEEP_SKIP_DONE: return "skip (done)";
    case SWEEP_SKIP_DIVERGED: return "skip (diverged)";
    }
    return "?";
}

/* ---- planning ---- */

static void run_path(char *out, size_t len, const char *dir, const SweepRun *r,
                     const char *suffix) {
    snprintf(out, len, "%s/%s%s", dir, r->out_name, suffix);
}

SweepAction sweep_plan_run(const char *out_dir, const SweepRun *r) {
    char h5[SWEEP_PATH_MAX + 256], ckpt[SWEEP_PATH_MAX + 256], st[32];
    run_path(h5, sizeof h5, out_dir, r, "");
    run_path(ckpt, sizeof ckpt, out_dir, r, ".ckpt");
    int have_h5 = file_exists(h5), have_ckpt = file_exists(ckpt);
    if (!have_h5) /* a checkpoint without its run file cannot be resumed */
        return have_ckpt ? SWEEP_RESTART : SWEEP_START;
    if (runfile_read_status(h5, st, sizeof st) == 0) {
        if (!strcmp(st, RS_STATUS_DONE)) return SWEEP_SKIP_DONE;
        if (!strcmp(st, RS_STATUS_DIVERGED)) return SWEEP_SKIP_DIVERGED;
    }
    return have_ckpt ? SWEEP_RESUME : SWEEP_RESTART;
}

int sweep_rank_owns(int index, int rank, int size) { return size <= 1 || index % size == rank; }

/* ---- running ---- */

typedef struct {
    pid_t pid;
    int run;
    double t0;
    int progress_fd; /* read end of the child's progress pipe; -1 none */
    char line[128];  /* bytes of its progress line not yet ended */
    char last[96];   /* its latest progress: "step 120/800 ETA 1m02s" */
    long long eta;   /* its latest ETA in seconds; -1 before its first line */
} Child;

typedef struct {
    const Sweep *sw;
    const SweepOptions *o;
    SweepSummary *sum;
    const char *exe;
    Child *kids;
    int n_kids, jobs;  /* running children, and at most this many */
    int *todo, n_todo; /* run indices still to start, in order */
    SweepAction *act;  /* planned action per run index */
    double last_progress;
    int left;                                /* runs not started yet */
    double run_secs, run_count;              /* wall seconds of the runs finished so far */
    char protocol_path[SWEEP_PATH_MAX + 32]; /* OUT/protocol.ini, passed to each child */
} Runner;

/* argv of the child: train --config P --set threads=1 --set ... --out F
 * --progress-fd N [--protocol FILE] [--resume | --force], NULL-terminated:
 * at most 13 entries besides the 2 per set, and the NULL. */
static char **child_argv(const Runner *R, const SweepRun *r, SweepAction a, char *outpath) {
    int n = 0, cap = 2 * r->n_sets + 14;
    char **v = calloc((size_t)cap, sizeof *v);
    if (!v) return NULL;
    v[n++] = "gatelab";
    v[n++] = "train";
    v[n++] = "--config";
    v[n++] = (char *)r->preset;
    /* first, so a run that sets threads itself wins */
    v[n++] = "--set";
    v[n++] = "threads=1";
    for (int i = 0; i < r->n_sets; i++) {
        v[n++] = "--set";
        v[n++] = r->sets[i];
    }
    v[n++] = "--out";
    v[n++] = outpath;
    v[n++] = "--progress-fd";
    v[n++] = SWEEP_PROGRESS_FD_STR;
    if (R->sw->protocol) {
        v[n++] = "--protocol";
        v[n++] = (char *)R->protocol_path;
    }
    if (a == SWEEP_RESUME) v[n++] = "--resume";
    if (a == SWEEP_RESTART) v[n++] = "--force";
    return v;
}

static void print_cmd(FILE *f, const char *exe, char **argv) {
    fprintf(f, "%s", exe);
    for (int i = 1; argv[i]; i++) fprintf(f, " %s", argv[i]);
    fputc('\n', f);
}

/* In a freshly forked child: SIGTERM when the sweep process dies, even by
 * SIGKILL, so a trainer checkpoints and stops instead of running on as an
 * orphan that a rerun would collide with (it sees the run interrupted). */
static void die_with_parent(pid_t parent) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) raise(SIGTERM); /* the parent died before the prctl */
}

static void nap(double s) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* A trainer of an earlier sweep that was killed may still be saving its
 * checkpoint (die_with_parent): wait for its lock, up to LOCK_WAIT seconds
 * (testhook_lock_wait), so the rerun resumes the run instead of being
 * refused. */
#define LOCK_WAIT 60.0
static void wait_for_lock(const char *out, const char *id) {
    double t0 = now_seconds(), wait = testhook_lock_wait(LOCK_WAIT);
    int said = 0;
    while (runlock_held(out) && now_seconds() - t0 < wait && !stop_requested()) {
        if (!said++)
            fprintf(stderr, "sweep: %s is still being written by an earlier process; waiting\n",
                    id);
        nap(0.2);
    }
}

/* The log of run r in out_dir: OUT/logs/ID.log. */
static void log_path(char *out, size_t len, const char *dir, const SweepRun *r) {
    snprintf(out, len, "%s/logs/%s.log", dir, r->id);
}

/* Open run r's log for appending and write the "== gatelab sweep: WHAT"
 * header line of one child (what: the action, or the command). Returns the
 * fd, or -1 with errno. */
static int open_log(const char *dir, const SweepRun *r, const char *what) {
    char log[SWEEP_PATH_MAX + 256];
    log_path(log, sizeof log, dir, r);
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd >= 0) dprintf(fd, "== gatelab sweep: %s\n", what);
    return fd;
}

/* fork + exec of exe with argv: stdin from /dev/null, stdout and stderr
 * into log_fd, single-threaded BLAS, progress_w (when >= 0) as the
 * child's fd SWEEP_PROGRESS_FD, and SIGTERM when the sweep dies
 * (die_with_parent). Returns the pid, or -1 with errno. */
static pid_t spawn_child(const char *exe, char *const *argv, int log_fd, int progress_w) {
    fflush(NULL);
    pid_t parent = getpid(), pid = fork();
    if (pid != 0) return pid;
    die_with_parent(parent);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    if (progress_w >= 0) {
        if (progress_w == SWEEP_PROGRESS_FD) fcntl(progress_w, F_SETFD, 0); /* keep it open */
        else dup2(progress_w, SWEEP_PROGRESS_FD);
    }
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    setenv("OMP_NUM_THREADS", "1", 1);
    execv(exe, argv);
    dprintf(2, "gatelab sweep: cannot run %s: %s\n", exe, strerror(errno));
    _exit(127);
}

/* Start run r's trainer with its log and a progress pipe into *c. 0, or
 * -1 with errno. */
static int spawn(const Runner *R, const SweepRun *r, SweepAction a, Child *c) {
    char out[SWEEP_PATH_MAX + 256], what[SWEEP_PATH_MAX + 128], hdr[64];
    run_path(out, sizeof out, R->o->out_dir, r, "");
    char **argv = child_argv(R, r, a, out);
    if (!argv) return -1;
    /* a header per attempt, so a resumed run's log reads as a history */
    time_t now = time(NULL);
    strftime(hdr, sizeof hdr, "%Y-%m-%d %H:%M:%S", localtime(&now));
    snprintf(what, sizeof what, "%s %s at %s", sweep_action_name(a), r->id, hdr);
    int fd = open_log(R->o->out_dir, r, what), p[2] = {-1, -1};
    if (fd < 0 || pipe2(p, O_CLOEXEC) != 0) {
        if (fd >= 0) close(fd);
        free(argv);
        return -1;
    }
    FILE *lf = fdopen(dup(fd), "a");
    if (lf) {
        fputs("== ", lf);
        print_cmd(lf, R->exe, argv);
        fclose(lf);
    }
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    *c = (Child){.pid = spawn_child(R->exe, argv, fd, p[1]), .progress_fd = p[0]};
    int e = errno;
    close(fd), close(p[1]), free(argv);
    if (c->pid < 0) close(p[0]);
    errno = e;
    return c->pid < 0 ? -1 : 0;
}

/* One row per ended child: name, seed, exit code, seconds, result. */
static void record(const Runner *R, const SweepRun *r, int code, double secs, const char *result) {
    char path[SWEEP_PATH_MAX + 32], row[512];
    snprintf(path, sizeof path, "%s/sweep_status.tsv", R->o->out_dir);
    /* O_EXCL: exactly one process (of several MPI ranks) writes the header */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd >= 0) dprintf(fd, "name\tseed\texit\tseconds\tresult\n");
    else if (errno == EEXIST) fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        fprintf(stderr, "sweep: cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    /* one write() per row: O_APPEND keeps rows whole across MPI ranks */
    int k =
        snprintf(row, sizeof row, "%s\t%llu\t%d\t%.1f\t%s\n", r->name, r->seed, code, secs, result);
    if (k > 0 && write(fd, row, (size_t)k) != k)
        fprintf(stderr, "sweep: short write to %s\n", path);
    close(fd);
}

/* One line of the progress protocol (train_loop.h), "progress STEP STEPS
 * ETA_SECONDS", as the text of a progress line: "step 120/800 ETA 1m02s".
 * Lines that do not parse are skipped. */
static void progress_line(Child *c, const char *line) {
    long long step, steps, eta;
    if (sscanf(line, "progress %lld %lld %lld", &step, &steps, &eta) != 3) return;
    snprintf(c->last, sizeof c->last, "step %lld/%lld ETA %lldm%02llds", step, steps, eta / 60,
             eta % 60);
    c->eta = eta;
}

/* Read what child c's progress pipe holds (never blocking) and keep its
 * latest complete line. */
static void child_progress(Child *c) {
    char buf[512];
    ssize_t n;
    while (c->progress_fd >= 0 && (n = read(c->progress_fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < n; i++) {
            size_t len = strlen(c->line);
            if (buf[i] == '\n') {
                progress_line(c, c->line);
                c->line[0] = '\0';
            } else if (len + 1 < sizeof c->line) {
                c->line[len] = buf[i], c->line[len + 1] = '\0';
            }
        }
    }
}

double sweep_eta_estimate(const double *eta, const double *elapsed, int running, int left,
                          double done_secs, int done_n, int jobs) {
    double busy = 0, guess = 0;
    int known = 0;
    for (int i = 0; i < running; i++) {
        if (eta[i] < 0) continue;
        busy += eta[i], guess += elapsed[i] + eta[i], known++;
    }
    if (running > known && done_n == 0) return -1; /* a run not heard from yet */
    double per = done_n > 0 ? done_secs / done_n : known ? guess / known : 0;
    if (per <= 0 && left > 0) return -1;
    /* the running runs end first; the rest queue behind them, jobs at a time */
    return (known ? busy / known : 0) + (double)left * per / (jobs > 0 ? jobs : 1);
}

/* This rank's sweep ETA from its runner (sweep_eta_estimate). */
static double sweep_eta(const Runner *R) {
    double *eta = calloc((size_t)R->n_kids + 1, sizeof *eta);
    double *el = calloc((size_t)R->n_kids + 1, sizeof *el);
    double t = -1;
    for (int i = 0; eta && el && i < R->n_kids; i++)
        eta[i] = (double)R->kids[i].eta, el[i] = now_seconds() - R->kids[i].t0;
    if (eta && el)
        t = sweep_eta_estimate(eta, el, R->n_kids, R->left, R->run_secs, (int)R->run_count,
                               R->jobs);
    free(eta), free(el);
    return t;
}

static void progress(Runner *R, const char *tag) {
    const SweepSummary *s = R->sum;
    char line[2048];
    for (int i = 0; i < R->n_kids; i++) child_progress(&R->kids[i]);
    double eta = R->n_kids > 0 || R->left > 0 ? sweep_eta(R) : 0;
    char et[32] = "?";
    if (eta >= 0) {
        long t = (long)(eta + 0.5);
        if (t >= 3600) snprintf(et, sizeof et, "%ldh%02ldm", t / 3600, (t / 60) % 60);
        else snprintf(et, sizeof et, "%ldm%02lds", t / 60, t % 60);
    }
    int k = snprintf(line, sizeof line, "%s: %d/%d done, %d failed, ETA %s", tag,
                     s->done + s->diverged, s->total, s->failed, et);
    for (int i = 0; i < R->n_kids && k > 0 && (size_t)k < sizeof line; i++) {
        Child *c = &R->kids[i];
        k += snprintf(line + k, sizeof line - (size_t)k, " | %s %s", R->sw->runs[c->run].id,
                      c->last[0] ? c->last : "starting");
    }
    fprintf(stderr, "%s\n", line);
}

static void child_ended(Runner *R, int slot, int status, const char *tag) {
    Child *c = &R->kids[slot];
    const SweepRun *r = &R->sw->runs[c->run];
    double secs = now_seconds() - c->t0;
    int code = WIFEXITED(status)     ? WEXITSTATUS(status)
               : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                     : -1;
    const char *result;
    if (code == 0 || code == TRAIN_DIVERGED) R->run_secs += secs, R->run_count++;
    if (code == 0) {
        result = RS_STATUS_DONE;
        R->sum->done++;
    } else if (code == TRAIN_DIVERGED) {
        result = RS_STATUS_DIVERGED;
        R->sum->diverged++;
    } else if (stop_requested()) {
        result = "interrupted"; /* resumable: the next sweep picks it up */
        R->sum->interrupted++;
    } else {
        result = WIFSIGNALED(status) ? "killed" : "failed";
        R->sum->failed++;
    }
    record(R, r, code, secs, result);
    if (code == 0 || code == TRAIN_DIVERGED)
        fprintf(stderr, "%s: %s %s (%.0f s)\n", tag, r->id, result, secs);
    else {
        char log[SWEEP_PATH_MAX + 256];
        log_path(log, sizeof log, R->o->out_dir, r);
        fprintf(stderr, "%s: %s %s (exit %d, %.0f s), log %s\n", tag, r->id, result, code, secs,
                log);
    }
    if (c->progress_fd >= 0) close(c->progress_fd);
    R->kids[slot] = R->kids[--R->n_kids];
}

/* Reap the children that have ended, without blocking; a child lost to
 * waitpid counts as failed. */
static void reap(Runner *R, const char *tag) {
    for (int i = 0; i < R->n_kids;) {
        int status;
        pid_t p = waitpid(R->kids[i].pid, &status, WNOHANG);
        if (p == R->kids[i].pid) {
            child_ended(R, i, status, tag); /* slot i now holds another */
            continue;
        }
        if (p < 0 && errno != EINTR) { /* lost child: count it failed */
            child_ended(R, i, 255 << 8, tag);
            continue;
        }
        i++;
    }
}

static void forward_signal(Runner *R, int *sent) {
    int n = stop_count();
    if (*sent >= n) return;
    /* first signal: pass it on so trainers checkpoint; a second one kills */
    int sig = n > 1 ? SIGKILL : stop_signal();
    for (int i = 0; i < R->n_kids; i++) kill(R->kids[i].pid, sig);
    *sent = n;
}

static const char *resolve_exe(const SweepOptions *o) {
    if (o->train_exe) return o->train_exe;
    const char *e = testhook_exe();
    if (e) return e;
    static char self[SWEEP_PATH_MAX]; /* the real path reads better in logs */
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return "/proc/self/exe";
    self[n] = '\0';
    return self;
}

int sweep_seed_chosen(const SweepOptions *o, unsigned long long seed) {
    for (int k = 0; k < o->n_seeds; k++)
        if (o->seeds[k] == seed) return 1;
    return o->n_seeds == 0;
}

/* Run i is this process's: in its --only, MPI share and --seeds piece. */
static int in_share(const Sweep *sw, const SweepOptions *o, int i) {
    if (!sweep_seed_chosen(o, sw->runs[i].seed)) return 0;
    if (o->only >= 0) return i == o->only;
    return sweep_rank_owns(i, o->rank, o->size);
}

/* --dry-run: the action and command line run i would get. */
static void print_dry_run(const Runner *R, int i) {
    const SweepRun *r = &R->sw->runs[i];
    char out[SWEEP_PATH_MAX + 256];
    run_path(out, sizeof out, R->o->out_dir, r, "");
    char **argv = child_argv(R, r, R->act[i], out);
    printf("[%d] %s: %s: ", i, r->id, sweep_action_name(R->act[i]));
    if (argv) print_cmd(stdout, R->exe, argv);
    free(argv);
}

/* Plan every run of this process's share from the out dir: finished runs
 * are counted and skipped (that is what makes a sweep resumable), the
 * others queued in R->todo. */
static void plan_share(Runner *R) {
    SweepSummary *sum = R->sum;
    for (int i = 0; i < R->sw->n_runs; i++) {
        if (!in_share(R->sw, R->o, i)) continue;
        sum->total++;
        R->act[i] = sweep_plan_run(R->o->out_dir, &R->sw->runs[i]);
        if (R->o->dry_run) print_dry_run(R, i);
        if (R->act[i] == SWEEP_SKIP_DONE || R->act[i] == SWEEP_SKIP_DIVERGED) {
            sum->skipped++;
            if (R->act[i] == SWEEP_SKIP_DONE) sum->done++;
            else sum->diverged++;
        } else {
            R->todo[R->n_todo++] = i;
        }
    }
}

/* Start queued runs while a slot is free; a run that cannot start is
 * recorded failed and the queue goes on. Each run's action is decided
 * again right before it starts, after waiting for a process still writing
 * it (wait_for_lock): the plan was made from the files as they were, and
 * that process (an earlier sweep's trainer, another sweep on this --out)
 * may have finished or checkpointed the run since. */
static void start_runs(Runner *R, int *next, const char *tag) {
    while (!stop_requested() && *next < R->n_todo && R->n_kids < R->jobs) {
        int i = R->todo[(*next)++];
        const SweepRun *r = &R->sw->runs[i];
        char out[SWEEP_PATH_MAX + 256];
        run_path(out, sizeof out, R->o->out_dir, r, "");
        wait_for_lock(out, r->id);
        if (stop_requested()) break; /* run_queue starts nothing more */
        R->act[i] = sweep_plan_run(R->o->out_dir, r);
        if (R->act[i] == SWEEP_SKIP_DONE || R->act[i] == SWEEP_SKIP_DIVERGED) {
            R->sum->skipped++;
            if (R->act[i] == SWEEP_SKIP_DONE) R->sum->done++;
            else R->sum->diverged++;
            fprintf(stderr, "%s: %s %s (finished by another process meanwhile)\n", tag,
                    sweep_action_name(R->act[i]), r->id);
            continue;
        }
        Child c;
        if (spawn(R, r, R->act[i], &c) != 0) {
            fprintf(stderr, "%s: cannot start %s: %s\n", tag, r->id, strerror(errno));
            record(R, r, -1, 0.0, "failed");
            R->sum->failed++;
            continue;
        }
        fprintf(stderr, "%s: %s %s\n", tag, sweep_action_name(R->act[i]), r->id);
        c.run = i, c.t0 = now_seconds(), c.eta = -1;
        R->kids[R->n_kids++] = c;
    }
}

/* Work through the queue until every child has ended; after a signal start
 * nothing more and wait for the running children. */
static void run_queue(Runner *R, const char *tag) {
    double every = R->o->progress_every > 0 ? R->o->progress_every : 5.0;
    R->last_progress = now_seconds();
    int next = 0, sent = 0;
    while (next < R->n_todo || R->n_kids > 0) {
        if (stop_requested()) forward_signal(R, &sent);
        start_runs(R, &next, tag);
        if (stop_requested() && next < R->n_todo) next = R->n_todo; /* start nothing more */
        R->left = R->n_todo - next;
        reap(R, tag);
        if (now_seconds() - R->last_progress >= every && R->n_kids > 0) {
            progress(R, tag);
            R->last_progress = now_seconds();
        }
        if (R->n_kids > 0) nap(0.1);
    }
}

static void runner_free(Runner *R) { free(R->todo), free(R->act), free(R->kids); }

/* The out dir's logs/ (not for a dry run) and the tag of progress lines;
 * -1 with a reason when logs/ cannot be made. */
static int prepare_out(const SweepOptions *o, char *tag, size_t taglen, char *err, size_t errlen) {
    char logs[SWEEP_PATH_MAX + 8];
    snprintf(logs, sizeof logs, "%s/logs", o->out_dir);
    if (!o->dry_run && dir_make(logs))
        return seterr(err, errlen, "cannot create %s: %s", logs, strerror(errno));
    char tsv[SWEEP_PATH_MAX + 32];
    snprintf(tsv, sizeof tsv, "%s/sweep_status.tsv", o->out_dir);
    if (!o->dry_run && outpath_check(tsv, OUT_SWEEP_TSV, 1, err, errlen) != 0) return -1;
    if (o->size > 1) snprintf(tag, taglen, "sweep[%d/%d]", o->rank, o->size);
    else snprintf(tag, taglen, "sweep");
    return 0;
}

int sweep_execute(const Sweep *sw, const SweepOptions *o, SweepSummary *sum, char *err,
                  size_t errlen) {
    memset(sum, 0, sizeof *sum);
    if (o->only >= sw->n_runs || o->only < -1)
        return seterr(err, errlen, "--only %d: %s has runs 0..%d", o->only, sw->path,
                      sw->n_runs - 1);
    char tag[32];
    if (prepare_out(o, tag, sizeof tag, err, errlen)) return -1;
    if (sw->protocol && !o->dry_run) {
        SweepSource src;
        sweep_source(sw, &src);
        src.uncommitted = o->uncommitted;
        int bad = sweep_source_check(&src, o->uncommitted, err, errlen) != 0 ||
                  sweep_write_protocol(sw, &src, o->out_dir, o->training, err, errlen) != 0;
        sweep_source_free(&src);
        if (bad) return -1;
    }
    int jobs = o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
    Runner R = {.sw = sw, .o = o, .sum = sum, .exe = resolve_exe(o), .jobs = jobs < 1 ? 1 : jobs};
    snprintf(R.protocol_path, sizeof R.protocol_path, "%s/%s", o->out_dir, PROTO_FILE);
    R.todo = calloc((size_t)sw->n_runs, sizeof *R.todo);
    R.act = calloc((size_t)sw->n_runs, sizeof *R.act);
    R.kids = calloc((size_t)R.jobs, sizeof *R.kids);
    if (!R.todo || !R.act || !R.kids) {
        runner_free(&R);
        return seterr(err, errlen, "out of memory");
    }
    plan_share(&R);
    if (o->dry_run) {
        runner_free(&R);
        return 0;
    }
    if (sum->skipped)
        fprintf(stderr, "%s: %d of %d runs already finished (skipped)\n", tag, sum->skipped,
                sum->total);
    StopGuard guard; /* SIGINT/SIGTERM only record while children run (run_queue passes them on) */
    stop_arm(&guard);
    run_queue(&R, tag);
    stop_disarm(&guard);
    int finished = sum->done + sum->diverged;
    if (stop_requested())
        sum->interrupted += sum->total - finished - sum->failed - sum->interrupted;
    progress(&R, tag);
    runner_free(&R);
    return finished == sum->total ? 0 : 1;
}

/* ---- after training: long-context eval and interventions ---- */

/* `gatelab ARGV...` (argv[0] is the subcommand) run by exe to its end,
 * output appended to run r's log after a "== gatelab sweep: ..." line
 * naming the command. 0 when it exited 0, else -1. */
static int post_child(const char *exe, const char *dir, const SweepRun *r, char *const *argv) {
    char what[512] = "", *args[24] = {"gatelab"};
    int n = 1;
    for (int i = 0; argv[i] && n < 23; i++) {
        args[n++] = argv[i];
        size_t k = strlen(what);
        snprintf(what + k, sizeof what - k, "%s%s", i ? " " : "", argv[i]);
    }
    args[n] = NULL;
    int fd = open_log(dir, r, what);
    if (fd < 0) return -1;
    pid_t pid = spawn_child(exe, args, fd, -1);
    close(fd);
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0) return -1;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* `gatelab intervene H5 KIND...` with the kinds of a space-separated list. */
static int intervene_child(const char *exe, const char *dir, const SweepRun *r, const char *h5) {
    char buf[128], *argv[20] = {"intervene", (char *)h5};
    int n = 2;
    snprintf(buf, sizeof buf, "%s", r->intervene);
    for (char *save = NULL, *t = strtok_r(buf, " ", &save); t && n < 19;
         t = strtok_r(NULL, " ", &save))
        argv[n++] = t;
    argv[n] = NULL;
    return post_child(exe, dir, r, argv);
}

/* See sweep.h. */
int sweep_quant_argv(const SweepRun *r, const char *h5, char *kbuf, size_t klen, char **argv) {
    int n = 0;
    argv[n++] = "eval", argv[n++] = (char *)h5;
    argv[n++] = "--quant", argv[n++] = (char *)r->eval_quant;
    if (r->eval_quant_keep_first > 0) {
        snprintf(kbuf, klen, "%d", r->eval_quant_keep_first);
        argv[n++] = "--quant-keep-first", argv[n++] = kbuf;
    }
    if (r->eval_quant_source) argv[n++] = "--quant-source";
    argv[n] = NULL;
    return n;
}

/* The post-training steps of one run that ended done (diverged runs have
 * no final weights), run by exe: eval if asked and not yet in the file
 * (nor the needle, when asked), then the interventions likewise. Returns the steps that failed. */
static int post_run(const char *exe, const char *dir, const SweepRun *r, const char *h5) {
    int failed = 0;
    char log[SWEEP_PATH_MAX + 256];
    log_path(log, sizeof log, dir, r);
    if (r->eval_lengths[0] &&
        (!runfile_has_group(h5, RS_G_LCEVAL) || (r->eval_needle && !runfile_has_needle(h5)))) {
        fprintf(stderr, "gatelab sweep: eval %s at %s (plain and YaRN%s)\n", r->id, r->eval_lengths,
                r->eval_needle ? ", needle" : "");
        char *argv[] = {"eval",      (char *)h5,
                        "--lengths", (char *)r->eval_lengths,
                        "--both",    r->eval_needle ? "--needle" : NULL,
                        NULL};
        if (post_child(exe, dir, r, argv) != 0) {
            fprintf(stderr, "gatelab sweep: eval %s failed, log %s\n", r->id, log);
            failed++;
        }
    }
    if (r->eval_quant[0] && !runfile_has_group(h5, RS_G_QUANT)) {
        fprintf(stderr, "gatelab sweep: eval %s quantized: %s\n", r->id, r->eval_quant);
        char k[16], *argv[8];
        sweep_quant_argv(r, h5, k, sizeof k, argv);
        if (post_child(exe, dir, r, argv) != 0) {
            fprintf(stderr, "gatelab sweep: quantized eval %s failed, log %s\n", r->id, log);
            failed++;
        }
    }
    if (r->intervene[0] && !runfile_has_group(h5, RS_G_INTERVENE)) {
        fprintf(stderr, "gatelab sweep: intervene %s: %s\n", r->id, r->intervene);
        if (intervene_child(exe, dir, r, h5) != 0) {
            fprintf(stderr, "gatelab sweep: intervene %s failed, log %s\n", r->id, log);
            failed++;
        }
    }
    return failed;
}

int sweep_post_runs(const Sweep *sw, const SweepOptions *o) {
    int failed = 0;
    const char *exe = resolve_exe(o);
    for (int i = 0; i < sw->n_runs && !stop_requested(); i++) {
        if (!in_share(sw, o, i)) continue;
        const SweepRun *r = &sw->runs[i];
        if (!r->eval_lengths[0] && !r->intervene[0] && !r->eval_quant[0]) continue;
        char h5[SWEEP_PATH_MAX + 256], st[32];
        run_path(h5, sizeof h5, o->out_dir, r, "");
        if (runfile_read_status(h5, st, sizeof st) != 0 || strcmp(st, RS_STATUS_DONE)) continue;
        failed += post_run(exe, o->out_dir, r, h5);
    }
    return failed;
}
