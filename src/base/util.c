/* util.c: see util.h. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE */
#include "util.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

int seterr(char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

const char *err_shown(char *buf, size_t len, const char *s) {
    size_t n = 0;
    for (; s[n] && n + 4 < len; n++) buf[n] = s[n] >= 0x20 && s[n] < 0x7f ? s[n] : '?';
    snprintf(buf + n, len - n, "%s", s[n] ? "..." : "");
    return buf;
}

float *falloc(size_t n) {
    if (n == 0) n = 1;
    if (n > SIZE_MAX / sizeof(float)) return NULL;
    return calloc(n, sizeof(float));
}

enum { HUGE_PAGE = 2 << 20 };

void *zalloc_aligned(size_t bytes) {
    void *p = NULL;
    if (bytes == 0) bytes = 64;
    bytes = (bytes + 63) & ~(size_t)63;
    if (posix_memalign(&p, bytes >= HUGE_PAGE ? HUGE_PAGE : 64, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    /* a hint before the first touch: a refusal (no THP, another kernel)
     * leaves the block on small pages, as it would be without it */
    if (bytes >= HUGE_PAGE) (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    memset(p, 0, bytes);
    return p;
}

double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int str_copy(char *dst, size_t dstlen, const char *src) {
    size_t n = strlen(src);
    if (n >= dstlen) return -1;
    memcpy(dst, src, n + 1);
    return 0;
}

char *str_trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

int name_plain(const char *s) {
    if (!*s || *s == '.' || *s == '-') return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              strchr("._+-", *s)))
            return 0;
    return 1;
}

int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

const char *file_kind(unsigned mode) {
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    return "not a regular file";
}

int input_open(const char *path, char *err, size_t errlen) {
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        /* a socket cannot be opened at all: say what it is */
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
            return seterr(err, errlen, "%s: is %s, not a regular file", path,
                          file_kind(st.st_mode));
        return seterr(err, errlen, "%s: cannot open: %s", path, strerror(e));
    }
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return seterr(err, errlen, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return seterr(err, errlen, "%s: is %s, not a regular file", path, file_kind(st.st_mode));
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        int e = errno;
        close(fd);
        return seterr(err, errlen, "%s: cannot open: %s", path, strerror(e));
    }
    return fd;
}

int input_check(const char *path, char *err, size_t errlen) {
    int fd = input_open(path, err, errlen);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

FILE *input_fopen(const char *path, char *err, size_t errlen) {
    int fd = input_open(path, err, errlen);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        seterr(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

char *one_line(char *s) {
    for (unsigned char *c = (unsigned char *)s; c && *c; c++)
        if (*c < 0x20 || *c == 0x7f) *c = ' ';
    return s;
}

char *input_slurp(const char *path, size_t max, size_t *len, char *err, size_t errlen) {
    FILE *f = input_fopen(path, err, errlen);
    if (!f) return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0, got;
    do { /* reads at most max + 1 bytes: one more says "too large" */
        if (n == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            if (cap > max + 1) cap = max + 1;
            char *b = realloc(buf, cap + 1);
            if (!b) {
                free(buf);
                fclose(f);
                seterr(err, errlen, "%s: out of memory reading it", path);
                return NULL;
            }
            buf = b;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0 && n <= max);
    int bad = ferror(f);
    fclose(f);
    if (bad || n > max) {
        free(buf);
        if (bad) seterr(err, errlen, "cannot read %s", path);
        else seterr(err, errlen, "%s: too large (over %zu bytes)", path, max);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

size_t str_edits(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63) return (size_t)-1;
    size_t d[64][64]; /* d[i][j]: a's first i bytes against b's first j */
    for (size_t i = 0; i <= n; i++) d[i][0] = i;
    for (size_t j = 0; j <= m; j++) d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

int dir_make(const char *path) {
    char buf[4096];
    if (str_copy(buf, sizeof buf, path)) return errno = ENAMETOOLONG, -1;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
    struct stat st;
    if (stat(buf, &st) != 0) return -1;
    return S_ISDIR(st.st_mode) ? 0 : (errno = ENOTDIR, -1);
}

void name_for_file(char *out, size_t n, const char *s) {
    if (!n) return;
    size_t k = 0;
    for (; s[k] && k + 1 < n; k++) {
        char c = s[k];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '-' || c == '_';
        out[k] = ok ? c : '_';
    }
    out[k] = 0;
    if (k == 0) snprintf(out, n, "run");
}

uint64_t fnv1a64(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

void protocol_hash_text(const void *p, size_t n, char out[PROTOCOL_HASH_LEN]) {
    snprintf(out, PROTOCOL_HASH_LEN, "fnv1a64:%016llx",
             (unsigned long long)fnv1a64(FNV1A64_OFFSET, p, n));
}

int input_hash(const char *path, char out[PROTOCOL_HASH_LEN], char *err, size_t errlen) {
    FILE *f = input_fopen(path, err, errlen);
    if (!f) return -1;
    enum { PIECE = 1 << 20 };
    unsigned char *buf = malloc(PIECE);
    uint64_t h = FNV1A64_OFFSET;
    size_t got;
    while (buf && (got = fread(buf, 1, PIECE, f)) > 0) h = fnv1a64(h, buf, got);
    int bad = !buf || ferror(f);
    free(buf);
    fclose(f);
    if (bad) return seterr(err, errlen, "%s: cannot read it to hash it", path);
    snprintf(out, PROTOCOL_HASH_LEN, "fnv1a64:%016llx", (unsigned long long)h);
    return 0;
}
