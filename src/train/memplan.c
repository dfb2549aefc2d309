/* memplan.c: see memplan.h. */
#include "memplan.h"
#include "env.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "config_derive.h"
#include "model.h"
#include "probe.h"
#include "trainer.h"
#include "util.h"

#define SAT (SIZE_MAX / 8) /* every sum saturates here: "too much", never wraps */

static size_t add(size_t a, size_t b) { return a > SAT - b ? SAT : a + b; }
static size_t mul(size_t a, size_t b) { return b && a > SAT / b ? SAT : a * b; }

static void finish(MemPlan *p) {
    p->total = add(add(p->params, p->optimiser), add(p->activations, p->probe));
}

int memplan_train(const Config *cfg, MemPlan *p, char *err, size_t errlen) {
    Model m;
    if (model_shape(&m, cfg, err, errlen) != 0) return -1;
    int B = cfg->batch_size, ns = config_shards(cfg);
    size_t n = m.table.total;
    p->params = mul(n, sizeof(float));
    const int T = config_max_len(cfg);
    p->optimiser = add(mul(2 * sizeof(float), n), mul(2 * sizeof(int), (size_t)B * T));
    p->activations = 0;
    for (int w = 0; w < ns; w++) { /* the trainer's shards; those that lead own activations */
        const int b = batch_share(B, ns, w);
        size_t all = runstate_bytes(&m, b, T), acts = runstate_acts_bytes(&m, b, T);
        p->activations = add(p->activations, trainer_shard_leads(cfg, w) ? all : all - acts);
    }
    /* the probe runs on the first shard's RunState */
    p->probe = probe_bytes(&m, cfg->probe_n, cfg->seq_len, batch_share(B, ns, 0));
    model_free(&m);
    finish(p);
    return 0;
}

int memplan_eval(const Config *cfg, int B, int L, MemPlan *p, char *err, size_t errlen) {
    Model m;
    if (model_shape(&m, cfg, err, errlen) != 0) return -1;
    p->params = mul(m.table.total, sizeof(float));
    p->optimiser = 0; /* no training: the token buffers count as activations */
    p->activations = add(add(runstate_bytes(&m, B, L), mul((size_t)L * L, sizeof(float))),
                         mul(2 * sizeof(int), mul((size_t)B, (size_t)L)));
    p->probe = 0;
    model_free(&m);
    finish(p);
    return 0;
}

/* GATELAB_MEM_LIMIT as bytes: 1 and *v when it is a plain decimal in
 * 1 .. SAT, 0 when unset, -1 when set to anything else (a value past the
 * range is refused, never read as "no limit"). */
static int env_limit(size_t *v) {
    const char *env = env_get("GATELAB_MEM_LIMIT");
    if (!env || !*env) return 0;
    if (strspn(env, "0123456789") != strlen(env)) return -1; /* signs, units, words */
    errno = 0;
    unsigned long long x = strtoull(env, NULL, 10);
    if (x == 0 || errno == ERANGE || x > SAT) return -1;
    *v = (size_t)x;
    return 1;
}

/* MemAvailable of /proc/meminfo in bytes (what can be allocated now
 * without swapping); 0 when it cannot be read. */
static size_t mem_available(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
    fclose(f);
    return mul((size_t)kb, 1024);
}

size_t memplan_limit(void) {
    size_t v;
    if (env_limit(&v) == 1) return v;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    size_t lim = pages > 0 && page > 0 ? mul((size_t)pages, (size_t)page) : SAT;
    size_t avail = mem_available();
    if (avail > 0 && avail < lim) lim = avail;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < lim)
        lim = (size_t)rl.rlim_cur;
    return lim;
}

/* "12.3 MiB" */
static const char *human(size_t b, char *buf, size_t n) {
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024.0 && u < 6) v /= 1024.0, u++;
    snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
    return buf;
}

int memplan_check(const MemPlan *p, const char *what, char *err, size_t errlen) {
    size_t v;
    if (env_limit(&v) < 0)
        return seterr(err, errlen,
                      "GATELAB_MEM_LIMIT='%.40s' is not a positive number of bytes up to %zu "
                      "(e.g. 8000000000; unset it for the machine's available memory)",
                      env_get("GATELAB_MEM_LIMIT"), (size_t)SAT);
    size_t lim = memplan_limit();
    if (p->total <= lim) return 0;
    char t[32], a[32], b[32], c[32], d[32], l[32];
    return seterr(err, errlen,
                  "%s needs %s%zu bytes (%s: params %s, optimiser %s, activations %s, "
                  "probe %s), over the memory limit of %zu bytes (%s: available memory, or "
                  "GATELAB_MEM_LIMIT)",
                  what, p->total >= SAT ? "over " : "", p->total, human(p->total, t, 32),
                  human(p->params, a, 32), human(p->optimiser, b, 32), human(p->activations, c, 32),
                  human(p->probe, d, 32), lim, human(lim, l, 32));
}
