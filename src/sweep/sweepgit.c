/* sweepgit.c: where a confirmatory sweep's files stand in git (sweep.h,
 * sweep_source). git runs as an external program (gitrun.h: fixed argv,
 * no shell, no GIT_* variables); its absence, or a file outside a
 * repository, is an answer (not clean), not an error. */
#include "sweep.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gitrun.h"
#include "util.h"

#define BLOB_MAX (1 << 20) /* a sweep file or preset is a few kB */

/* The first reason the sweep is not clean wins. */
static void not_clean(SweepSource *s, const char *fmt, const char *a, const char *b) {
    if (s->dirty == 1) return;
    s->dirty = 1;
    snprintf(s->why, sizeof s->why, fmt, a, b);
}

/* The repository's top for the directory path is in (as given, so that
 * a link is judged from where it lies) into s->repo, a real path; -1
 * (s->why says why) when there is none. */
static int find_repo(SweepSource *s, const char *path) {
    char dir[SWEEP_PATH_MAX], top[SWEEP_PATH_MAX];
    str_copy(dir, sizeof dir, path);
    char *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = '\0';
    else str_copy(dir, sizeof dir, ".");
    const char *args[] = {"rev-parse", "--show-toplevel", NULL};
    int rc = git_line(dir, args, top, sizeof top);
    char real[PATH_MAX];
    if (rc != 0 || !top[0] || !realpath(top, real)) {
        snprintf(s->why, sizeof s->why, "%s",
                 rc == -1 ? "git cannot be run" : "the sweep file is not in a git repository");
        return -1;
    }
    str_copy(s->repo, sizeof s->repo, real);
    return 0;
}

/* File f (real path) against its last commit in s->repo: p's commit and
 * rel; not_clean() when it leaves the repository, was never committed or
 * differs from that commit. */
static void pin_in_git(SweepSource *s, const char *f, SweepPinned *p, char *blob) {
    size_t nt = strlen(s->repo);
    if (strncmp(f, s->repo, nt) || f[nt] != '/')
        return not_clean(s, "%s leaves the repository %s", f, s->repo);
    str_copy(p->rel, sizeof p->rel, f + nt + 1);
    const char *log[] = {"--literal-pathspecs", "log", "-1",   "--no-show-signature",
                         "--format=%H",         "--",  p->rel, NULL};
    char commit[64];
    if (git_line(s->repo, log, commit, sizeof commit) != 0)
        return not_clean(s, "git log failed on %s%s", p->rel, "");
    if (!commit[0]) return not_clean(s, "%s was never committed%s", p->rel, "");
    str_copy(p->commit, sizeof p->commit, commit);
    char spec[SWEEP_PATH_MAX + 72], hash[PROTOCOL_HASH_LEN];
    snprintf(spec, sizeof spec, "%s:%s", commit, p->rel);
    const char *show[] = {"cat-file", "blob", spec, NULL};
    size_t got;
    if (git_run(s->repo, show, blob, BLOB_MAX + 1, &got) != 0)
        return not_clean(s, "git cat-file failed on %s%s", spec, "");
    protocol_hash_text(blob, got, hash);
    if (strcmp(hash, p->hash)) not_clean(s, "%s differs from its last commit%s", p->rel, "");
}

void sweep_source(const Sweep *sw, SweepSource *s) {
    memset(s, 0, sizeof *s);
    str_copy(s->file, sizeof s->file, sw->path);
    str_copy(s->commit, sizeof s->commit, "unknown");
    s->dirty = -1;
    s->files = calloc((size_t)sw->n_files, sizeof *s->files);
    char *blob = malloc(BLOB_MAX + 1);
    if (!s->files || !blob || !sw->n_files) {
        str_copy(s->why, sizeof s->why, "out of memory");
        free(blob);
        return;
    }
    s->n_files = sw->n_files;
    int in_git = find_repo(s, sw->path) == 0;
    if (in_git) s->dirty = 0;
    for (int i = 0; i < sw->n_files; i++) {
        SweepPinned *p = &s->files[i];
        str_copy(p->commit, sizeof p->commit, "none");
        str_copy(p->rel, sizeof p->rel, sw->files[i]);
        char err[SWEEP_PATH_MAX + 64];
        size_t len;
        char *text = input_slurp(sw->files[i], BLOB_MAX, &len, err, sizeof err);
        str_copy(p->hash, sizeof p->hash, "none");
        if (text) protocol_hash_text(text, len, p->hash);
        free(text);
        if (!text) not_clean(s, "%s%s", err, "");
        else if (in_git) pin_in_git(s, sw->files[i], p, blob);
    }
    if (in_git) str_copy(s->commit, sizeof s->commit, s->files[0].commit);
    free(blob);
}

void sweep_source_free(SweepSource *s) {
    free(s->files);
    s->files = NULL;
    s->n_files = 0;
}

int sweep_source_check(const SweepSource *s, int uncommitted, char *err, size_t errlen) {
    if (s->dirty == 0 || uncommitted) return 0;
    return seterr(err, errlen,
                  "%s: a confirmatory sweep ([primary]) must run from committed files (the "
                  "sweep file, its includes and presets), but %s (commit it, or pass "
                  "--uncommitted, which the run files and the report state)",
                  s->file, s->why);
}
