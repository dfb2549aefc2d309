/* sweepproto.c: the files a sweep reads, and the OUT/protocol.ini a
 * confirmatory sweep writes (sweep.h, protocol_pin.h). */
#include "sweep.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic_write.h"
#include "inifile.h"
#include "protocol.h"     /* PROTO_FILE */
#include "protocol_pin.h" /* PIN_HEADER, pin_rules, pin_build */
#include "util.h"

/* name (a real path) into sw->files unless there; -1 when memory runs out. */
static int add_file(Sweep *sw, const char *name) {
    for (int i = 0; i < sw->n_files; i++)
        if (!strcmp(sw->files[i], name)) return 0;
    char **n = realloc(sw->files, (size_t)(sw->n_files + 1) * sizeof *n);
    if (!n) return -1;
    sw->files = n;
    return (sw->files[sw->n_files] = strdup(name)) ? (sw->n_files++, 0) : -1;
}

/* sw->files: every sweep file read (the top-level one first, in the
 * order read), then every distinct preset, as real paths. */
int sweep_note_files(Sweep *sw, char *const *read, int n_read) {
    for (int i = 0; i < n_read; i++)
        if (add_file(sw, read[i])) return -1;
    char real[PATH_MAX];
    for (int i = 0; i < sw->n_runs; i++)
        if (realpath(sw->runs[i].preset, real) && add_file(sw, real)) return -1;
    return 0;
}

/* 0 when path may be (re)written: absent, or a regular file (not a link)
 * that starts with PIN_HEADER; else -1 with one line. */
static int own_protocol(const char *path, char *err, size_t errlen) {
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : seterr(err, errlen, "%s: %s", path, strerror(errno));
    const char *fix = "move it away, or give --out a directory of its own";
    if (S_ISLNK(st.st_mode))
        return seterr(err, errlen, "%s is a symbolic link, not the sweep's own protocol (%s)", path,
                      fix);
    if (!S_ISREG(st.st_mode))
        return seterr(err, errlen, "%s is %s, not the sweep's own protocol (%s)", path,
                      file_kind(st.st_mode), fix);
    char head[sizeof PIN_HEADER] = "";
    FILE *f = fopen(path, "r");
    size_t got = f ? fread(head, 1, sizeof head - 1, f) : 0;
    if (f) fclose(f);
    head[got] = '\0';
    if (strcmp(head, PIN_HEADER))
        return seterr(err, errlen,
                      "%s was not written by gatelab sweep (it does not start with '%s'); "
                      "refusing to replace it (%s)",
                      path, PIN_HEADER, fix);
    return 0;
}

/* [runs]: each run name with its seeds, in the sweep's order, on lines of
 * at most PIN_LINE_SEEDS characters of seeds. */
static void write_runs(FILE *f, const Sweep *sw) {
    fputs("[runs]\n", f);
    for (int i = 0; i < sw->n_runs; i++) {
        int first = 1;
        for (int k = 0; k < i && first; k++) first = strcmp(sw->runs[k].name, sw->runs[i].name);
        if (!first) continue;
        int col = 0;
        for (int j = i; j < sw->n_runs; j++) {
            if (strcmp(sw->runs[j].name, sw->runs[i].name)) continue;
            if (col > PIN_LINE_SEEDS) fputc('\n', f), col = 0;
            if (!col) fprintf(f, "run = %s", sw->runs[i].name);
            col += fprintf(f, " %llu", sw->runs[j].seed);
        }
        fputc('\n', f);
    }
}

/* [source] and [pin] of src, with the training fingerprint when known. */
static void write_pin(FILE *f, const SweepSource *src, const char *training) {
    fprintf(f, "[source]\nsweep_file = %s\nsweep_commit = %s\nsweep_dirty = %d\nuncommitted = %d\n",
            src->file, src->commit, src->dirty < 0 ? 1 : src->dirty, src->uncommitted);
    char rules[160];
    pin_rules(rules, sizeof rules);
    fprintf(f, "[pin]\nrepo = %s\n", src->repo);
    if (!src->repo[0] && src->why[0]) fprintf(f, "unchecked = %s\n", src->why);
    for (int i = 0; i < src->n_files; i++)
        fprintf(f, "file = %s %s %s\n", src->files[i].commit, src->files[i].hash,
                src->files[i].rel);
    fprintf(f, "gatelab = %s\n", pin_build());
    if (training) fprintf(f, "training = %s\n", training);
    fprintf(f, "rules = %s\n", rules);
}

/* -1 with a reason when a value of src would not fit an INI line. */
static int too_long(const SweepSource *src, char *err, size_t errlen) {
    const char *why = strlen(src->file) > INI_LINE_MAX - 16   ? src->file
                      : strlen(src->repo) > INI_LINE_MAX - 16 ? src->repo
                                                              : NULL;
    for (int i = 0; !why && i < src->n_files; i++)
        if (strlen(src->files[i].rel) > INI_LINE_MAX - 16 - 64 - PROTOCOL_HASH_LEN)
            why = src->files[i].rel;
    return why ? seterr(err, errlen, "%s: path too long to record in %s", why, PROTO_FILE) : 0;
}

/* s without its line that starts "\nKEY = ", in place. */
static void drop_line(char *s, const char *key) {
    char *at = strstr(s, key);
    if (!at) return;
    char *end = strchr(at + 1, '\n');
    if (!end) at[1] = '\0';
    else memmove(at + 1, end + 1, strlen(end + 1) + 1);
}

/* The value of the line "\nKEY = VALUE" of s into v[n] ("" when none). */
static void line_value(const char *s, const char *key, char *v, size_t n) {
    const char *at = strstr(s, key);
    v[0] = '\0';
    if (!at) return;
    at += strlen(key);
    snprintf(v, n, "%.*s", (int)strcspn(at, "\n"), at);
}

/* The protocol at path against text: 1 when it says what text says but
 * for the build that wrote it (and a training fingerprint it does not
 * record: a file from a build that pinned none), so a rerun keeps it and
 * the hash its runs recorded; 0 when it differs; -1 with a reason when it
 * pins another training fingerprint than text. */
static int same_protocol(const char *path, const char *text, char *err, size_t errlen) {
    size_t len;
    char *old = input_slurp(path, 1 << 20, &len, err, errlen), *now = strdup(text);
    int same = 0;
    char was[64], is[64];
    if (old && now) {
        line_value(old, "\ntraining = ", was, sizeof was);
        line_value(now, "\ntraining = ", is, sizeof is);
        if (was[0] && is[0] && strcmp(was, is))
            same = seterr(err, errlen,
                          "%s pins the training fingerprint %s, this build's is %s: it trains "
                          "otherwise, so it cannot add runs to this study (gatelab fingerprint; "
                          "give --out a new directory, a new study)",
                          path, was, is);
        drop_line(old, "\ngatelab = ");
        drop_line(now, "\ngatelab = ");
        if (!was[0]) drop_line(now, "\ntraining = ");
        if (same == 0) same = !strcmp(old, now);
    }
    free(old);
    free(now);
    return same;
}

int sweep_write_protocol(const Sweep *sw, const SweepSource *src, const char *out_dir,
                         const char *training, char *err, size_t errlen) {
    if (!sw->protocol) return 0;
    char path[SWEEP_PATH_MAX + 32], tmp[ATOMIC_TMP_MAX];
    snprintf(path, sizeof path, "%s/%s", out_dir, PROTO_FILE);
    if ((src && too_long(src, err, errlen)) || own_protocol(path, err, errlen)) return -1;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) return seterr(err, errlen, "out of memory");
    fprintf(m, "%s%s (gatelab sweep wrote this file; gatelab report reads it)\n[primary]\n%s",
            PIN_HEADER, sw->path, sw->protocol);
    if (src) write_pin(m, src, training);
    write_runs(m, sw);
    if (fclose(m) != 0 || !text) return free(text), seterr(err, errlen, "out of memory");
    int same = file_exists(path) ? same_protocol(path, text, err, errlen) : 0;
    if (same != 0) return free(text), same > 0 ? 0 : -1;
    FILE *f = atomic_fopen(path, tmp, sizeof tmp, err, errlen);
    if (f) fputs(text, f);
    free(text);
    return f ? atomic_fcommit(f, tmp, path, err, errlen) : -1;
}
