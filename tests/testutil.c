/* testutil.c: see testutil.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testutil.h"
#include "config_args.h"
#include "runfile_read.h"
#include "util.h"
#include "simd.h"
#include "config_args.h"

#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <ftw.h>
#include <sys/stat.h>
#include <string.h>
#include <sys/wait.h>
#include <signal.h>

const char *tu_src(void) {
    const char *s = getenv("GATELAB_SRC");
    return s && *s ? s : "..";
}

const char *tu_bin(void) {
    const char *s = getenv("GATELAB_BIN");
    return s && *s ? s : "./gatelab";
}

const char *tu_tmpdir(void) {
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/gatelab-test-XXXXXX");
    return mkdtemp(dir);
}

/* A link is removed, never chmod'ed: chmod would follow it to its target
 * (a test's links point into the committed fixtures). */
static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f) {
    (void)st, (void)f;
    if (flag != FTW_SL) chmod(p, 0700);
    return remove(p);
}

int tu_rmtree(const char *dir) { return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

char tu_tiny_dir[64], tu_tiny_run[1024];
char rf_err[512];

int tu_tiny_setup(void **st) {
    (void)st;
    char out[1100];
    snprintf(tu_tiny_dir, sizeof tu_tiny_dir, "%s", tu_tmpdir());
    snprintf(tu_tiny_run, sizeof tu_tiny_run, "%s/run.h5", tu_tiny_dir);
    snprintf(out, sizeof out, "%s/train.out", tu_tiny_dir);
    return tu_run(out, "train --config %s/experiments/tiny.ini --quiet --out %s", tu_src(),
                  tu_tiny_run)
               ? -1
               : 0;
}

int tu_tiny_teardown(void **st) {
    (void)st;
    return tu_rmtree(tu_tiny_dir);
}

void tu_hf_fixture(const char *dir, const char *fixture, const char *name) {
    char from[2048], to[2048];
    snprintf(from, sizeof from, "%s/tests/reference/hf/%s/%s", tu_src(), fixture, name);
    snprintf(to, sizeof to, "%s/%s", dir, name);
    tu_copy_file(from, to);
}

int tu_run(const char *outfile, const char *fmt, ...) {
    char args[4096], cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "cd '%s' && exec '%s' %s > '%s' 2>&1", tu_src(), tu_bin(), args,
             outfile);
    int st = system(cmd);
    if (st == -1) return -1;
    if (WIFEXITED(st)) {
        int code = WEXITSTATUS(st);
        return code; /* the shell reports a killed child as 128+signal */
    }
    return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

void tu_fault(const char *name, const char *value) {
    char var[64];
    snprintf(var, sizeof var, "GATELAB_TEST_%s", name);
    setenv(var, value, 1);
}

void tu_fault_clear(void) {
    unsetenv("GATELAB_TEST_NAN_AT");
    unsetenv("GATELAB_TEST_NAN_KIND");
    unsetenv("GATELAB_TEST_KILL_AT");
}

char *tu_slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) b[n] = 0;
    if (len) *len = b ? (size_t)n : 0;
    return b;
}

char *tu_join(const char *dir, const char *name) {
    static char buf[8][1100];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    return p;
}

char *tu_slurp_ok(const char *path, size_t *len) {
    char *b = tu_slurp(path, len);
    if (!b) fail_msg("cannot read %s", path);
    return b;
}

char *tu_md_section(const char *md, const char *head) {
    const char *a = strstr(md, head);
    if (!a) return NULL;
    const char *b = strstr(a + 1, "\n## ");
    return strndup(a, b ? (size_t)(b - a) : strlen(a));
}

void tu_write_file(const char *path, const void *buf, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) fail_msg("cannot write %s", path);
    assert_int_equal(fwrite(buf, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

void tu_write_text(const char *path, const char *text) { tu_write_file(path, text, strlen(text)); }

char tu_scratch[256];

int tu_scratch_setup(void **state) {
    (void)state;
    const char *d = tu_tmpdir();
    return d ? snprintf(tu_scratch, sizeof tu_scratch, "%s", d), 0 : -1;
}

int tu_scratch_setup_h5quiet(void **state) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    return tu_scratch_setup(state);
}

void tu_scratch_path(char *buf, size_t len, const char *name) {
    snprintf(buf, len, "%s/%s", tu_scratch, name);
}

int tu_scratch_teardown(void **state) {
    (void)state;
    return tu_rmtree(tu_scratch);
}

const char *tu_put(const char *name, const char *text) {
    char *p = tu_join(tu_scratch, name);
    tu_write_text(p, text);
    return p;
}

void tu_copy_file(const char *from, const char *to) {
    size_t n;
    char *b = tu_slurp_ok(from, &n);
    tu_write_file(to, b, n);
    free(b);
}

void tu_assert_one_line(const char *log, const char *n1, const char *n2) {
    size_t len;
    char *b = tu_slurp_ok(log, &len);
    if (len == 0 || b[len - 1] != '\n' || memchr(b, '\n', len - 1))
        fail_msg("expected one line, got: %s", b);
    if (n1 && !strstr(b, n1)) fail_msg("'%s' not in: %s", n1, b);
    if (n2 && !strstr(b, n2)) fail_msg("'%s' not in: %s", n2, b);
    free(b);
}

struct rlimit tu_limit_file_size(rlim_t bytes) {
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = bytes;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    return old;
}

void tu_assert_msg_line(const char *msg) {
    assert_true(strlen(msg) > 0);
    assert_null(strchr(msg, '\n'));
}

void tu_assert_png(const char *path) {
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char got[8] = {0};
    assert_int_equal(fread(got, 1, 8, f), 8);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    assert_memory_equal(got, sig, 8);
    assert_true(size > 1000);
}

long tu_count_needle(const char *path, const char *needle) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    long n = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, needle)) n++;
    fclose(f);
    return n;
}

int tu_count_lines(const char *path) {
    char *b = tu_slurp(path, NULL);
    if (!b) return -1;
    int n = 0;
    for (char *s = strtok(b, "\n"); s; s = strtok(NULL, "\n"))
        if (*s) n++;
    free(b);
    return n;
}

/* status "done" and the train series of one run file; -1 with why */
static int done_history(const char *path, RunTrain *t, char *why, size_t len) {
    RunReader *r = runread_open(path, why, len);
    if (!r) return -1;
    int rc = runread_train(r, t, why, len);
    if (rc == 0 && strcmp(runread_meta(r)->status, "done") != 0) {
        snprintf(why, len, "%s: status %s, want done", path, runread_meta(r)->status);
        runread_train_free(t);
        rc = -1;
    }
    runread_close(r);
    return rc;
}

static int same_history(const char *a, const char *b, size_t n, char *why, size_t whylen) {
    RunTrain ta, tb;
    if (done_history(a, &ta, why, whylen) != 0) return -1;
    if (done_history(b, &tb, why, whylen) != 0) {
        runread_train_free(&ta);
        return -1;
    }
    int rc = 0;
    if (ta.n != n || tb.n != n) {
        snprintf(why, whylen, "%zu and %zu rows, want %zu", ta.n, tb.n, n);
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (ta.step[i] != (long long)i || tb.step[i] != ta.step[i] ||
            memcmp(&ta.loss[i], &tb.loss[i], sizeof(double)) != 0 ||
            memcmp(&ta.grad_norm[i], &tb.grad_norm[i], sizeof(double)) != 0) {
            snprintf(why, whylen, "step %zu: loss %.17g vs %.17g", i, ta.loss[i], tb.loss[i]);
            rc = -1;
        }
    runread_train_free(&ta);
    runread_train_free(&tb);
    return rc;
}

void tu_assert_same_history(const char *a, const char *b, size_t n) {
    char why[512] = "";
    int rc = same_history(a, b, n, why, sizeof why);
    if (rc != 0) fail_msg("%s", why);
    assert_int_equal(rc, 0);
}

void *tu_h5_read(hid_t g, const char *path, hid_t mtype, size_t elem, size_t *n) {
    void *buf = tu_h5_read_opt(g, path, mtype, elem, n);
    if (!buf) fail_msg("fixture: no dataset %s", path);
    return buf;
}

void *tu_h5_read_opt(hid_t g, const char *path, hid_t mtype, size_t elem, size_t *n) {
    if (H5Lexists(g, path, H5P_DEFAULT) <= 0) return NULL;
    hid_t d = H5Dopen2(g, path, H5P_DEFAULT);
    if (d < 0) fail_msg("fixture: cannot open dataset %s", path);
    hid_t sp = H5Dget_space(d);
    hssize_t k = H5Sget_simple_extent_npoints(sp);
    if (k < 0) fail_msg("fixture: no extent for dataset %s", path);
    void *buf = calloc((size_t)k + 1, elem);
    assert_non_null(buf);
    assert_true(H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
    H5Sclose(sp);
    H5Dclose(d);
    *n = (size_t)k;
    return buf;
}

double tu_h5_attr(hid_t g, const char *name) {
    double v = NAN;
    hid_t a = H5Aopen(g, name, H5P_DEFAULT);
    if (a < 0) fail_msg("fixture: no attribute %s", name);
    assert_true(H5Aread(a, H5T_NATIVE_DOUBLE, &v) >= 0);
    H5Aclose(a);
    return v;
}

void tu_fx_model(hid_t g, const char *name, Model *m) {
    char err[512], pname[160];
    size_t n;
    char *text = tu_h5_read(g, "config", H5T_NATIVE_UCHAR, 1, &n);
    Config c;
    if (config_from_text(&c, text, name, err, sizeof err) != 0) fail_msg("%s: %s", name, err);
    free(text);
    if (model_init(m, &c, err, sizeof err) != 0) fail_msg("%s: %s", name, err);
    for (int i = 0; i < m->table.count; i++) {
        const ParamInfo *p = &m->table.info[i];
        snprintf(pname, sizeof pname, "params/%s", p->name);
        float *w = tu_h5_read(g, pname, H5T_NATIVE_FLOAT, sizeof(float), &n);
        if (n != p->numel) fail_msg("%s: %s has %zu values, want %zu", name, p->name, n, p->numel);
        memcpy(m->params + p->offset, w, n * sizeof(float));
        free(w);
    }
}

void tu_fx_compare(const char *what, const float *got, const float *want, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!(fabs((double)got[i] - want[i]) <= 1e-4 + 1e-3 * fabs(want[i])))
            fail_msg("%s [%zu]: C %.7g, PyTorch %.7g", what, i, got[i], want[i]);
}

/* H5Literate callback: the name of each link into the TuNames at data;
 * -1 (stop) when it does not fit. */
static herr_t tu_name_cb(hid_t g, const char *name, const H5L_info_t *info, void *data) {
    (void)g, (void)info;
    TuNames *l = data;
    if (l->n >= 32 || strlen(name) >= sizeof l->v[0]) return -1;
    snprintf(l->v[l->n++], sizeof l->v[0], "%s", name);
    return 0;
}

void tu_h5_names(hid_t g, TuNames *out) {
    out->n = 0;
    if (H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, tu_name_cb, out) < 0)
        fail_msg("fixture: cannot list a group (more than 32 names, or a long one)");
}

void tu_fx_cases(const char *rel, void (*fn)(hid_t f, const char *name)) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/reference/fixtures/%s", tu_src(), rel);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) fail_msg("cannot open %s", path);
    TuNames names;
    tu_h5_names(f, &names);
    if (names.n == 0) fail_msg("%s: no case", path);
    for (int i = 0; i < names.n; i++) fn(f, names.v[i]);
    H5Fclose(f);
}

void tu_tiny_model(Model *m, const char *variant) {
    char path[1024], set[64], err[512];
    char *sets[1] = {set};
    snprintf(path, sizeof path, "%s/experiments/tiny.ini", tu_src());
    snprintf(set, sizeof set, "variant=%s", variant);
    Config c;
    if (config_from_args(&c, path, sets, 1, err, sizeof err) != 0) fail_msg("%s", err);
    if (model_init(m, &c, err, sizeof err) != 0) fail_msg("%s", err);
}

void tu_fx_case_open(TuFxCase *c, hid_t f, const char *name) {
    size_t n;
    c->g = H5Gopen2(f, name, H5P_DEFAULT);
    if (c->g < 0) fail_msg("fixture: no case %s", name);
    tu_fx_model(c->g, name, &c->m);
    c->tok = tu_h5_read(c->g, "tokens", H5T_NATIVE_INT, sizeof(int), &n);
    c->T = c->m.cfg.seq_len;
    c->N = (int)(n / (size_t)c->T);
    if ((size_t)c->N * (size_t)c->T != n || c->N == 0)
        fail_msg("%s: %zu tokens are not whole sequences of %d", name, n, c->T);
    assert_int_equal(runstate_init(&c->s, &c->m, c->N, c->T), 0);
}

void tu_fx_case_close(TuFxCase *c) {
    free(c->tok);
    runstate_free(&c->s);
    model_free(&c->m);
    H5Gclose(c->g);
}

/* See testutil.h: the field of the row of file in the column called col of csv text (a
 * static copy; "" when blank); the test fails when there is none. */
const char *tu_csv_cell(const char *csv, const char *file, const char *col) {
    static char buf[64];
    int k = 0;
    const char *h = csv;
    size_t n = strlen(col);
    while (strncmp(h, col, n) || (h[n] != ',' && h[n] != '\n')) {
        h += strcspn(h, ",\n");
        if (*h != ',') fail_msg("results.csv has no column %s", col);
        h++, k++;
    }
    char key[128];
    snprintf(key, sizeof key, "\n%s,", file);
    const char *r = strstr(csv, key);
    if (!r) fail_msg("results.csv has no row %s", file);
    for (r++; k > 0; k--) r = strchr(r, ',') + 1;
    size_t len = strcspn(r, ",\n");
    snprintf(buf, sizeof buf, "%.*s", (int)len, r);
    return buf;
}

void tu_preset_path(char *buf, size_t len, const char *name) {
    /* meson sets GATELAB_SRC; by hand, try the usual working directories. */
    static const char *const roots[] = {"..", ".", "../.."};
    const char *src = getenv("GATELAB_SRC");
    snprintf(buf, len, "%s/experiments/%s.ini", src ? src : roots[0], name);
    for (int i = 1; !src && i < 3 && !file_exists(buf); i++)
        snprintf(buf, len, "%s/experiments/%s.ini", roots[i], name);
}

void tu_load_preset(Config *c, const char *name) {
    char path[1024], err[512];
    tu_preset_path(path, sizeof path, name);
    config_defaults(c);
    if (config_load_file(c, path, err, sizeof err)) {
        print_error("%s\n", err);
        fail();
    }
}

void tu_resolve_ok(Config *c, const char *what) {
    char err[512];
    config_resolve(c);
    if (config_validate(c, err, sizeof err)) {
        print_error("%s: %s\n", what, err);
        fail();
    }
}

int tu_simd_skip(void) {
    const char *want = getenv("GATELAB_SIMD");
    if (!want || !*want || strcmp(want, simd_path_name(simd_path())) == 0) return 0;
    printf("SKIP: this CPU has no %s path\n", want);
    return 77;
}
