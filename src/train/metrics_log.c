/* metrics_log.c: the live metrics log (metrics_log.h). */
#include "metrics_log.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_write.h"
#include "outpath.h"
#include "util.h"

#define LINE_MAX_BYTES 8192
#define LOG_MAX ((size_t)1 << 31) /* a log a resume reads back */

int mlog_path(const char *run, char *out, size_t outlen) {
    int n = snprintf(out, outlen, "%s.jsonl", run);
    return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

int mlog_check(const char *run, char *err, size_t errlen) {
    char p[CFG_STR + 16];
    if (mlog_path(run, p, sizeof p)) return seterr(err, errlen, "%s: path too long", run);
    return outpath_check(p, OUT_JSONL, 1, err, errlen);
}

/* A line buffer: printf-appends; overflow marks it bad. */
typedef struct {
    char s[LINE_MAX_BYTES];
    size_t n;
    int bad;
} Line;

static void put(Line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(Line *l, const char *fmt, ...) {
    if (l->bad) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(l->s + l->n, sizeof l->s - l->n, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof l->s - l->n) l->bad = 1;
    else l->n += (size_t)k;
}

static void put_num(Line *l, const char *key, double v) {
    if (isfinite(v)) put(l, ",\"%s\":%.9g", key, v);
    else put(l, ",\"%s\":null", key);
}

/* A JSON string: quotes, backslashes and control bytes escaped. */
static void put_str(Line *l, const char *key, const char *s) {
    put(l, ",\"%s\":\"", key);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') put(l, "\\%c", c);
        else if (c < 0x20) put(l, "\\u%04x", c);
        else put(l, "%c", c);
    }
    put(l, "\"");
}

/* Write the line whole (one write on an O_APPEND descriptor); on failure
 * warn once and stop logging. */
static void emit(MetricsLog *m, Line *l) {
    if (m->fd < 0) return;
    put(l, "}\n");
    ssize_t w = l->bad ? -1 : write(m->fd, l->s, l->n);
    if (w == (ssize_t)l->n) return;
    fprintf(stderr, "warning: metrics log %s: %s; training goes on without it\n", m->path,
            l->bad  ? "line too long"
            : w < 0 ? strerror(errno)
                    : "short write");
    close(m->fd);
    m->fd = -1;
}

/* The start or resume line: the event, its step and the run's shape. */
static void start_line(Line *l, const char *event, const Config *c, long long step) {
    put(l, "{\"event\":\"%s\"", event);
    put(l, ",\"step\":%lld", step);
    put_str(l, "variant", c->variant);
    put(l, ",\"steps\":%d,\"batch_size\":%d,\"seq_len\":%d,\"eval_every\":%d", c->steps,
        c->batch_size, c->seq_len, c->eval_every);
    put(l, "}\n");
}

/* Write all n bytes of b to fd; 0, or -1 with errno set (ENOSPC for a
 * short write). */
static int write_all(int fd, const char *b, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (w == 0) errno = ENOSPC;
            return -1;
        }
        b += w, n -= (size_t)w;
    }
    return 0;
}

/* Put a new log holding head[0..n) in place of run's log, never writing
 * the file that was there: the bytes go to a fresh temporary beside it
 * (atomic_write.h) that is renamed over it, so a hard-linked copy of the
 * old log (a `cp -al` backup) keeps its bytes. m->fd is left open on the
 * new log, appending. 0, or -1 with one line and no log. */
static int place_log(MetricsLog *m, const char *run, const char *head, size_t n, char *err,
                     size_t errlen) {
    m->fd = -1;
    if (mlog_path(run, m->path, sizeof m->path))
        return seterr(err, errlen, "%s: path too long", run);
    /* the one output rule, again at the moment of writing; never a link */
    if (outpath_check(m->path, OUT_JSONL, 1, err, errlen)) return -1;
    char tmp[ATOMIC_TMP_MAX];
    int fd = atomic_create(m->path, tmp, sizeof tmp, err, errlen);
    if (fd < 0) return -1;
    if (write_all(fd, head, n) != 0 || fcntl(fd, F_SETFL, O_APPEND) != 0) {
        int e = errno;
        close(fd);
        atomic_discard(tmp);
        return seterr(err, errlen, "%s: cannot write: %s", m->path, strerror(e));
    }
    if (atomic_commit(tmp, m->path, 1, err, errlen) != 0) {
        close(fd);
        return -1;
    }
    m->fd = fd;
    return 0;
}

/* A log of its start line and, with resume set, a resume line at step. */
static int place_fresh(MetricsLog *m, const char *run, const Config *c, int resume, long long step,
                       char *err, size_t errlen) {
    Line l = {.n = 0};
    start_line(&l, "start", c, 0);
    if (resume) start_line(&l, "resume", c, step);
    if (l.bad) return seterr(err, errlen, "%s: the start line is too long", run);
    return place_log(m, run, l.s, l.n, err, errlen);
}

int mlog_open_fresh(MetricsLog *m, const char *run, const Config *c, char *err, size_t errlen) {
    return place_fresh(m, run, c, 0, 0, err, errlen);
}

/* The byte length of the part of log text t[0..n) a resume at `step`
 * keeps: whole lines up to the first that the resumed session redoes. */
static size_t kept_prefix(const char *t, size_t n, long long step) {
    size_t at = 0;
    while (at < n) {
        const char *nl = memchr(t + at, '\n', n - at);
        if (!nl) break; /* a torn last line */
        char ev[16];
        long long s;
        if (sscanf(t + at, "{\"event\":\"%15[a-z]\",\"step\":%lld", ev, &s) == 2) {
            int train = !strcmp(ev, "train");
            int redone = train ? s >= step
                               : (!strcmp(ev, "eval") || !strcmp(ev, "probe") ||
                                  !strcmp(ev, "done") || !strcmp(ev, "diverged")) &&
                                     s > step;
            if (redone) break;
        }
        at = (size_t)(nl - t) + 1;
    }
    return at;
}

int mlog_open_resume(MetricsLog *m, const char *run, const Config *c, long long step, char *err,
                     size_t errlen) {
    m->fd = -1;
    if (mlog_path(run, m->path, sizeof m->path))
        return seterr(err, errlen, "%s: path too long", run);
    struct stat st;
    if (lstat(m->path, &st) != 0 || st.st_size == 0)
        return place_fresh(m, run, c, 1, step, err, errlen);
    if (outpath_check(m->path, OUT_JSONL, 1, err, errlen)) return -1;
    size_t n = 0;
    char *t = input_slurp(m->path, LOG_MAX, &n, err, errlen);
    if (!t) return -1;
    Line l = {.n = 0};
    start_line(&l, "resume", c, step);
    size_t keep = kept_prefix(t, n, step);
    char *head = l.bad ? NULL : realloc(t, keep + l.n);
    if (!head) {
        free(t);
        return seterr(err, errlen, "%s: out of memory for the resume line", m->path);
    }
    memcpy(head + keep, l.s, l.n);
    int rc = place_log(m, run, head, keep + l.n, err, errlen);
    free(head);
    return rc;
}

void mlog_train(MetricsLog *m, long long step, double loss, double lr, double grad_norm,
                double tokens_per_s, long long tokens, double seconds) {
    if (m->fd < 0) return;
    Line l = {.n = 0};
    put(&l, "{\"event\":\"train\",\"step\":%lld", step);
    put_num(&l, "loss", loss);
    put_num(&l, "lr", lr);
    put_num(&l, "grad_norm", grad_norm);
    put_num(&l, "tokens_per_s", tokens_per_s);
    put(&l, ",\"tokens\":%lld", tokens);
    put_num(&l, "seconds", seconds);
    emit(m, &l);
}

void mlog_eval(MetricsLog *m, long long step, double val_loss, double bpb) {
    if (m->fd < 0) return;
    Line l = {.n = 0};
    put(&l, "{\"event\":\"eval\",\"step\":%lld", step);
    put_num(&l, "val_loss", val_loss);
    put_num(&l, "ppl", exp(val_loss));
    if (isfinite(bpb)) put_num(&l, "bpb", bpb); /* only for byte-level data */
    emit(m, &l);
}

void mlog_probe(MetricsLog *m, long long step, const double *f_attn_layer, int L) {
    if (m->fd < 0) return;
    Line l = {.n = 0};
    double s = 0;
    for (int i = 0; i < L; i++) s += f_attn_layer[i];
    put(&l, "{\"event\":\"probe\",\"step\":%lld", step);
    put_num(&l, "f_attn", L > 0 ? s / L : NAN);
    put(&l, ",\"f_attn_layer\":[");
    for (int i = 0; i < L; i++) {
        if (isfinite(f_attn_layer[i])) put(&l, "%s%.9g", i ? "," : "", f_attn_layer[i]);
        else put(&l, "%snull", i ? "," : "");
    }
    put(&l, "]");
    emit(m, &l);
}

void mlog_end(MetricsLog *m, const char *event, long long step) {
    if (m->fd < 0) return;
    Line l = {.n = 0};
    put(&l, "{\"event\":\"%s\",\"step\":%lld", event, step);
    emit(m, &l);
}

void mlog_close(MetricsLog *m) {
    if (m->fd >= 0) close(m->fd);
    m->fd = -1;
}
