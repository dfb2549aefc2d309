/* blas_core.c: report the OpenBLAS core, and replace a generic fallback by
 * the best core the CPU supports (see blas_core.h). */
#include "blas_core.h"
#include "env.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cblas.h>

#include "util.h"

/* declared here rather than relying on one cblas.h flavour */
char *openblas_get_corename(void);
char *openblas_get_config(void);

#define ENV_MODE "GATELAB_BLAS_CORE"
#define ENV_AUTO "GATELAB_BLAS_AUTO"
#define ENV_FALLBACK "GATELAB_BLAS_FALLBACK"

/* The core whose sgemm check failed in this process's previous image
 * (check_new_core), taken from ENV_FALLBACK at startup; "" when none. */
static char fallback_core[32];

static void copy_field(char *dst, size_t n, const char *src) {
    snprintf(dst, n, "%s", src ? src : "unknown");
}

/* "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..." -> "0.3.21" */
static void config_version(char *dst, size_t n) {
    const char *cfg = openblas_get_config();
    const char *p = cfg ? strstr(cfg, "OpenBLAS ") : NULL;
    if (!p) {
        copy_field(dst, n, NULL);
        return;
    }
    p += strlen("OpenBLAS ");
    size_t len = strcspn(p, " ");
    snprintf(dst, n, "%.*s", (int)len, p);
}

void blas_info(BlasInfo *bi) {
    memset(bi, 0, sizeof *bi);
    copy_field(bi->library, sizeof bi->library, "OpenBLAS");
    config_version(bi->version, sizeof bi->version);
    copy_field(bi->core, sizeof bi->core, openblas_get_corename());
    const char *au = env_get(ENV_AUTO);
    if (fallback_core[0])
        snprintf(bi->how, sizeof bi->how, "%s failed the sgemm check, fell back", fallback_core);
    else if (au && *au)
        snprintf(bi->how, sizeof bi->how, "auto-selected; OpenBLAS had chosen %.60s", au);
    else if (getenv("OPENBLAS_CORETYPE")) copy_field(bi->how, sizeof bi->how, "OPENBLAS_CORETYPE");
    else copy_field(bi->how, sizeof bi->how, "detected");
}

void blas_print(const char *tail) {
    BlasInfo bi;
    blas_info(&bi);
    printf("BLAS: %s %s, core %s (%s)%s\n", bi.library, bi.version, bi.core, bi.how,
           tail ? tail : "");
}

const char *blas_core_for_cpu(int avx512, int avx2_fma) {
    if (avx512) return "SkylakeX";
    if (avx2_fma) return "Haswell";
    return NULL;
}

int blas_core_is_generic(const char *core) {
    static const char *const generic[] = {"Prescott",   "Core2",     "Penryn",      "Dunnington",
                                          "Nehalem",    "Atom",      "Sandybridge", "Katmai",
                                          "Coppermine", "Northwood", "Banias",      "Opteron",
                                          "Barcelona",  "Bobcat",    "Generic",     "Unknown"};
    if (!core) return 0;
    for (size_t i = 0; i < sizeof generic / sizeof generic[0]; i++)
        if (!strcasecmp(core, generic[i])) return 1;
    return 0;
}

const char *blas_core_upgrade(const char *current, const char *best, int user_set,
                              const char *mode) {
    int test = mode && !strncmp(mode, "test-", 5);
    if (mode && !strcmp(mode, "keep")) return NULL;
    if (user_set && !test) return NULL;
    if (!best || !blas_core_is_generic(current)) return NULL;
    return best;
}

/* Deterministic inputs in [-1, 1). */
static float verify_value(int i) { return (float)((i * 37 + 11) % 101) / 50.5f - 1.0f; }

int blas_core_verify(char *err, size_t errlen) {
    enum { M = 37, N = 41, K = 29 };
    static float a[M * K], b[N * K], c[M * N];
    for (int i = 0; i < M * K; i++) a[i] = verify_value(i);
    for (int i = 0; i < N * K; i++) b[i] = verify_value(i + 5000);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a, K, b, K, 0.0f, c, N);
    double worst = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double ref = 0, mag = 0;
            for (int k = 0; k < K; k++) {
                ref += (double)a[i * K + k] * b[j * K + k];
                mag += fabs((double)a[i * K + k] * b[j * K + k]);
            }
            double e = fabs(c[i * N + j] - ref) / (mag > 1 ? mag : 1);
            if (!(e <= worst)) worst = isnan(e) ? INFINITY : e; /* NaN counts as wrong */
        }
    const char *mode = env_get(ENV_MODE);
    if (mode && !strcmp(mode, "test-badverify")) worst = 1.0;
    if (worst <= 1e-4) return 0;
    snprintf(err, errlen, "sgemm on core %s differs from a naive loop by %.2g (relative)",
             openblas_get_corename(), worst);
    return -1;
}

/* Replace the process with itself under a new environment. Returns only
 * when exec fails. */
static void reexec(char **argv) {
    fflush(NULL);
    execv("/proc/self/exe", argv);
}

/* In the re-executed process: check the new core, else go back. */
static void check_new_core(char **argv, const char *was) {
    char err[160];
    if (blas_core_verify(err, sizeof err) == 0) return;
    fprintf(stderr, "gatelab: warning: %s; going back to %s (set %s=keep to skip)\n", err, was,
            ENV_MODE);
    setenv("OPENBLAS_CORETYPE", was, 1);
    char fb[96]; /* CORE@PID: exec keeps the pid, so the next image knows it as ours */
    snprintf(fb, sizeof fb, "%.31s@%ld", openblas_get_corename(), (long)getpid());
    setenv(ENV_FALLBACK, fb, 1);
    unsetenv(ENV_AUTO);
    setenv(ENV_MODE, "keep", 1);
    reexec(argv);
    fprintf(stderr, "gatelab: warning: cannot re-execute; staying on the checked core\n");
}

/* ENV_FALLBACK into fallback_core when check_new_core of this very process
 * (same pid) set it, with a core name of letters and digits; any other
 * value is ignored with a warning. The variable is removed either way, so
 * no child inherits a claim about another process. */
static void take_fallback(void) {
    const char *fb = env_get(ENV_FALLBACK);
    if (!fb) return;
    const char *at = strrchr(fb, '@');
    size_t n = at ? (size_t)(at - fb) : 0;
    char *end = NULL;
    long pid = at ? strtol(at + 1, &end, 10) : -1;
    int ok = at && n > 0 && n < sizeof fallback_core && end && !*end && pid == (long)getpid();
    for (size_t i = 0; ok && i < n; i++)
        ok = (fb[i] >= 'a' && fb[i] <= 'z') || (fb[i] >= 'A' && fb[i] <= 'Z') ||
             (fb[i] >= '0' && fb[i] <= '9');
    if (ok) snprintf(fallback_core, sizeof fallback_core, "%.*s", (int)n, fb);
    else
        fprintf(stderr,
                "gatelab: warning: ignoring %s='%.40s' (only gatelab's own re-exec sets it)\n",
                ENV_FALLBACK, fb);
    unsetenv(ENV_FALLBACK);
}

void blas_core_startup(char **argv) {
    take_fallback();
    const char *was = env_get(ENV_AUTO);
    if (was && *was) {
        check_new_core(argv, was);
        return;
    }
    __builtin_cpu_init();
    int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const char *cur = openblas_get_corename();
    const char *to = blas_core_upgrade(cur, blas_core_for_cpu(avx512, avx2),
                                       getenv("OPENBLAS_CORETYPE") != NULL, env_get(ENV_MODE));
    if (!to) return;
    char cur_copy[32], user[64];
    const char *u = getenv("OPENBLAS_CORETYPE");
    snprintf(cur_copy, sizeof cur_copy, "%s", cur);
    snprintf(user, sizeof user, "%s", u ? u : "");
    setenv(ENV_AUTO, cur_copy, 1);
    setenv("OPENBLAS_CORETYPE", to, 1);
    reexec(argv);
    /* exec failed: this process runs on as it was, its children too */
    unsetenv(ENV_AUTO);
    if (u) setenv("OPENBLAS_CORETYPE", user, 1);
    else unsetenv("OPENBLAS_CORETYPE");
}
