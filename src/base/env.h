/* env.h: every GATELAB_* environment variable, in one table, and the one
 * way gatelab reads them (env_get).
 *
 * Test hooks (GATELAB_TEST_*, GATELAB_NO_VET) act only in an environment
 * that says it is a test: GATELAB_TEST_RUN set to the test run's name (the
 * suite's tests/meson.build sets it for every test). Without it a hook
 * left in a user's environment is ignored, and gatelab says so on stderr
 * (env_hooks_ignored); with it, every run made under a hook says so on
 * stderr and in its run file (env_hooks_in_use). GATELAB_NO_VET, which
 * switches off the vetting of run files, acts only in a build that is not
 * a release build (GATELAB_ALLOW_NO_VET, set by meson for the other build
 * types and by the fuzzers' build). */
#ifndef GATELAB_ENV_H
#define GATELAB_ENV_H

#include <stddef.h>

typedef enum {
    ENV_SETTING,  /* a user's setting, documented in docs/ */
    ENV_INTERNAL, /* set by gatelab for its own re-executed self */
    ENV_HOOK,     /* a test hook: read only under GATELAB_TEST_RUN */
    ENV_SUITE,    /* read by the test suite's programs only, never by gatelab */
} EnvKind;

typedef struct {
    const char *name;
    EnvKind kind;
    const char *what; /* one line */
} EnvVar;

/* Every GATELAB_* variable, ending with a row whose name is NULL. */
extern const EnvVar env_vars[];

/* The value of variable name, a row of env_vars: NULL when it is unset or
 * empty, when it is a hook and hooks are off (GATELAB_TEST_RUN unset or
 * empty), when it is GATELAB_NO_VET in a release build, or when name is
 * not in the table. */
const char *env_get(const char *name);

/* 1 when GATELAB_TEST_RUN names a test run, so the hooks act. */
int env_hooks_on(void);

/* The hooks that act in this process, as "NAME=VALUE NAME=VALUE" in
 * buf[n] (empty when none); returns how many. */
int env_hooks_in_use(char *buf, size_t n);

/* When hooks act in this process, one line on stderr naming them:
 * "WHO: test hooks on (GATELAB_TEST_RUN=X): NAME=VALUE ...". Called where a
 * hook can change results, once the work is about to start (a trainer
 * before its first step, a sweep before its first run). */
void env_note_hooks(const char *who);

/* The hooks set in the environment that do not act (hooks off, or
 * GATELAB_NO_VET in a release build), as "NAME NAME" in buf[n]; returns how
 * many. */
int env_hooks_ignored(char *buf, size_t n);

#endif
