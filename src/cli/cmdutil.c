/* cmdutil.c: helpers shared by the analysis subcommands. */
#include "cmdutil.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

int cu_parse_ll(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < 0) return -1;
    *out = v;
    return 0;
}

int cu_check_out(const char *cmd, const char *path, OutKind kind)
{
    char err[1024];
    if (outpath_check(path, kind, 1, err, sizeof err) == 0) return 0;
    fprintf(stderr, "gatelab %s: %s\n", cmd, err);
    return -1;
}

int cu_load(const char *cmd, const char *path, long long step,
            RunReader **r, ProbeRecord *p)
{
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

int cu_probe_cmd(const char *cmd, int argc, char **argv,
                 void (*usage)(FILE *f), CuReport report)
{
    static const struct option opts[] = {
        {"step", required_argument, 0, 's'},
        {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    long long step = -1;
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "s:jh", opts, NULL)) != -1) {
        if (c == 's' && cu_parse_ll(optarg, &step) == 0) continue;
        if (c == 'j') { json = 1; continue; }
        if (c == 'h') { usage(stdout); return 0; }
        if (c == 's')
            fprintf(stderr, "gatelab %s: --step wants a step number, "
                            "got '%s'\n", cmd, optarg);
        else
            usage(stderr);
        return 2;
    }
    if (optind != argc - 1) {
        fprintf(stderr, "gatelab %s: want exactly one RUN.h5 "
                        "(gatelab %s --help)\n", cmd, cmd);
        return 2;
    }
    RunReader *r;
    ProbeRecord p;
    if (cu_load(cmd, argv[optind], step, &r, &p) < 0) return 2;
    report(r, &p, json);
    runread_probe_free(&p);
    runread_close(r);
    return 0;
}

void cu_json_head(RunReader *r, const ProbeRecord *p)
{
    const RunMeta *m = runread_meta(r);
    printf("{\"file\": ");
    cu_json_str(m->path);
    printf(", \"variant\": ");
    cu_json_str(m->variant);
    printf(", \"seed\": %lld, \"step\": %lld", m->seed, p->step);
}

void cu_json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}
