/* report_progress.c: the report's progress lines on stderr
 * (report_priv.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "env.h"
#include "report_priv.h"

void report_progress(const char *fmt, ...) {
    static int on = -1;
    if (on < 0) {
        const char *t = env_get("GATELAB_TEST_PROGRESS");
        on = isatty(2) || (t && *t);
    }
    if (!on) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "report: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
