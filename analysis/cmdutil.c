/* cmdutil.c: helpers shared by the analysis subcommands. */
#include "cmdutil.h"

#include <errno.h>
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

int cu_load(const char *cmd, const char *path, long long step,
            RunReader **r, RunProbe *p)
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
