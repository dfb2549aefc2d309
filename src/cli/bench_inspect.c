/* bench_inspect.c: `gatelab bench --inspect`: the pretrained forward pass
 * on a random GPT-2-small-sized checkpoint (124M parameters, F32, made at
 * bench time by tests/reference/make_hf_fixtures.py --big in a temporary
 * directory, removed after) at T = 512, against PyTorch's eager forward
 * on the same weights and tokens (tests/reference/torch_bench_inspect.py),
 * in one run. Speed: best and median of R forward passes per thread count,
 * in process. Memory: peak RSS of a separate `gatelab inspect` process on
 * the same checkpoint, against the size of the F32 weights. */
#include <getopt.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "blas_core.h"
#include "cli_json.h"
#include "cliopts.h"
#include "cmdutil.h"
#include "hf_model.h"
#include "probe_reduce.h"
#include "runfile_read.h"
#include "safetensors.h"
#include "util.h"

extern char **environ;

#define MAX_R 16

typedef struct {
    const char *model;
    int threads[8], nthreads, repeats, T, no_torch, cpu;
} BiArgs;
static const BiArgs bi_defaults = {NULL, {1, 2}, 2, 3, 512, 0, 0};

/* Wall seconds, or with --clock cpu this process's CPU seconds (every
 * thread), which a busy machine disturbs much less. */
static double bench_clock(int cpu) {
    if (!cpu) return now_seconds();
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const OptRow bench_inspect_rows[] = {
    {'m', "model", OPT_STR, "DIR", 0, 0, NULL, "use this GPT2LMHeadModel snapshot instead", 0, 0,
     &bi_defaults.model},
    {'t', "threads", OPT_STR, "LIST", 0, 0, "1,2", "comma-separated thread counts", 0, 0,
     OPT_SPECIAL},
    {'R', "repeats", OPT_INT, "R", 1, MAX_R, NULL, "timed forwards after one warm-up", 0, 0,
     &bi_defaults.repeats},
    {'T', "seq-len", OPT_INT, "T", 2, 1024, NULL, "tokens per window", 0, 0, &bi_defaults.T},
    {'n', "no-torch", OPT_FLAG, NULL, 0, 0, NULL, "skip PyTorch", 0, 0, &bi_defaults.no_torch},
    {'c', "clock", OPT_STR, "KIND", 0, 0, "wall",
     "wall or cpu: CPU seconds of all threads, steadier\n"
     "on a busy machine (then N threads cost about N x wall)",
     0, 0, OPT_SPECIAL},
    {0}};
const OptTable bench_inspect_options = {
    .cmd = "bench --inspect",
    .operands = "[options]",
    .about = "Forward-pass speed and peak memory of `gatelab inspect` on a random\n"
             "GPT-2-small-sized checkpoint (124M parameters, F32; generated into a temporary\n"
             "directory with /usr/bin/python3 unless --model names a snapshot), beside\n"
             "PyTorch's eager forward on the same weights and tokens. Run from the source root.\n"
             "PyTorch runs at torch.set_num_threads(N) with its OpenBLAS pool as installed\n"
             "(one thread per core: set_num_threads does not reach it), and again with the\n"
             "pool pinned to N when it differs. \"vs pytorch\" compares with the row that\n"
             "ran N BLAS threads; the summary line with PyTorch's fastest row (its best;\n"
             "torch at 1 thread runs even when LIST has no 1, since that is its best here).\n",
    .rows = bench_inspect_rows,
    OPT_DEFAULTS(bi_defaults),
};

/* One line for a bad value of option opt (want: what it takes); returns 2. */
static int bi_bad(const char *opt, const char *val, const char *want) {
    fprintf(stderr, "gatelab bench --inspect: %s '%.40s': expected %s\n", opt, val, want);
    return 2;
}

static int parse(int argc, char **argv, BiArgs *a) {
    *a = bi_defaults;
    OptParser op;
    opt_init(&op, &bench_inspect_options, argc, argv);
    for (int c; (c = opt_parse(&op, a)) != OPT_END;) {
        switch (c) {
        case OPT_HELP: return 0;
        case OPT_BAD: return 2;
        case 't': {
            a->nthreads = 0;
            for (char *s = op.str; *s && a->nthreads < 8;) {
                char *end;
                long v = strtol(s, &end, 10);
                if (end == s || v < 1 || v > 64 || (*end && *end != ','))
                    return bi_bad("--threads", op.str, "a comma-separated list of 1..64");
                a->threads[a->nthreads++] = (int)v;
                s = *end == ',' ? end + 1 : end;
            }
            break;
        }
        case 'c':
            if (strcmp(op.str, "wall") && strcmp(op.str, "cpu"))
                return bi_bad("--clock", op.str, "wall or cpu");
            a->cpu = !strcmp(op.str, "cpu");
            break;
        }
    }
    if (a->nthreads < 1) return bi_bad("--threads", "", "a comma-separated list of 1..64");
    return -1;
}

/* argv run to completion; its peak RSS (MiB) and wall seconds. */
static int spawn_wait(char *const *argv, int quiet, double *rss_mib, double *secs) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (quiet) posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
    pid_t pid;
    double t0 = now_seconds();
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return -1;
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) < 0) return -1;
    if (secs) *secs = now_seconds() - t0;
    if (rss_mib) *rss_mib = ru.ru_maxrss / 1024.0;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int make_inputs(const char *dir, int T) {
    char ids[4200];
    snprintf(ids, sizeof ids, "%s/ids.txt", dir);
    FILE *f = fopen(ids, "w");
    if (!f) return -1;
    unsigned long long s = 88172645463325252ULL;
    for (int t = 0; t < T; t++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        fprintf(f, "%s%llu", t ? " " : "", s % 50257);
    }
    fputc('\n', f);
    return fclose(f);
}

/* best and median seconds of R forwards (probe reductions included). */
static int time_forward(const char *model, const int32_t *ids, int T, int threads, int R,
                        int logits, int cpu, double *best, double *med) {
    char err[512];
    HfModel *m;
    if (hf_model_open(&m, model, threads, err, sizeof err) < 0) {
        fprintf(stderr, "gatelab bench --inspect: %s\n", err);
        return -1;
    }
    const HfArch *a = hf_model_arch(m);
    int M = T < 128 ? T : 128;
    ProbeAcc p;
    ProbeShape ps = hf_model_probe_shape(m, 1, T, M);
    float *lg = logits ? falloc((size_t)T * a->V) : NULL;
    int rc = probe_acc_init(&p, &ps);
    double ts[MAX_R + 1];
    for (int r = 0; rc == 0 && r <= R; r++) {
        double t0 = bench_clock(cpu);
        for (int t = 0; t < T; t++) p.tokens[t] = ids[t];
        HfRun run = {.M = M, .fn = logits ? NULL : probe_acc_feed, .ctx = &p, .logits = lg};
        rc = hf_model_forward(m, ids, T, &run, err, sizeof err);
        ts[r] = bench_clock(cpu) - t0; /* r = 0 is the warm-up */
    }
    if (rc == 0) {
        qsort(ts + 1, (size_t)R, sizeof *ts, cmp_d);
        *best = ts[1], *med = ts[1 + R / 2];
    } else {
        fprintf(stderr, "gatelab bench --inspect: %s\n", err);
    }
    free(lg);
    probe_acc_free(&p);
    hf_model_close(m);
    return rc;
}

/* PyTorch's best/median (logits and no head), peak RSS and OpenBLAS's
 * thread count from torch_bench_inspect.py; blas 0 leaves OpenBLAS's pool as
 * installed (one thread per core, whatever torch.set_num_threads says). */
enum { TV_BEST_LG, TV_MED_LG, TV_BEST_NH, TV_MED_NH, TV_RSS, TV_BLAS, TV_N };

static int run_torch(const char *model, const char *ids, int threads, int blas, int R, int cpu,
                     double v[TV_N]) {
    char cmd[9000];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 tests/reference/torch_bench_inspect.py '%s' '%s' --threads %d "
             "--blas-threads %d --repeats %d --clock %s 2>/dev/null",
             model, ids, threads, blas, R, cpu ? "cpu" : "wall");
    const char *keys[TV_N] = {"best_logits",   "median_logits", "best_nohead",
                              "median_nohead", "peak_rss_mib",  "blas_threads"};
    json_t *o = cj_popen_object(cmd);
    if (!o) return -1;
    int got = 0;
    for (int k = 0; k < TV_N; k++) got += isfinite(v[k] = cj_number(o, keys[k]));
    json_decref(o);
    return got == TV_N ? 0 : -1;
}

static int read_ids(const char *dir, int32_t *ids, int T) {
    char path[4200];
    snprintf(path, sizeof path, "%s/ids.txt", dir);
    FILE *f = fopen(path, "r");
    int n = 0;
    while (f && n < T && fscanf(f, "%d", &ids[n]) == 1) n++;
    if (f) fclose(f);
    return n == T ? 0 : -1;
}

/* The target line: gatelab at 2 threads (or the most threads run) against
 * PyTorch's best time at any thread count, pass for pass. */
static void summary(const double *g, const double *tbest, int th) {
    const char *pass[2] = {"inspect (no LM head)", "forward + logits"};
    /* the target is on what `gatelab inspect` runs; the LM head is
     * one sgemm that both sides run through the same OpenBLAS */
    const char *note[2] = {"target 1.5x", "for reference: inspect runs no LM head"};
    for (int k = 0; k < 2; k++)
        if (g[k] > 0 && tbest[k] > 0)
            printf("%s, %d threads: %.2fx PyTorch's best (%.3f s against %.3f s; %s)\n", pass[k],
                   th, tbest[k] / g[k], g[k], tbest[k], note[k]);
}

/* One gatelab row; the ratio to PyTorch's time at the same threads, or "-". */
static void gatelab_row(const char *pass, int th, double best, double med, double torch_best) {
    printf("%-8s %-22s %7d %8.3f %8.3f", "gatelab", pass, th, best, med);
    if (torch_best > 0) printf(" %11.2fx\n", torch_best / best);
    else printf(" %12s\n", "-");
}

/* PyTorch's rows at torch.set_num_threads(th), its BLAS pool as installed
 * and, when that pool is not th threads, pinned to th; tbest keeps the
 * fastest of all. */
static void torch_rows(const BiArgs *a, const char *model, const char *idpath, int th,
                       double tbest[2], double tv_same[TV_N]) {
    int ok = 0;
    for (int pin = 0; pin < 2; pin++) {
        double tv[TV_N] = {0};
        if (run_torch(model, idpath, th, pin ? th : 0, a->repeats, a->cpu, tv) < 0) break;
        ok = 1;
        char who[64];
        snprintf(who, sizeof who, "(BLAS %d thr%s)", (int)tv[TV_BLAS], pin ? ", pinned" : "");
        printf("%-8s %-22s %7d %8.3f %8.3f   %s\n", "pytorch", "eager, no LM head", th,
               tv[TV_BEST_NH], tv[TV_MED_NH], who);
        printf("%-8s %-22s %7d %8.3f %8.3f   %s peak RSS %.0f MiB\n", "pytorch", "eager + logits",
               th, tv[TV_BEST_LG], tv[TV_MED_LG], who, tv[TV_RSS]);
        const double t[2] = {tv[TV_BEST_NH], tv[TV_BEST_LG]};
        for (int k = 0; k < 2; k++)
            if (tbest[k] == 0 || t[k] < tbest[k]) tbest[k] = t[k];
        if ((int)tv[TV_BLAS] == th || pin) { /* the row whose threads match gatelab's */
            for (int k = 0; k < TV_N; k++) tv_same[k] = tv[k];
            break;
        }
    }
    if (!ok)
        printf("pytorch: torch_bench_inspect.py did not run (needs python3-torch; run from the "
               "source root)\n");
}

static void rows(const BiArgs *a, const char *model, const char *tmp, const int32_t *ids) {
    char idpath[4200];
    snprintf(idpath, sizeof idpath, "%s/ids.txt", tmp);
    printf("%-8s %-22s %7s %8s %8s %12s\n", "impl", "pass", "threads", "best s", "median s",
           "vs pytorch");
    double g2[2] = {0, 0}, tbest[2] = {0, 0};
    int th2 = 0, has1 = 0;
    for (int i = 0; i < a->nthreads; i++) has1 |= a->threads[i] == 1;
    if (!a->no_torch &&
        !has1) { /* torch at 1 thread (BLAS as installed) is its best here: always in */
        double tv[TV_N] = {0};
        torch_rows(a, model, idpath, 1, tbest, tv);
    }
    for (int i = 0; i < a->nthreads; i++) {
        int th = a->threads[i];
        double gb = 0, gm = 0, lb = 0, lm = 0, tv[TV_N] = {0};
        if (!a->no_torch) torch_rows(a, model, idpath, th, tbest, tv);
        if (time_forward(model, ids, a->T, th, a->repeats, 0, a->cpu, &gb, &gm) == 0)
            gatelab_row("inspect (no LM head)", th, gb, gm, tv[TV_BEST_NH]);
        if (time_forward(model, ids, a->T, th, a->repeats, 1, a->cpu, &lb, &lm) == 0)
            gatelab_row("forward + logits", th, lb, lm, tv[TV_BEST_LG]);
        if (th == 2 || (th > th2 && th2 != 2)) th2 = th, g2[0] = gb, g2[1] = lb;
        fflush(stdout);
    }
    if (a->cpu)
        printf("(CPU seconds: a run on N threads takes at least 1/N of its CPU time in wall "
               "time; the 1.5x target is about wall time, see --clock wall)\n");
    else summary(g2, tbest, th2);
}

static void memory_row(const char *model, const char *tmp, double weights_mib) {
    char self[4096], idp[4200], out[4200];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return;
    self[n] = 0;
    snprintf(idp, sizeof idp, "%s/ids.txt", tmp);
    snprintf(out, sizeof out, "%s/bench.h5", tmp);
    char *argv[] = {self, "inspect", (char *)model, "--tokens",  idp, "--out",
                    out,  "--force", "--quiet",     "--threads", "2", NULL};
    double rss, secs;
    if (spawn_wait(argv, 1, &rss, &secs) < 0) {
        printf("memory: `gatelab inspect` failed\n");
        return;
    }
    printf("memory: `gatelab inspect` (1 window, 2 threads, %.1f s end to end): peak RSS %.0f MiB"
           " = %.0f%% of the F32 weights (%.0f MiB; target <= 120%%)\n",
           secs, rss, 100.0 * rss / weights_mib, weights_mib);
    unlink(out);
}

/* Remove what this bench put in its temporary directory, then the directory. */
static void remove_tmp(const char *tmp) {
    static const char *files[] = {"gpt2-124m/config.json",
                                  "gpt2-124m/model.safetensors",
                                  "gpt2-124m",
                                  "ids.txt",
                                  "bench.h5",
                                  ""};
    char p[4200];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(p, sizeof p, "%s/%s", tmp, files[i]);
        if (remove(p) != 0 && file_exists(p)) fprintf(stderr, "could not remove %s\n", p);
    }
}

int bench_inspect(int argc, char **argv) {
    BiArgs a;
    int rc = parse(argc, argv, &a);
    if (rc >= 0) return rc;
    char tmp[] = "/tmp/gatelab-bench-inspect-XXXXXX", model[4200];
    if (!mkdtemp(tmp)) return perror("mkdtemp"), 1;
    snprintf(model, sizeof model, "%s/gpt2-124m", tmp);
    if (!a.model) {
        char *gen[] = {"/usr/bin/python3", "tests/reference/make_hf_fixtures.py", "--big", model,
                       NULL};
        if (spawn_wait(gen, 1, NULL, NULL) < 0) {
            fprintf(stderr, "gatelab bench --inspect: could not make the checkpoint (needs "
                            "/usr/bin/python3 with torch; run from the source root)\n");
            rmdir(tmp);
            return 1;
        }
    }
    const char *mdir = a.model ? a.model : model;
    int32_t *ids = calloc((size_t)a.T, sizeof *ids);
    SafeTensors *st;
    char err[512];
    double wmib = 0;
    if (st_open_dir(&st, mdir, err, sizeof err) == 0) {
        for (size_t i = 0; i < st_count(st); i++) wmib += st_at(st, i)->numel * 4.0 / (1 << 20);
        st_close(st);
    }
    rc = ids && make_inputs(tmp, a.T) == 0 && read_ids(tmp, ids, a.T) == 0 ? 0 : 1;
    if (rc == 0) {
        printf("inspect bench: %s, T=%d, 1 window, F32 weights %.0f MiB; best and median of %d, "
               "%s\n",
               a.model ? a.model : "random GPT-2-small-sized checkpoint (124M)", a.T, wmib,
               a.repeats, a.cpu ? "CPU seconds of all threads" : "wall seconds");
        /* torch loads the same libopenblas in the same environment */
        blas_print(", for gatelab and PyTorch alike");
        /* memory first: a spawned child's peak RSS counts the parent's at
         * spawn time (exec keeps the old mm's high-water mark) */
        memory_row(mdir, tmp, wmib);
        rows(&a, mdir, tmp, ids);
    }
    free(ids);
    remove_tmp(tmp);
    return rc;
}
