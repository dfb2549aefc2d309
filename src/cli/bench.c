/* bench.c: `gatelab bench`: training throughput on the reference config,
 * beside two peaks measured in the same process on the same threads, and
 * optionally beside the PyTorch twin (tests/reference/torch_bench.py).
 *
 * The sgemm peak is what OpenBLAS's loaded core reaches: N threads each
 * running single-threaded sgemm on 1024^3 at once, GFLOP/s summed. The FMA
 * peak (fmapeak.h) is the machine's ceiling on the widest SIMD path, which
 * no core's sgemm exceeds: %fma is the honest share when the loaded core is
 * not the CPU's best.
 */
#include <cblas.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "blas_core.h"
#include "env.h"
#include "cli_json.h"
#include "config_args.h"
#include "config_derive.h"
#include "cliopts.h"
#include "cmdutil.h"
#include "data.h"
#include "fmapeak.h"
#include "memplan.h"
#include "commands.h"
#include "opprof.h"
#include "ops.h"
#include "rng.h"
#include "simd.h"
#include "trainer.h"
#include "util.h"

#define PEAK_N 1024
#define MAX_VARIANTS 32

typedef struct {
    float *a, *b, *c;
    int reps;
    int cpu_clock; /* time by this thread's CPU time, not the wall clock */
    double gflops;
} SgemmJob;

/* CPU seconds of the calling thread (CLOCK_THREAD_CPUTIME_ID) or of the
 * whole process: on a shared machine they leave out the time other
 * processes held our cores, which the wall clock does not. */
static double cpu_seconds(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double job_clock(int cpu) {
    return cpu ? cpu_seconds(CLOCK_THREAD_CPUTIME_ID) : now_seconds();
}

static void *sgemm_job(void *p) {
    SgemmJob *j = p;
    const double flop = 2.0 * PEAK_N * PEAK_N * PEAK_N;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, PEAK_N, PEAK_N, PEAK_N, 1.0f, j->a,
                PEAK_N, j->b, PEAK_N, 0.0f, j->c, PEAK_N); /* warm */
    double t0 = job_clock(j->cpu_clock);
    for (int r = 0; r < j->reps; r++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, PEAK_N, PEAK_N, PEAK_N, 1.0f, j->a,
                    PEAK_N, j->b, PEAK_N, 0.0f, j->c, PEAK_N);
    j->gflops = flop * j->reps / (job_clock(j->cpu_clock) - t0) / 1e9;
    return NULL;
}

/* Aggregate GFLOP/s of n concurrent single-threaded sgemms. -1 on OOM. */
static double sgemm_peak(int n, int cpu_clock) {
    SgemmJob jobs[64];
    pthread_t th[64];
    size_t sz = (size_t)PEAK_N * PEAK_N;
    double total = 0;
    int ok = 1;
    openblas_set_num_threads(1);
    for (int i = 0; i < n; i++) {
        jobs[i] = (SgemmJob){falloc(sz), falloc(sz), falloc(sz), 8, cpu_clock, 0};
        ok = ok && jobs[i].a && jobs[i].b && jobs[i].c;
    }
    for (int i = 0; ok && i < n; i++)
        for (size_t k = 0; k < sz; k++) jobs[i].a[k] = jobs[i].b[k] = (float)(k % 7) * 0.1f;
    for (int i = 1; ok && i < n; i++) pthread_create(&th[i], NULL, sgemm_job, &jobs[i]);
    if (ok) sgemm_job(&jobs[0]);
    for (int i = 1; ok && i < n; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < n; i++) {
        total += jobs[i].gflops;
        free(jobs[i].a), free(jobs[i].b), free(jobs[i].c);
    }
    return ok ? total : -1;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    int steps, warmup, repeats;
    int cpu_clock; /* --clock cpu */
    int profile;   /* --profile */
} BenchPlan;

/* Where a step's time went (--profile): seconds per step on the bench's
 * clock, each family's per thread (opprof.h), and the step's own. */
typedef struct {
    double family[OPPROF_N], step;
} StepProfile;

/* Seconds for bench_variant's blocks: wall, or process CPU time per worker
 * (--clock cpu: what the run would take with its cores to itself; it
 * leaves out waits at the workers' joins, so it flatters threads a little). */
static double block_clock(const BenchPlan *bp, int workers) {
    return bp->cpu_clock ? cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) / workers : now_seconds();
}

/* Median tokens/s of `repeats` timed blocks of `steps` training steps on
 * random tokens (the data source plays no part in speed). */
static int bench_variant(const Config *cfg, const BenchPlan *bp, double *tok_s, double *flops_tok,
                         size_t *nparams, StepProfile *prof, char *err, size_t errlen) {
    Trainer tr;
    if (trainer_init(&tr, cfg, err, errlen) != 0) return -1;
    Rng r;
    rng_seed(&r, 7);
    size_t bt = (size_t)cfg->batch_size * cfg->seq_len;
    for (size_t i = 0; i < bt; i++) {
        tr.inputs[i] = (int)rng_below(&r, (uint32_t)cfg->vocab_size);
        tr.targets[i] = (int)rng_below(&r, (uint32_t)cfg->vocab_size);
    }
    double norm, med[64];
    for (int s = 0; s < bp->warmup; s++) trainer_step(&tr, tr.inputs, tr.targets, s, &norm);
    if (bp->profile) opprof_enable(1, bp->cpu_clock);
    double p0 = block_clock(bp, tr.n_workers);
    for (int k = 0; k < bp->repeats; k++) {
        double t0 = block_clock(bp, tr.n_workers);
        for (int s = 0; s < bp->steps; s++) trainer_step(&tr, tr.inputs, tr.targets, s, &norm);
        med[k] = (double)bt * bp->steps / (block_clock(bp, tr.n_workers) - t0);
    }
    if (bp->profile) {
        double steps = (double)bp->steps * bp->repeats;
        prof->step = (block_clock(bp, tr.n_workers) - p0) / steps;
        opprof_read(prof->family);
        opprof_enable(0, 0);
        for (int f = 0; f < OPPROF_N; f++) prof->family[f] /= steps * tr.n_workers;
    }
    qsort(med, (size_t)bp->repeats, sizeof *med, cmp_double);
    *tok_s = med[bp->repeats / 2];
    *flops_tok = model_flops_per_token(&tr.model, cfg->seq_len);
    *nparams = tr.model.table.total;
    trainer_free(&tr);
    return 0;
}

static double peak_rss_mib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0;
}

/* Where torch_bench.py is: $GATELAB_TORCH_BENCH, else the source tree's
 * (source_file: from any working directory). */
static const char *torch_script(char *buf, size_t n) {
    const char *env = env_get("GATELAB_TORCH_BENCH");
    if (env && *env) return env;
    if (source_file("tests/reference/torch_bench.py", buf, n) == 0) return buf;
    return "tests/reference/torch_bench.py";
}

/* "--gatelab 'PATH'" naming this binary, whose variant catalog the twin
 * reads (gatelab.ref_config), or "" when its path cannot be quoted. */
static const char *self_option(char *buf, size_t n) {
    char exe[1024];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    buf[0] = 0;
    if (len <= 0) return buf;
    exe[len] = 0;
    if (!strchr(exe, '\'')) snprintf(buf, n, "--gatelab '%s'", exe);
    return buf;
}

/* The model shape of cfg as torch_bench.py --shape arguments. */
static void torch_shape(char *buf, size_t n, const Config *c) {
    static const char *const norm[] = {"rms", "layer"}, *const pos[] = {"rope", "learned", "none"},
                             *const mlp[] = {"swiglu", "gelu"};
    snprintf(buf, n,
             "--batch %d --seq %d --shape n_layers=%d --shape d_model=%d --shape n_heads=%d "
             "--shape n_kv_heads=%d --shape head_dim=%d --shape d_ff=%d --shape vocab_size=%d "
             "--shape norm=%s --shape pos=%s --shape mlp=%s --shape tied_embed=%d "
             "--shape qk_norm=%d --shape rope_base=%.9g --shape norm_eps=%.9g",
             c->batch_size, c->seq_len, c->n_layers, c->d_model, c->n_heads, c->n_kv_heads,
             c->head_dim ? c->head_dim : c->d_model / c->n_heads, c->d_ff, c->vocab_size,
             norm[c->norm], pos[c->pos], mlp[c->mlp], c->tied_embed, c->qk_norm,
             (double)c->rope_base, (double)c->norm_eps);
}

/* Run the PyTorch twin on the shape of base (the config without its
 * variant) and copy its tokens/s; -1 if it could not run. core: its
 * OPENBLAS_CORETYPE, or NULL for the environment the user started us in
 * (our own BLAS core upgrade is not passed on). */
static double run_torch(const Config *base, const char *variant, int threads, const BenchPlan *bp,
                        const char *core, long *params, int *blas_threads) {
    char cmd[4096], shape[768], path[1100], envs[96], self[1100];
    torch_shape(shape, sizeof shape, base);
    const char *auto_from = env_get("GATELAB_BLAS_AUTO");
    if (core) snprintf(envs, sizeof envs, "OPENBLAS_CORETYPE='%.40s'", core);
    else if (auto_from && *auto_from) snprintf(envs, sizeof envs, "-u OPENBLAS_CORETYPE");
    else envs[0] = 0;
    snprintf(cmd, sizeof cmd,
             "env %s /usr/bin/python3 '%s' --threads %d --variant '%s' --steps %d --repeats %d "
             "--clock %s %s %s 2>/dev/null",
             envs, torch_script(path, sizeof path), threads, variant, bp->steps, bp->repeats,
             bp->cpu_clock ? "cpu" : "wall", self_option(self, sizeof self), shape);
    json_t *o = cj_popen_object(cmd);
    if (!o) return -1;
    double tok = cj_number(o, "tokens_per_sec"), np = cj_number(o, "params"),
           bt = cj_number(o, "blas_threads");
    json_decref(o);
    if (!isfinite(tok) || !isfinite(np) || !isfinite(bt)) return -1;
    *params = (long)np, *blas_threads = (int)bt;
    return tok;
}

/* The parsed command line. */
typedef struct {
    const char *config, *variants[MAX_VARIANTS], *torch_core;
    char *sets[250];
    int nv, nsets, threads, torch, blas;
    BenchPlan bp;
} BenchArgs;
static const BenchArgs bench_defaults = {
    .config = "experiments/reference.ini", .threads = 1, .bp = {10, 3, 5, 0, 0}};

enum { O_INSPECT = OPT_LONG };
static const OptRow bench_rows[] = {
    {'c', "config", OPT_STR, "FILE", 0, 0, NULL, "preset", 0, 0, &bench_defaults.config},
    {'t', "threads", OPT_INT, "N", 1, 64, NULL, "worker threads", 0, 0, &bench_defaults.threads},
    {'v', "variant", OPT_STR, "ID", 0, 0, "baseline", "variant to bench (repeatable)", 1, 0,
     OPT_SPECIAL},
    {'n', "steps", OPT_INT, "S", 1, 1000000, NULL, "timed steps per block", 0, 0,
     &bench_defaults.bp.steps},
    {'w', "warmup", OPT_INT, "W", 0, 1000000, NULL, "untimed steps first", 0, 0,
     &bench_defaults.bp.warmup},
    {'R', "repeats", OPT_INT, "R", 1, 64, NULL, "timed blocks; the median is reported", 0, 0,
     &bench_defaults.bp.repeats},
    {'T', "torch", OPT_FLAG, NULL, 0, 0, NULL,
     "also run tests/reference/torch_bench.py (python3-torch)\n"
     "on the same config's shape and threads, side by side,\n"
     "with the BLAS core the user's environment gives it",
     0, 0, &bench_defaults.torch},
    {'K', "torch-core", OPT_STR, "C", 0, 0, NULL,
     "and once more with OPENBLAS_CORETYPE=C (e.g. SkylakeX)", 0, 0, &bench_defaults.torch_core},
    {'C', "clock", OPT_STR, "wall|cpu", 0, 0, "wall",
     "time by the wall clock or by CPU time per\n"
     "thread: on a shared, loaded machine the CPU clock leaves\n"
     "out the time other processes held the cores",
     0, 0, OPT_SPECIAL},
    {'P', "profile", OPT_FLAG, NULL, 0, 0, NULL,
     "under each row, the milliseconds per step (per thread, on\n"
     "--clock's clock) in products, attention's row work, norms,\n"
     "activations and gates, loss, optimizer, the shards' gradient\n"
     "sum (reduce), the threads' starts and waits (sync), and the rest",
     0, 0, &bench_defaults.bp.profile},
    {'B', "blas", OPT_FLAG, NULL, 0, 0, NULL,
     "under each row, the same step with every product on\n"
     "OpenBLAS's sgemm (loaded core) instead of gatelab's own\n"
     "(op_gemm.c), and the ratio own/sgemm",
     0, 0, &bench_defaults.blas},
    {'s', "set", OPT_STR, "K=V", 0, 0, NULL, "override a config key (repeatable)", 1, 0,
     OPT_SPECIAL},
    {O_INSPECT, "inspect", OPT_FLAG, NULL, 0, 0, NULL,
     "as the first option: the forward pass of `gatelab inspect`\n"
     "instead (its options: gatelab bench --inspect --help)",
     0, 0, OPT_SPECIAL},
    {0}};
const OptTable bench_options = {
    .cmd = "bench",
    .operands = "[options]",
    .about = "Training throughput (forward + backward + AdamW) on random tokens.\n"
             "Prints tokens/s (median of R blocks of S steps), GFLOP/s from the explicit\n"
             "FLOP count (6 x matmul weights incl. gates + 12 x L x T x H x dh per token),\n"
             "% of the sgemm peak measured now on N threads (N concurrent 1-thread\n"
             "1024^3 sgemms on OpenBLAS's loaded core), % of the FMA peak (N threads of\n"
             "FMA chains in registers on the widest SIMD path: no sgemm exceeds it),\n"
             "peak RSS, and the cost of each variant against the first.\n",
    .rows = bench_rows,
    OPT_DEFAULTS(bench_defaults),
};

/* Fills *a from the command line. Returns -1 to go on, else the exit code
 * (0 after --help, 2 on a bad option). */
static int parse_bench_args(int argc, char **argv, BenchArgs *a) {
    *a = bench_defaults;
    OptParser op;
    opt_init(&op, &bench_options, argc, argv);
    for (int c; (c = opt_parse(&op, a)) != OPT_END;) {
        switch (c) {
        case OPT_HELP: return 0;
        case OPT_BAD: return 2;
        case 'v':
            if (a->nv == MAX_VARIANTS) return cu_too_many("bench", "--variant", MAX_VARIANTS);
            a->variants[a->nv++] = op.str;
            break;
        case 'C':
            if (strcmp(op.str, "wall") && strcmp(op.str, "cpu")) {
                fprintf(stderr, "gatelab bench: --clock '%s': expected wall or cpu\n", op.str);
                return 2;
            }
            a->bp.cpu_clock = !strcmp(op.str, "cpu");
            break;
        case 's':
            if (a->nsets == 250) return cu_too_many("bench", "--set", 250);
            a->sets[a->nsets++] = op.str;
            break;
        case O_INSPECT:
            fprintf(stderr, "gatelab bench: --inspect must be the first option "
                            "(gatelab bench --inspect --help)\n");
            return 2;
        }
    }
    if (op.optind < argc) {
        fprintf(stderr, "gatelab bench: unexpected argument '%s'\n", argv[op.optind]);
        return 2;
    }
    if (a->torch_core) a->torch = 1; /* --torch-core implies --torch */
    if (a->torch_core &&
        (!*a->torch_core || strlen(a->torch_core) > 40 ||
         strspn(a->torch_core, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                               "0123456789") != strlen(a->torch_core))) {
        fprintf(stderr,
                "gatelab bench: --torch-core '%s': expected an OpenBLAS core name "
                "such as SkylakeX\n",
                a->torch_core);
        return 2;
    }
    if (a->nv == 0) a->variants[a->nv++] = "baseline";
    return -1;
}

/* The preset with the user's --set keys, then variant= and threads=
 * (last, so they win), with shards raised to at least the threads so that
 * every thread has a shard to run. Returns the exit code on failure, 0 on
 * success. */
static int bench_config(Config *cfg, const BenchArgs *a, const char *variant) {
    char err[512], vset[300], tset[32];
    char *all[256];
    int na = 0;
    for (int k = 0; k < a->nsets; k++) all[na++] = a->sets[k];
    snprintf(vset, sizeof vset, "variant=%.250s", variant);
    snprintf(tset, sizeof tset, "threads=%d", a->threads);
    all[na++] = vset;
    all[na++] = tset;
    MemPlan plan;
    int ok = config_from_args(cfg, a->config, all, na, err, sizeof err) == 0;
    if (ok && cfg->shards < a->threads) cfg->shards = a->threads; /* both <= CONFIG_MAX_SHARDS */
    if (!ok || data_fill_vocab(cfg, err, sizeof err) != 0 ||
        memplan_train(cfg, &plan, err, sizeof err) != 0 ||
        memplan_check(&plan, variant, err, sizeof err) != 0) {
        fprintf(stderr, "gatelab bench: %s\n", err);
        return 2;
    }
    return 0;
}

/* The PyTorch twin's rows beside ours (tok, fpt: our tokens/s, FLOP/token). */
static void print_torch_rows(const BenchArgs *a, const char *variant, double tok, double fpt,
                             double peak, double fpeak) {
    Config base;
    if (bench_config(&base, a, "baseline") != 0) return;
    for (int k = 0; k < (a->torch_core ? 2 : 1); k++) {
        const char *core = k ? a->torch_core : NULL;
        char label[48];
        snprintf(label, sizeof label, "pytorch%s%.30s", core ? "/" : "", core ? core : "");
        long np = 0;
        int bt = 0; /* OpenBLAS's pool: torch.set_num_threads does not set it */
        double tt = run_torch(&base, variant, a->threads, &a->bp, core, &np, &bt);
        if (tt < 0)
            printf("%-16s %-14s %7d  (torch_bench.py did not run: needs python3-torch; "
                   "GATELAB_TORCH_BENCH=path/to/torch_bench.py)\n",
                   label, variant, a->threads);
        else
            printf("%-16s %-14s %7d %10.0f %9.1f %6.1f%% %6.1f%% %9ld   gatelab/pytorch = %.2fx "
                   "(its BLAS ran %d threads)\n",
                   label, variant, a->threads, tt, tt * fpt / 1e9, 100.0 * tt * fpt / 1e9 / peak,
                   100.0 * tt * fpt / 1e9 / fpeak, np, tok / tt, bt);
        fflush(stdout);
    }
}

/* The --profile line under a row: ms per step in each family (per thread,
 * on the bench's clock), its share of the step, and the rest of the step. */
static void print_profile(const StepProfile *p) {
    double sum = 0;
    printf("  profile, ms/step:");
    for (int f = 0; f < OPPROF_N; f++) {
        sum += p->family[f];
        printf(" %s %.3f (%.0f%%)", opprof_name((OpprofFamily)f), 1e3 * p->family[f],
               100.0 * p->family[f] / p->step);
    }
    printf(" other %.3f (%.0f%%) step %.3f\n", 1e3 * (p->step - sum),
           100.0 * (p->step - sum) / p->step, 1e3 * p->step);
}

/* Bench cfg on the products blas selects (ops.h: gemm_use_blas) and print
 * its row, labelled label; *tok its tokens/s, *fpt its FLOP per token;
 * first: the base of "vs first" (0: this row is it); own > 0: the
 * tokens/s of the same step on gatelab's own products, whose ratio to
 * this row's ends the line. Returns the exit code, 0 on success. */
static int bench_products(const BenchArgs *a, const Config *cfg, int blas, const char *label,
                          double first, double own, const double peaks[2], double *tok,
                          double *fpt) {
    char err[512];
    size_t np;
    StepProfile prof;
    gemm_use_blas(blas);
    int rc = bench_variant(cfg, &a->bp, tok, fpt, &np, &prof, err, sizeof err);
    gemm_use_blas(0);
    if (rc != 0) {
        fprintf(stderr, "gatelab bench: %s\n", err);
        return 1;
    }
    double gf = *tok * *fpt / 1e9;
    char tail[48] = "";
    if (own > 0) snprintf(tail, sizeof tail, "   own/sgemm = %.2fx", own / *tok);
    printf("%-16s %-14s %7d %10.0f %9.1f %6.1f%% %6.1f%% %9zu %7.1f%% %9.0f%s\n", label,
           cfg->variant, a->threads, *tok, gf, 100.0 * gf / peaks[0], 100.0 * gf / peaks[1], np,
           100.0 * (*tok / (first > 0 ? first : *tok) - 1.0), peak_rss_mib(), tail);
    if (a->bp.profile) print_profile(&prof);
    fflush(stdout);
    return 0;
}

/* Bench variant i and print its row (and, with --blas, its row on
 * OpenBLAS's sgemm); *first is the first variant's tokens/s, the base of
 * "vs first". Returns the exit code, 0 on success. */
static int bench_row(const BenchArgs *a, int i, double peak, double fpeak, double *first) {
    Config cfg;
    int rc = bench_config(&cfg, a, a->variants[i]);
    if (rc) return rc;
    double peaks[2] = {peak, fpeak}, tok, fpt, btok, bfpt;
    if ((rc = bench_products(a, &cfg, 0, "gatelab", *first, 0, peaks, &tok, &fpt)) != 0) return rc;
    if (i == 0) *first = tok;
    if (a->blas &&
        (rc = bench_products(a, &cfg, 1, "gatelab/sgemm", *first, tok, peaks, &btok, &bfpt)) != 0)
        return rc;
    if (a->torch) print_torch_rows(a, a->variants[i], tok, fpt, peak, fpeak);
    return 0;
}

int bench_inspect(int argc, char **argv); /* bench_inspect.c */

int cmd_bench(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--inspect")) return bench_inspect(argc - 1, argv + 1);
    BenchArgs a;
    int rc = parse_bench_args(argc, argv, &a);
    if (rc >= 0) return rc;
    /* every config checked before seconds of measuring and half a table */
    Config cfg, first_cfg; /* the first variant's, for the shards line */
    for (int i = 0; i < a.nv; i++) {
        if ((rc = bench_config(&cfg, &a, a.variants[i])) != 0) return rc;
        if (i == 0) first_cfg = cfg;
    }
    blas_print(NULL);
    /* the peak is the best of three tries: a ceiling, not a typical rate */
    double peak = 0;
    for (int k = 0; k < 3; k++) {
        double p = sgemm_peak(a.threads, a.bp.cpu_clock);
        if (p > peak) peak = p;
    }
    double fpeak = 0;
    for (int k = 0; k < 3; k++) {
        double p = fma_peak(a.threads, a.bp.cpu_clock);
        if (p > fpeak) fpeak = p;
    }
    printf("sgemm peak: %.1f GFLOP/s (best of 3; %d concurrent single-thread 1024^3 "
           "sgemms)\n",
           peak, a.threads);
    printf("FMA peak: %.1f GFLOP/s (best of 3; %d threads of register FMA chains, %s)\n", fpeak,
           a.threads, simd_path_name(simd_path()));
    printf("products: gatelab's own (op_gemm.c, %s)%s\n", gemm_kernel_name(),
           a.blas ? "; rows gatelab/sgemm: OpenBLAS sgemm (--blas)" : "");
    printf("clock: %s\n", a.bp.cpu_clock ? "CPU time per thread (--clock cpu)" : "wall");
    printf("shards: %d (shards = %d, at least --threads; batch_size %d; running threads %d)\n",
           config_shards(&first_cfg), first_cfg.shards, first_cfg.batch_size,
           config_workers(&first_cfg));
    printf("%-16s %-14s %7s %10s %9s %7s %7s %9s %8s %9s\n", "impl", "variant", "threads",
           "tokens/s", "GFLOP/s", "%peak", "%fma", "params", "vs first", "RSS MiB");
    double first = 0;
    for (int i = 0; i < a.nv; i++)
        if ((rc = bench_row(&a, i, peak, fpeak, &first)) != 0) return rc;
    return 0;
}
