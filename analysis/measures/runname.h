/* runname.h: the run name of a run file, which is what the report groups
 * by: the file name stem without a trailing `_s<digits>` seed suffix
 * ("dir/baseline-brown_s2.h5" -> "baseline-brown"; "dir/x.h5" -> "x").
 * Two sweep runs of one variant on different data or lr have different
 * run names, so grouping by it never merges them. Characters a REPORT.md
 * table cannot show as text become '_' (table_name); `report` refuses a
 * run file whose name breaks the name rule (name_plain, util.h). Header-only so the
 * report, its extra sections and the plots share one definition. */
#ifndef GATELAB_RUNNAME_H
#define GATELAB_RUNNAME_H

#include <string.h>

/* s copied into out[n] (cut when long) with '|', '`', the markup
 * characters < > [ ] & \ and control characters made '_', so a Markdown
 * table cell or code span shows it whole on one line as text: no row split,
 * no HTML tag or entity, no link. Every string from a run file that the
 * report prints (file and run names, variant, data, paths, reasons) passes
 * through it. The length copied. */
static inline size_t table_name(char *out, size_t n, const char *s) {
    size_t k = 0;
    for (; n && s[k] && k + 1 < n; k++) {
        unsigned char c = (unsigned char)s[k];
        out[k] = c < 0x20 || c == 0x7f || strchr("|`<>[]&\\", c) ? '_' : s[k];
    }
    if (n) out[k] = '\0';
    return k;
}

static inline void run_name(char *out, size_t n, const char *path) {
    if (!n) return;
    const char *b = strrchr(path, '/');
    size_t k = table_name(out, n, b ? b + 1 : path);
    if (k > 3 && !strcmp(out + k - 3, ".h5")) out[k -= 3] = '\0';
    size_t d = k;
    while (d > 0 && out[d - 1] >= '0' && out[d - 1] <= '9') d--;
    /* "_s" then at least one digit, and something before the "_s" */
    if (d < k && d >= 3 && out[d - 1] == 's' && out[d - 2] == '_') out[d - 2] = '\0';
}

#endif
