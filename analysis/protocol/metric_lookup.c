/* metric_lookup.c: the metric table's lookups (metric_table.h): names,
 * headers and definitions formatted from a row's threshold, the rows a
 * report table or section shows, and a Row's value of a row. The rows
 * themselves are metric_table.c's; this file reaches them by metric_at. */
#include "metric_table.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "metrics.h" /* SINK_EPS */
#include "row.h"

/* fmt into buf[len] with every "%g" replaced by thr (kept when thr is NaN)
 * and every "{sink}" by SINK_EPS; truncated to fit. Plain text is copied
 * as it is: only the two placeholders go through snprintf. */
static void with_threshold(const char *fmt, double thr, char *buf, size_t len) {
    size_t n = 0;
    if (len == 0) return;
    buf[0] = '\0';
    for (const char *p = fmt; *p && n + 1 < len;) {
        int w;
        if (!strncmp(p, "%g", 2) && !isnan(thr)) w = snprintf(buf + n, len - n, "%g", thr), p += 2;
        else if (!strncmp(p, "{sink}", 6)) w = snprintf(buf + n, len - n, "%g", SINK_EPS), p += 6;
        else {
            size_t k = 1; /* the text up to the next possible placeholder */
            while (p[k] && p[k] != '%' && p[k] != '{') k++;
            if (k > len - 1 - n) k = len - 1 - n;
            memcpy(buf + n, p, k), buf[n + k] = '\0', p += k, w = (int)k;
        }
        n = w < 0 ? n : n + (size_t)w < len ? n + (size_t)w : len - 1;
    }
}

void metric_name(const MetricCol *m, char *buf, size_t len) {
    with_threshold(m->csv, m->threshold, buf, len);
}

void metric_head(const MetricCol *m, char *buf, size_t len) {
    with_threshold(m->head ? m->head : "", m->threshold, buf, len);
}

void metric_def(const MetricCol *m, char *buf, size_t len) {
    with_threshold(m->def ? m->def : "", m->threshold, buf, len);
}

int metric_index(const char *name) {
    char buf[128];
    for (int i = 0; metric_at(i); i++) {
        metric_name(metric_at(i), buf, sizeof buf);
        if (!strcmp(buf, name)) return i;
    }
    return -1;
}

const MetricCol *metric_find(const char *name) { return metric_at(metric_index(name)); }

int metric_compared(const MetricCol **out, int cap) {
    int n = 0;
    for (int i = 0; metric_at(i) && n < cap; i++)
        if (metric_at(i)->lower) out[n++] = metric_at(i);
    return n;
}

int metric_md_columns(int t, const MetricCol **out, int cap) {
    int n = 0;
    for (int order = 1; n < cap; order++) {
        int found = 0;
        for (int i = 0; metric_at(i) && n < cap; i++) {
            const MetricCol *m = metric_at(i);
            if (m->md_table == t && m->md_order == order) out[n++] = m, found = 1;
        }
        if (!found) break;
    }
    return n;
}

int metric_seeds_columns(const MetricCol **out, int cap) {
    int n = 0;
    for (int order = 1; n < cap; order++) {
        int found = 0;
        for (int i = 0; metric_at(i) && n < cap; i++)
            if (metric_at(i)->seeds_order == order) out[n++] = metric_at(i), found = 1;
        if (!found) break;
    }
    return n;
}

const MetricCol *metric_declared(int i) {
    const MetricCol *m = metric_at(i);
    return m && m->proto ? m : NULL;
}

double metric_value(const Row *w, const MetricCol *m) {
    const char *at = (const char *)w + m->off;
    switch (m->kind) {
    case MK_LL: return (double)*(const long long *)at;
    case MK_FLAG:
    case MK_INT: return *(const int *)at >= 0 ? *(const int *)at : NAN;
    case MK_REAL:
    case MK_WHOLE: return *(const double *)at;
    }
    return NAN;
}

void metric_blank(Row *w) {
    for (int i = 0; metric_at(i); i++) {
        const MetricCol *m = metric_at(i);
        char *at = (char *)w + m->off;
        int zero = m->blank == MB_ZERO;
        switch (m->kind) {
        case MK_LL: *(long long *)at = zero ? 0 : -1; break;
        case MK_FLAG:
        case MK_INT: *(int *)at = zero ? 0 : -1; break;
        case MK_REAL:
        case MK_WHOLE: *(double *)at = zero ? 0 : NAN; break;
        }
    }
}
