/* cmdutil.c: helpers shared by the analysis subcommands. */
#include "cmdutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cu_too_many(const char *cmd, const char *opt, int n) {
    fprintf(stderr, "gatelab %s: too many %s (at most %d)\n", cmd, opt, n);
    return 2;
}

int cu_online_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 && n < 64 ? (int)n : 1;
}

int cu_parse_int(const char *s, int lo, int hi, int *out) {
    long long v;
    if (parse_ll_range(s, lo, hi, &v) != 0) return -1;
    *out = (int)v;
    return 0;
}

int cu_check_out(const char *cmd, const char *path, OutKind kind) {
    char err[1024];
    int rc = kind == OUT_RUNFILE ? runfile_outpath_check(path, 1, err, sizeof err)
                                 : outpath_check(path, kind, 1, err, sizeof err);
    if (rc == 0) return 0;
    fprintf(stderr, "gatelab %s: %s\n", cmd, err);
    return -1;
}

int cu_load(const char *cmd, const char *path, long long step, RunReader **r, ProbeRecord *p) {
    char err[512];
    *r = runread_open(path, err, sizeof err);
    if (!*r) {
        fprintf(stderr, "gatelab %s: %s\n", cmd, err);
        return -1;
    }
    if (runread_probe(*r, step, p, err, sizeof err) < 0) {
        fprintf(stderr, "gatelab %s: %s\n", cmd, err);
        runread_close(*r);
        *r = NULL;
        return -1;
    }
    return 0;
}

const CuProbeOpts cu_probe_defaults = {-1, 0};
const OptRow cu_probe_rows[] = {{'s', "step", OPT_LL, "N", 0, LLONG_MAX, "the last",
                                 "probe at training step N", 0, 0, &cu_probe_defaults.step},
                                {'j', "json", OPT_FLAG, NULL, 0, 0, NULL, "machine-readable output",
                                 0, 0, &cu_probe_defaults.json},
                                {0}};

int cu_probe_cmd(const OptTable *t, int argc, char **argv, CuReport report) {
    CuProbeOpts o;
    int at = opt_parse_all(t, &o, argc, argv);
    if (at < 0) return opt_exit(at);
    if (at != argc - 1) {
        fprintf(stderr, "gatelab %s: want exactly one RUN.h5 (gatelab %s --help)\n", t->cmd,
                t->cmd);
        return 2;
    }
    RunReader *r;
    ProbeRecord p;
    if (cu_load(t->cmd, argv[at], o.step, &r, &p) < 0) return 2;
    int rc = report(r, &p, o.json);
    runread_probe_free(&p);
    runread_close(r);
    return rc;
}

json_t *cu_json_head(RunReader *r, const ProbeRecord *p) {
    const RunMeta *m = runread_meta(r);
    json_t *o = json_object();
    cj_set(o, "file", cj_str(m->path));
    cj_set(o, "variant", cj_str(m->variant));
    cj_set(o, "seed", json_integer(m->seed));
    return cj_set(o, "step", json_integer(p->step));
}
