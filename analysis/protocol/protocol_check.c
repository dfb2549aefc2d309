/* protocol_check.c: see protocol_check.h. */
#include "protocol_check.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gitrun.h"
#include "inifile.h"
#include "protocol_pin.h"
#include "seedlist.h"
#include "util.h"

#define BLOB_MAX (1 << 20)
#define NAME_MAX_LIST 8 /* runs named before "and N more" */

/* The bytes of COMMIT:REL in repo (malloc'd, *len), or NULL. */
static char *git_blob(const char *repo, const PinFile *pf, size_t *len) {
    char spec[PIN_PATH_MAX + 72];
    snprintf(spec, sizeof spec, "%s:%s", pf->commit, pf->rel);
    char *blob = malloc(BLOB_MAX + 1);
    const char *args[] = {"cat-file", "blob", spec, NULL};
    if (blob && git_run(repo, args, blob, BLOB_MAX + 1, len) == 0) return blob;
    free(blob);
    return NULL;
}

/* The pinned files against git: 1 when every one matches its commit (and
 * the sweep file's [primary] is p's), else 0 with a bullet naming the
 * first that does not. */
static int files_in_git(FILE *f, const ProtocolPin *p) {
    const char *no_git = !p->repo[0]             ? "no repository was pinned"
                         : access(p->repo, F_OK) ? "the pinned repository is not here"
                                                 : NULL;
    if (!p->repo[0] && p->unchecked[0]) {
        if (f)
            fprintf(f,
                    "- **the protocol could not be checked against a commit**: %s (a release "
                    "archive, a copy without `.git`, or no git installed); the run files record "
                    "it too.\n",
                    p->unchecked);
        return 0;
    }
    if (no_git || !p->n_files) {
        if (f)
            fprintf(f, "- **not checked against git**: %s (`%s`).\n",
                    no_git ? no_git : "no file was pinned", p->repo);
        return 0;
    }
    for (int i = 0; i < p->n_files; i++) {
        const PinFile *pf = &p->files[i];
        size_t len;
        char *blob = git_blob(p->repo, pf, &len), hash[PROTOCOL_HASH_LEN] = "";
        if (blob) protocol_hash_text(blob, len, hash);
        int same = blob && !strcmp(hash, pf->hash);
        char err[256];
        char *primary = same && i == 0 ? pin_primary(pf->rel, blob, err, sizeof err) : NULL;
        int primary_ok = i > 0 || (primary && !strcmp(primary, p->primary));
        free(primary);
        free(blob);
        if (!same || !primary_ok) {
            if (f && !same)
                fprintf(f,
                        "- **`%s` is not as pinned**: its hash %s is not that of `%s` at %s in "
                        "`%s` (%s).\n",
                        pf->rel, pf->hash, pf->rel, pf->commit, p->repo,
                        hash[0] ? hash : "not found in git");
            if (f && same)
                fprintf(f,
                        "- **the protocol's families are not the sweep file's**: `%s` at %s "
                        "declares other lines than this protocol file.\n",
                        pf->rel, pf->commit);
            return 0;
        }
    }
    if (f)
        fprintf(f,
                "- The sweep file `%s` and the %d other file%s it reads (includes, presets) "
                "match their commits in `%s` (git cat-file), and the protocol's families "
                "([primary], [secondary]) are the "
                "committed sweep file's.\n",
                p->files[0].rel, p->n_files - 1, p->n_files == 2 ? "" : "s", p->repo);
    return 1;
}

/* One committed sweep file's runs: its [run NAME] sections and its
 * [sweep] seeds (seed 1 when it names none), as the sweep expands them. */
typedef struct {
    char (*names)[96];
    int n_names;
    unsigned long long seeds[256];
    int n_seeds, bad;
} FileRuns;

static int runs_section(void *user, const IniLine *l, char *why, size_t whylen) {
    (void)why, (void)whylen;
    FileRuns *r = user;
    const char *s = l->section;
    if (strncmp(s, "run", 3) || !isspace((unsigned char)s[3])) return 0;
    for (s += 3; isspace((unsigned char)*s); s++) {}
    void *n = realloc(r->names, (size_t)(r->n_names + 1) * sizeof *r->names);
    if (!n) return -1;
    r->names = n;
    str_copy(r->names[r->n_names++], sizeof r->names[0], s);
    return 0;
}

static int runs_key(void *user, const IniLine *l, char *why, size_t whylen) {
    FileRuns *r = user;
    if (strcmp(l->section, "sweep") || strcmp(l->key, "seeds")) return 0;
    r->bad |= seed_list_parse(l->value, r->seeds, 256, &r->n_seeds, why, whylen) != 0;
    return 0;
}

/* 1 when list[n] holds run name with seed. */
static int listed(const PinRun *list, int n, const char *name, unsigned long long seed) {
    for (int i = 0; i < n; i++)
        if (list[i].seed == seed && !strcmp(list[i].name, name)) return 1;
    return 0;
}

/* Appends the runs of pinned file pf (at its commit) to *all (*n);
 * -1 when it cannot be read at its commit. */
static int committed_runs(const ProtocolPin *p, const PinFile *pf, PinRun **all, int *n) {
    size_t len;
    char *blob = git_blob(p->repo, pf, &len), err[256];
    FileRuns r = {0};
    IniHandlers h = {runs_key, runs_section, &r};
    int rc = blob && ini_read(pf->rel, blob, &h, err, sizeof err) == 0 && !r.bad ? 0 : -1;
    if (!r.n_seeds) r.seeds[r.n_seeds++] = 1;
    for (int i = 0; !rc && i < r.n_names; i++)
        for (int s = 0; !rc && s < r.n_seeds; s++) {
            PinRun *m = realloc(*all, (size_t)(*n + 1) * sizeof *m);
            if (!m) {
                rc = -1;
                break;
            }
            *all = m;
            str_copy(m[*n].name, sizeof m[*n].name, r.names[i]);
            m[(*n)++].seed = r.seeds[s];
        }
    free(r.names);
    free(blob);
    return rc;
}

/* The protocol's run list against the committed sweep files' runs: 1 when
 * they are the same set, else 0 with a bullet naming a difference. */
static int runs_as_committed(FILE *f, const ProtocolPin *p) {
    PinRun *all = NULL;
    int n = 0, rc = 0;
    for (int i = 0; rc == 0 && i < p->n_files; i++) rc = committed_runs(p, &p->files[i], &all, &n);
    char why[300] = "";
    if (rc) snprintf(why, sizeof why, "the pinned files cannot be read at their commits");
    for (int i = 0; !why[0] && i < n; i++)
        if (!listed(p->runs, p->n_runs, all[i].name, all[i].seed))
            snprintf(why, sizeof why, "`%s_s%llu` is committed but not in the list", all[i].name,
                     all[i].seed);
    for (int i = 0; !why[0] && i < p->n_runs; i++)
        if (!listed(all, n, p->runs[i].name, p->runs[i].seed))
            snprintf(why, sizeof why, "`%s_s%llu` is in the list but not committed",
                     p->runs[i].name, p->runs[i].seed);
    if (f && why[0])
        fprintf(f, "- **the protocol's run list is not the committed sweep files'**: %s.\n", why);
    free(all);
    return !why[0];
}

/* The index of field `seed` in a CSV header line, or -1. */
static int seed_column(const char *line) {
    for (int k = 0; *line && *line != '\n'; k++) {
        size_t n = strcspn(line, ",\n");
        if (n == 4 && !strncmp(line, "seed", 4)) return k;
        line += n + (line[n] == ',');
    }
    return -1;
}

/* Field k of the CSV line at s (quoted fields may hold commas) as a
 * number into *v; 0, or -1 when it is missing or not a number. */
static int csv_number(const char *s, int k, unsigned long long *v) {
    for (int i = 0; i < k; i++) {
        for (int q = 0; *s && *s != '\n' && (q || *s != ','); s++) q ^= *s == '"';
        if (*s != ',') return -1;
        s++;
    }
    char *end;
    *v = strtoull(s, &end, 10);
    return end > s && (*end == ',' || *end == '\n' || !*end) ? 0 : -1;
}

/* The first declared seed of p among the rows of the CSV text, or -1. */
static long long declared_seed_in(const ProtocolPin *p, const char *text) {
    int col = seed_column(text);
    for (const char *s = strchr(text, '\n'); col >= 0 && s && s[1]; s = strchr(s + 1, '\n')) {
        unsigned long long v;
        if (csv_number(s + 1, col, &v)) continue;
        for (int i = 0; i < p->n_runs; i++)
            if (p->runs[i].seed == v) return (long long)v;
    }
    return -1;
}

/* Every results.csv in the tree of the sweep file's pinned commit: 1 when
 * none holds a declared seed (no study committed before the protocol ran
 * its seeds), else 0 with a bullet naming the first. */
static int seeds_fresh(FILE *f, const ProtocolPin *p) {
    const PinFile *sf = &p->files[0];
    char *list = malloc(BLOB_MAX + 1), *blob = malloc(BLOB_MAX + 1);
    const char *ls[] = {"ls-tree", "-r", "-z", "--name-only", sf->commit, NULL};
    size_t got = 0, len;
    int ok = list && blob && git_run(p->repo, ls, list, BLOB_MAX + 1, &got) == 0, files = 0;
    long long hit = -1;
    const char *where = NULL;
    for (size_t at = 0; ok && hit < 0 && at < got; at += strlen(list + at) + 1) {
        const char *name = list + at, *base = strrchr(name, '/');
        if (strcmp(base ? base + 1 : name, "results.csv")) continue;
        char spec[PIN_PATH_MAX + 72];
        snprintf(spec, sizeof spec, "%s:%s", sf->commit, name);
        const char *show[] = {"cat-file", "blob", spec, NULL};
        if (git_run(p->repo, show, blob, BLOB_MAX + 1, &len) != 0) {
            ok = 0; /* unread (too large, or git failed): never a silent all-clear */
            where = name;
            break;
        }
        files++;
        if ((hit = declared_seed_in(p, blob)) >= 0) where = name;
    }
    if (f && !ok && !where)
        fputs("- **seeds not checked**: the pinned commit's tree cannot be listed.\n", f);
    if (f && !ok && where)
        fprintf(f,
                "- **seeds not checked**: `%s` at %.12s cannot be read (over %d bytes, or git "
                "failed).\n",
                where, sf->commit, BLOB_MAX);
    if (f && ok && hit >= 0)
        fprintf(f,
                "- **a declared seed was run before the protocol's commit**: `%s` at %.12s holds "
                "seed %lld (a preview of this study).\n",
                where, sf->commit, hit);
    if (f && ok && hit < 0)
        fprintf(f, "- No results.csv in the tree at %.12s (%d found) holds a declared seed.\n",
                sf->commit, files);
    free(list);
    free(blob);
    return ok && hit < 0;
}

/* The row of NAME_sSEED.h5 among rows[n], or NULL. */
static const Row *run_row(const Row *rows, int n, const PinRun *r) {
    char want[160];
    snprintf(want, sizeof want, "%s_s%llu.h5", r->name, r->seed);
    for (int i = 0; i < n; i++)
        if (!strcmp(rows[i].file, want)) return &rows[i];
    return NULL;
}

/* How many of p's declared runs have no row in rows[n]. */
static int count_missing(const ProtocolPin *p, const Row *rows, int n) {
    int missing = 0;
    for (int i = 0; i < p->n_runs; i++) missing += !run_row(rows, n, &p->runs[i]);
    return missing;
}

/* The declared runs against the run files (and the rows joined from
 * results.csv, report_join.c): 1 when none is missing. */
static int runs_present(FILE *f, const ProtocolPin *p, const Row *rows, int n) {
    if (!p->has_runs) {
        if (f) fputs("- **no run list**: the protocol declares no runs to look for.\n", f);
        return 0;
    }
    int missing = count_missing(p, rows, n), joined = 0;
    for (int i = 0; i < p->n_runs; i++) {
        const Row *w = run_row(rows, n, &p->runs[i]);
        joined += w && w->from_csv;
    }
    if (!f) return missing == 0;
    /* results.csv alone (report.c) reads as its run files did */
    if (!missing && (!joined || joined == p->n_runs)) {
        fprintf(f, "- All %d declared runs (names × seeds) have their run files here.\n",
                p->n_runs);
        return 1;
    }
    if (!missing) {
        fprintf(f,
                "- All %d declared runs (names × seeds) are here: %d run files, and %d rows of "
                "results.csv from the study's earlier pieces.\n",
                p->n_runs, p->n_runs - joined, joined);
        return 1;
    }
    fprintf(f, "- **%d of %d declared runs are missing**: ", missing, p->n_runs);
    for (int i = 0, k = 0; i < p->n_runs; i++) {
        if (run_row(rows, n, &p->runs[i])) continue;
        if (k < NAME_MAX_LIST)
            fprintf(f, "%s`%s_s%llu.h5`", k ? ", " : "", p->runs[i].name, p->runs[i].seed);
        k++;
    }
    if (missing > NAME_MAX_LIST) fprintf(f, " and %d more", missing - NAME_MAX_LIST);
    fputs(".\n", f);
    return 0;
}

int protocol_runs_missing(const char *path, const Row *rows, int n) {
    ProtocolPin p;
    char err[512];
    if (pin_read(path, NULL, &p, err, sizeof err) != 0) return -1;
    int missing = p.has_runs ? count_missing(&p, rows, n) : -1;
    pin_free(&p);
    return missing;
}

/* The pinned rules against this build's. */
static int same_rules(FILE *f, const ProtocolPin *p) {
    char mine[160];
    pin_rules(mine, sizeof mine);
    int same = !strcmp(mine, p->rules);
    if (f && same) fprintf(f, "- The protocol pins the rules this build applies (%s).\n", mine);
    if (f && !same)
        fprintf(f,
                "- **the rules differ**: the protocol pins \"%s\", this build applies \"%s\": "
                "these verdicts are not the declared analysis.\n",
                p->rules[0] ? p->rules : "none", mine);
    return same;
}

int protocol_status(FILE *f, const char *path, const Row *rows, int n) {
    ProtocolPin p;
    char err[512];
    if (pin_read(path, NULL, &p, err, sizeof err) != 0) {
        if (f) fprintf(f, "- **the protocol's pins cannot be read**: %s.\n", err);
        return 0;
    }
    int ok = 1;
    if (p.uncommitted != 0 && f)
        fprintf(f,
                "- **run with --uncommitted**%s: the sweep's files were not held to a commit "
                "(`%s`: %s).\n",
                p.uncommitted < 0 ? " (not recorded)" : "", p.sweep_file,
                p.sweep_dirty == 0                   ? "clean"
                : !strcmp(p.sweep_commit, "unknown") ? "no commit known"
                                                     : "not clean");
    ok &= p.uncommitted == 0;
    if (!p.has_pin && f)
        fputs("- **nothing pinned**: the protocol records no files, build or rules (written by "
              "an earlier build).\n",
              f);
    ok &= p.has_pin;
    int in_git = p.has_pin && files_in_git(f, &p);
    ok &= in_git;
    if (in_git) ok &= runs_as_committed(f, &p);
    if (in_git) ok &= seeds_fresh(f, &p);
    if (p.has_pin) ok &= same_rules(f, &p);
    ok &= runs_present(f, &p, rows, n);
    if (f) {
        fputs("- Not checkable from these files: whether a declared seed was run at this setting "
              "before the commit and not committed (training is deterministic, so such a run, in "
              "any directory, previews the result); tests/check_seeds.sh holds the committed "
              "claims studies' seeds fresh.\n",
              f);
        fprintf(f, "- This report: gatelab %s; the protocol: gatelab %s", pin_build(),
                p.gatelab[0] ? p.gatelab : "not recorded");
        if (p.training[0])
            fprintf(f,
                    ", training fingerprint %s (`gatelab fingerprint`: a build whose "
                    "fingerprint differs cannot add runs to this study)",
                    p.training);
        fputs(".\n", f);
    }
    pin_free(&p);
    return ok;
}
