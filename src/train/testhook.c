/* testhook.c: the GATELAB_TEST_* fault injection of testhook.h. */
#include "testhook.h"
#include "env.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Variable NAME as a step >= 0 into *out (-1 when unset or empty).
 * 0, or -1 with a reason. */
static int env_step(const char *name, long long *out, char *err, size_t errlen) {
    const char *s = env_get(name);
    *out = -1;
    if (!s || !*s) return 0;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < 0)
        return seterr(err, errlen, "%s: bad step '%.40s' (expected a number >= 0)", name, s);
    *out = v;
    return 0;
}

int testhook_load(TestHooks *h, char *err, size_t errlen) {
    h->nan_kind = FAULT_LOSS;
    if (env_step("GATELAB_TEST_NAN_AT", &h->nan_at, err, errlen) != 0 ||
        env_step("GATELAB_TEST_KILL_AT", &h->kill_at, err, errlen) != 0)
        return -1;
    const char *k = env_get("GATELAB_TEST_NAN_KIND");
    if (!k || !*k || !strcmp(k, "loss")) return 0;
    if (!strcmp(k, "grad")) h->nan_kind = FAULT_GRAD;
    else if (!strcmp(k, "weight")) h->nan_kind = FAULT_WEIGHT;
    else
        return seterr(err, errlen, "GATELAB_TEST_NAN_KIND: '%.40s' is not loss, grad or weight", k);
    return 0;
}

void testhook_before_step(const TestHooks *h, long long step, Trainer *tr) {
    if (step != h->nan_at) return;
    if (h->nan_kind == FAULT_WEIGHT) tr->model.w.final_norm_w[0] = NAN; /* every row: NaN loss */
    if (h->nan_kind == FAULT_GRAD) tr->poison_grad = 1;                 /* a NaN norm */
}

float testhook_loss(const TestHooks *h, long long step, float loss) {
    return step == h->nan_at && h->nan_kind == FAULT_LOSS ? NAN : loss;
}

void testhook_after_step(const TestHooks *h, long long step) {
    if (step == h->kill_at) raise(SIGKILL); /* a hard crash, as a power cut would be */
}

const char *testhook_exe(void) {
    const char *e = env_get("GATELAB_TEST_EXE");
    return e && *e ? e : NULL;
}

double testhook_lock_wait(double dflt) {
    const char *s = env_get("GATELAB_TEST_LOCK_WAIT");
    if (!s) return dflt;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    return errno || end == s || *end || !(v >= 0) ? dflt : v;
}
