/* cmdutil.c: helpers shared by the analysis subcommands. */
#include "cmdutil.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cu_bad_option(const char *cmd, int c, char **argv) {
    if (c == '!') return 2; /* cu_getopt said it */
    char shortopt[3] = {'-', (char)optopt, 0};
    /* a long option (optopt 0 when unknown) is the word getopt just took */
    const char *opt =
        optopt > 0 && optopt < 128 && argv[optind - 1][1] != '-' ? shortopt : argv[optind - 1];
    if (c == ':')
        fprintf(stderr, "gatelab %s: option '%s' needs a value (try gatelab %s --help)\n", cmd, opt,
                cmd);
    else
        fprintf(stderr, "gatelab %s: unknown option '%s' (try gatelab %s --help)\n", cmd, opt, cmd);
    return 2;
}

int cu_too_many(const char *cmd, const char *opt, int n) {
    fprintf(stderr, "gatelab %s: too many %s (at most %d)\n", cmd, opt, n);
    return 2;
}

/* The entry of o's table that getopt_long matched: by longindex for a long
 * option, by its value for a short one; -1 when none (a bad option). */
static int matched_entry(const CliOpts *o, int c, int longindex) {
    if (longindex >= 0) return longindex;
    for (int i = 0; o->opts[i].name && i < CU_MAX_OPTS; i++)
        if (o->opts[i].val == c) return i;
    return -1;
}

int cu_getopt(const CliOpts *o, int argc, char **argv, unsigned char *seen) {
    int longindex = -1;
    int c = getopt_long(argc, argv, o->shortopts, o->opts, &longindex);
    if (c == -1 || c == '?' || c == ':') return c;
    int i = matched_entry(o, c, longindex);
    if (i < 0 || i >= CU_MAX_OPTS) return c;
    int repeatable = c > 0 && c < 128 && strchr(o->repeatable, c);
    if (seen[i]++ && !repeatable) {
        fprintf(stderr, "gatelab %s: option '--%s' given twice (try gatelab %s --help)\n", o->cmd,
                o->opts[i].name, o->cmd);
        return '!';
    }
    return c;
}

int cu_parse_ll(const char *s, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < 0) return -1;
    *out = v;
    return 0;
}

int cu_online_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 && n < 64 ? (int)n : 1;
}

int cu_parse_int(const char *s, int lo, int hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
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

static const struct option probe_opts[] = {{"step", required_argument, 0, 's'},
                                           {"json", no_argument, 0, 'j'},
                                           {"help", no_argument, 0, 'h'},
                                           {0, 0, 0, 0}};
const CliOpts cu_sinks_options = {"sinks", ":s:jh", "", probe_opts};
const CliOpts cu_gates_options = {"gates", ":s:jh", "", probe_opts};
const CliOpts cu_acts_options = {"acts", ":s:jh", "", probe_opts};

/* The CliOpts of probe command cmd. */
static const CliOpts *probe_options(const char *cmd) {
    if (!strcmp(cmd, "gates")) return &cu_gates_options;
    if (!strcmp(cmd, "acts")) return &cu_acts_options;
    return &cu_sinks_options;
}

int cu_probe_cmd(const char *cmd, int argc, char **argv, void (*usage)(FILE *f), CuReport report) {
    long long step = -1;
    int json = 0, c;
    unsigned char seen[CU_MAX_OPTS] = {0};
    optind = 1;
    opterr = 0;
    while ((c = cu_getopt(probe_options(cmd), argc, argv, seen)) != -1) {
        if (c == 's' && cu_parse_ll(optarg, &step) == 0) continue;
        if (c == 'j') {
            json = 1;
            continue;
        }
        if (c == 'h') {
            usage(stdout);
            return 0;
        }
        if (c == 's')
            fprintf(stderr,
                    "gatelab %s: --step wants a step number, "
                    "got '%s'\n",
                    cmd, optarg);
        else return cu_bad_option(cmd, c, argv);
        return 2;
    }
    if (optind != argc - 1) {
        fprintf(stderr,
                "gatelab %s: want exactly one RUN.h5 "
                "(gatelab %s --help)\n",
                cmd, cmd);
        return 2;
    }
    RunReader *r;
    ProbeRecord p;
    if (cu_load(cmd, argv[optind], step, &r, &p) < 0) return 2;
    int rc = report(r, &p, json);
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
