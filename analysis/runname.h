/* runname.h: the run name of a run file, which is what the report groups
 * by: the file name stem without a trailing `_s<digits>` seed suffix
 * ("dir/baseline-brown_s2.h5" -> "baseline-brown"; "dir/x.h5" -> "x").
 * Two sweep runs of one variant on different data or lr have different
 * run names, so grouping by it never merges them. Header-only so the
 * report, its extra sections and the plots share one definition. */
#ifndef GATELAB_RUNNAME_H
#define GATELAB_RUNNAME_H

#include <stdio.h>
#include <string.h>

static inline void run_name(char *out, size_t n, const char *path)
{
    const char *b = strrchr(path, '/');
    snprintf(out, n, "%s", b ? b + 1 : path);
    size_t k = strlen(out);
    if (k > 3 && !strcmp(out + k - 3, ".h5")) out[k -= 3] = '\0';
    size_t d = k;
    while (d > 0 && out[d - 1] >= '0' && out[d - 1] <= '9') d--;
    /* "_s" then at least one digit, and something before the "_s" */
    if (d < k && d >= 3 && out[d - 1] == 's' && out[d - 2] == '_')
        out[d - 2] = '\0';
}

#endif
