/* env.c: the table of GATELAB_* variables and their reader (env.h). */
#include "env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GATELAB_ALLOW_NO_VET
#define GATELAB_ALLOW_NO_VET 0
#endif

#define NO_VET "GATELAB_NO_VET"

const EnvVar env_vars[] = {
    {"GATELAB_SIMD", ENV_SETTING, "SIMD path of the kernels: base, avx2 or avx512"},
    {"GATELAB_BLAS_CORE", ENV_SETTING, "OpenBLAS core choice: auto, keep or a core name"},
    {"GATELAB_MEM_LIMIT", ENV_SETTING, "bytes the memory plan may use (default: the machine's)"},
    {"GATELAB_TORCH_BENCH", ENV_SETTING, "path of torch_bench.py for bench --torch"},
    {"GATELAB_BLAS_AUTO", ENV_INTERNAL, "the core blas_core_startup chose before re-executing"},
    {"GATELAB_BLAS_FALLBACK", ENV_INTERNAL, "why blas_core_startup kept the loaded core"},
    {"GATELAB_TEST_RUN", ENV_SUITE, "the test run's name: switches the test hooks on"},
    {"GATELAB_TEST_NAN_AT", ENV_HOOK, "a NaN in training step S"},
    {"GATELAB_TEST_NAN_KIND", ENV_HOOK, "where that NaN goes: loss, grad or weight"},
    {"GATELAB_TEST_KILL_AT", ENV_HOOK, "SIGKILL the trainer after logging step S"},
    {"GATELAB_TEST_EXE", ENV_HOOK, "the binary a sweep runs its children with"},
    {"GATELAB_TEST_LOCK_WAIT", ENV_HOOK, "seconds a sweep waits for an earlier writer's lock"},
    {"GATELAB_TEST_PROGRESS", ENV_HOOK, "report's progress lines when stderr is no terminal"},
    {"GATELAB_TEST_SPLIT_SECONDS", ENV_HOOK, "the tokenizer's time bound on splitting a text"},
    {"GATELAB_TEST_FINGERPRINT", ENV_HOOK, "the training fingerprint, not computed (fnv1a64:HEX)"},
    {"GATELAB_NO_VET", ENV_HOOK,
     "1: run files are read without vetting (fuzzing; not in release builds)"},
    {"GATELAB_SRC", ENV_SUITE, "the source root the tests read fixtures from"},
    {"GATELAB_BIN", ENV_SUITE, "the gatelab binary the shell tests run"},
    {"GATELAB_FAST", ENV_SUITE, "1: the shell tests' shorter variants"},
    {"GATELAB_FUZZ_SECONDS", ENV_SUITE, "seconds per fuzz target in tests/run_tests.sh"},
    {"GATELAB_FUZZ_BUILD", ENV_SUITE, "the fuzzers' build directory (run_fuzzers.sh)"},
    {"GATELAB_FRESH_DIR", ENV_SUITE,
     "tests/fresh_root.sh's work directory (default /var/tmp/gatelab-fresh)"},
    {"GATELAB_TEST_SHOW", ENV_SUITE, "print the report sections test_report checks"},
    {NULL, ENV_SETTING, NULL}};

/* The row of name, or NULL. */
static const EnvVar *row_of(const char *name) {
    for (const EnvVar *v = env_vars; v->name; v++)
        if (!strcmp(v->name, name)) return v;
    return NULL;
}

int env_hooks_on(void) {
    const char *r = getenv("GATELAB_TEST_RUN");
    return r && *r;
}

/* Whether hook v acts: hooks on, and GATELAB_NO_VET only where allowed. */
static int hook_acts(const EnvVar *v) {
    return env_hooks_on() && (strcmp(v->name, NO_VET) || GATELAB_ALLOW_NO_VET);
}

const char *env_get(const char *name) {
    const EnvVar *v = row_of(name);
    const char *s = v ? getenv(name) : NULL;
    if (!s || !*s) return NULL;
    if (v->kind == ENV_HOOK && !hook_acts(v)) return NULL;
    return s;
}

/* The hooks set in the environment whose acting is `acts`, listed into
 * buf[n] (with their values when with_value); how many. */
static int list_hooks(int acts, int with_value, char *buf, size_t n) {
    int count = 0;
    size_t used = 0;
    if (n) buf[0] = 0;
    for (const EnvVar *v = env_vars; v->name; v++) {
        const char *s = v->kind == ENV_HOOK ? getenv(v->name) : NULL;
        if (!s || !*s || hook_acts(v) != acts) continue;
        count++;
        if (used < n) {
            int k =
                with_value
                    ? snprintf(buf + used, n - used, "%s%s=%.60s", count > 1 ? " " : "", v->name, s)
                    : snprintf(buf + used, n - used, "%s%s", count > 1 ? " " : "", v->name);
            used += k > 0 ? (size_t)k : 0;
        }
    }
    return count;
}

int env_hooks_in_use(char *buf, size_t n) { return list_hooks(1, 1, buf, n); }

int env_hooks_ignored(char *buf, size_t n) { return list_hooks(0, 0, buf, n); }

void env_note_hooks(const char *who) {
    char hooks[512];
    if (env_hooks_in_use(hooks, sizeof hooks))
        fprintf(stderr, "%s: test hooks on (GATELAB_TEST_RUN=%.40s): %s\n", who,
                getenv("GATELAB_TEST_RUN"), hooks);
}
