/* srcpath.c: finding a repository file from the running binary
 * (source_file, util.h); kept apart from util.c so util.c needs no
 * generated header. */
#include "util.h"
#include "gatelab_build.h" /* GATELAB_SOURCE_ROOT */

#include <libgen.h>
#include <stdio.h>
#include <unistd.h>

int source_file(const char *rel, char *path, size_t n) {
    if ((size_t)snprintf(path, n, "%s/%s", GATELAB_SOURCE_ROOT, rel) < n && file_exists(path))
        return 0;
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return -1;
    exe[len] = '\0';
    char *dir = dirname(dirname(exe)); /* build/gatelab -> source root */
    if ((size_t)snprintf(path, n, "%s/%s", dir, rel) < n && file_exists(path)) return 0;
    return -1;
}
