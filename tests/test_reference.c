/* test_reference.c: the C model against the PyTorch reference.
 *
 * One cmocka test per fixture file in $GATELAB_SRC/tests/reference/fixtures
 * (written by tests/reference/make_fixtures.py from python/gatelab/ref.py). Each
 * loads the fixture's config text, overwrites every parameter with the
 * fixture's weights (the two name sets must match exactly, shapes too),
 * and compares logits, loss, every gradient, and the loss over 10 AdamW
 * steps on the same batch, each within atol + rtol * |ref|.
 *
 * Every mismatch is printed (tensor, worst index, got, want) before the
 * test fails, so one run shows the whole picture for a fixture.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adamw.h"
#include "config.h"
#include "model.h"

#define MAX_FIXTURES 256
#define MAX_REPORTS 24 /* mismatch lines printed per fixture */

typedef struct {
    char name[256];
    char path[1400]; /* dir (1024) + '/' + d_name (256) */
} Fixture;

/* ------------------------------------------------------------ HDF5 reads */

/* A dataset read whole, converted to the memory type. */
typedef struct {
    void *data;
    int ndim;
    hsize_t dims[4];
    size_t n;
} Blob;

static void blob_free(Blob *b) {
    free(b->data);
    b->data = NULL;
}

static int h5_exists(hid_t f, const char *path) {
    /* H5Lexists needs every intermediate group to exist */
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = strchr(buf, '/'); p; p = strchr(p + 1, '/')) {
        *p = '\0';
        if (H5Lexists(f, buf, H5P_DEFAULT) <= 0) return 0;
        *p = '/';
    }
    return H5Lexists(f, buf, H5P_DEFAULT) > 0;
}

/* Read dataset `path` as mtype (elem bytes each). -1 when missing/unreadable. */
static int h5_read(hid_t f, const char *path, hid_t mtype, size_t elem, Blob *out) {
    memset(out, 0, sizeof *out);
    if (!h5_exists(f, path)) return -1;
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    if (d < 0) return -1;
    hid_t sp = H5Dget_space(d);
    int rc = -1;
    int nd = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (nd >= 0 && nd <= 4) {
        H5Sget_simple_extent_dims(sp, out->dims, NULL);
        out->ndim = nd;
        out->n = 1;
        for (int i = 0; i < nd; i++) out->n *= (size_t)out->dims[i];
        out->data = malloc(out->n * elem + 1);
        if (out->data && H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, out->data) >= 0) rc = 0;
    }
    if (sp >= 0) H5Sclose(sp);
    H5Dclose(d);
    if (rc) blob_free(out);
    return rc;
}

/* Scalar string attribute (variable or fixed length) as a malloc'd copy. */
static char *h5_attr_str(hid_t f, const char *name) {
    if (H5Aexists(f, name) <= 0) return NULL;
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    if (a < 0) return NULL;
    hid_t t = H5Aget_type(a);
    char *out = NULL;
    if (t >= 0 && H5Tget_class(t) == H5T_STRING) {
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_cset(mt, H5Tget_cset(t)); /* h5py writes UTF-8; no conversion */
        if (H5Tis_variable_str(t) > 0) {
            char *s = NULL;
            H5Tset_size(mt, H5T_VARIABLE);
            if (H5Aread(a, mt, &s) >= 0 && s) {
                out = strdup(s);
                H5free_memory(s);
            }
        } else {
            size_t n = H5Tget_size(t);
            out = calloc(n + 1, 1);
            H5Tset_size(mt, n + 1);
            if (out && H5Aread(a, mt, out) < 0) {
                free(out);
                out = NULL;
            }
        }
        H5Tclose(mt);
    }
    if (t >= 0) H5Tclose(t);
    H5Aclose(a);
    return out;
}

/* Scalar numeric attribute, or def when it is absent. */
static double h5_attr_f64(hid_t f, const char *name, double def) {
    double v = def;
    if (H5Aexists(f, name) <= 0) return def;
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    if (a < 0) return def;
    if (H5Aread(a, H5T_NATIVE_DOUBLE, &v) < 0) v = def;
    H5Aclose(a);
    return v;
}

/* ------------------------------------------------------------ comparison */

typedef struct {
    const char *fixture;
    int failures;
    int reported;
} Report;

static void report(Report *r, const char *fmt, ...) {
    r->failures++;
    if (r->reported++ >= MAX_REPORTS) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    print_error("%s: %s\n", r->fixture, line);
}

static int close_enough(double got, double want, double atol, double rtol) {
    return isfinite(got) && fabs(got - want) <= atol + rtol * fabs(want);
}

/* Compare n floats; one report line naming the tensor, its worst entry
 * (by excess over the tolerance) and how many entries fail. */
static void compare(Report *r, const char *what, const float *got, const float *want, size_t n,
                    double atol, double rtol) {
    size_t bad = 0, worst = 0;
    double worst_excess = -INFINITY, max_abs = 0.0;
    for (size_t i = 0; i < n; i++) {
        double g = got[i], w = want[i], e = fabs(g - w);
        double excess = isfinite(g) ? e - (atol + rtol * fabs(w)) : INFINITY;
        if (isfinite(e) && e > max_abs) max_abs = e;
        if (excess > worst_excess) {
            worst_excess = excess;
            worst = i;
        }
        if (!close_enough(g, w, atol, rtol)) bad++;
    }
    if (bad)
        report(r,
               "%s: %zu of %zu entries off, max |err| %.3g; worst [%zu] "
               "got %.9g want %.9g (atol %g rtol %g)",
               what, bad, n, max_abs, worst, (double)got[worst], (double)want[worst], atol, rtol);
}

/* ------------------------------------------------------------ the test */

typedef struct {
    hid_t file;
    Config cfg;
    Model model;
    RunState rs;
    int have_model, have_rs;
    Blob tokens, targets;
    int B, T;
    double atol, rtol, latol, lrtol;
} Case;

static void case_free(Case *c) {
    if (c->have_rs) runstate_free(&c->rs);
    if (c->have_model) model_free(&c->model);
    blob_free(&c->tokens);
    blob_free(&c->targets);
    if (c->file >= 0) H5Fclose(c->file);
}

/* Open the file, load its config and build the model. */
static void case_open(Case *c, const Fixture *fx) {
    char err[512] = "";
    c->file = H5Fopen(fx->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (c->file < 0) fail_msg("%s: cannot open %s", fx->name, fx->path);
    char *text = h5_attr_str(c->file, "config");
    if (!text) fail_msg("%s: no string attribute 'config'", fx->name);
    config_defaults(&c->cfg);
    int rc = config_load_string(&c->cfg, text, fx->name, err, sizeof err);
    free(text);
    if (rc) fail_msg("%s: config_load_string: %s", fx->name, err);
    config_resolve(&c->cfg);
    if (config_validate(&c->cfg, err, sizeof err))
        fail_msg("%s: config_validate: %s", fx->name, err);
    if (model_init(&c->model, &c->cfg, err, sizeof err))
        fail_msg("%s: model_init: %s", fx->name, err);
    c->have_model = 1;

    if (h5_read(c->file, "tokens", H5T_NATIVE_INT, sizeof(int), &c->tokens) ||
        h5_read(c->file, "targets", H5T_NATIVE_INT, sizeof(int), &c->targets) ||
        c->tokens.ndim != 2 || c->targets.ndim != 2 || c->tokens.n != c->targets.n)
        fail_msg("%s: tokens/targets missing or not matching [B,T]", fx->name);
    c->B = (int)c->tokens.dims[0];
    c->T = (int)c->tokens.dims[1];
    c->atol = h5_attr_f64(c->file, "atol", 1e-4);
    c->rtol = h5_attr_f64(c->file, "rtol", 1e-3);
    c->latol = h5_attr_f64(c->file, "loss_atol", 1e-4);
    c->lrtol = h5_attr_f64(c->file, "loss_rtol", 1e-3);
}

typedef struct {
    const ParamTable *table;
    Report *r;
} IterCtx;

static herr_t extra_param_cb(hid_t g, const char *name, const H5L_info_t *info, void *vctx) {
    (void)g;
    (void)info;
    IterCtx *ctx = vctx;
    if (!param_find(ctx->table, name))
        report(ctx->r, "fixture tensor params/%s is not in the C parameter table", name);
    return 0;
}

/* Overwrite every parameter from params/; the name sets and shapes must match. */
static void load_params(Case *c, Report *r) {
    const ParamTable *t = &c->model.table;
    for (int k = 0; k < t->count; k++) {
        const ParamInfo *pi = &t->info[k];
        char path[PARAM_NAME + 16];
        snprintf(path, sizeof path, "params/%s", pi->name);
        Blob b;
        if (h5_read(c->file, path, H5T_NATIVE_FLOAT, sizeof(float), &b)) {
            report(r, "C parameter %s (numel %zu) is missing from the fixture", pi->name,
                   pi->numel);
            continue;
        }
        int same = b.ndim == pi->ndim && b.n == pi->numel;
        for (int i = 0; same && i < pi->ndim; i++) same = (int)b.dims[i] == pi->shape[i];
        if (!same)
            report(r, "parameter %s: fixture shape [%d: %llu %llu] vs C [%d: %d %d]", pi->name,
                   b.ndim, (unsigned long long)b.dims[0],
                   (unsigned long long)(b.ndim > 1 ? b.dims[1] : 0), pi->ndim, pi->shape[0],
                   pi->ndim > 1 ? pi->shape[1] : 0);
        else memcpy(c->model.params + pi->offset, b.data, pi->numel * sizeof(float));
        blob_free(&b);
    }
    IterCtx ctx = {t, r};
    hid_t g = H5Gopen2(c->file, "params", H5P_DEFAULT);
    if (g < 0) {
        report(r, "no params group");
        return;
    }
    H5Literate(g, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, extra_param_cb, &ctx);
    H5Gclose(g);
}

static void check_forward_backward(Case *c, Report *r) {
    const ParamTable *t = &c->model.table;
    memset(c->rs.grads, 0, t->total * sizeof(float));
    float loss = model_forward(&c->model, &c->rs, c->tokens.data, c->targets.data, c->B, c->T);
    Blob want;
    if (h5_read(c->file, "loss", H5T_NATIVE_DOUBLE, sizeof(double), &want) == 0) {
        double w = ((double *)want.data)[0];
        if (!close_enough(loss, w, c->latol, c->lrtol))
            report(r, "loss: got %.9g want %.9g", (double)loss, w);
        blob_free(&want);
    } else {
        report(r, "dataset loss missing");
    }
    if (h5_read(c->file, "logits", H5T_NATIVE_FLOAT, sizeof(float), &want) == 0) {
        size_t n = (size_t)c->B * c->T * c->model.dims.V;
        if (want.n != n) report(r, "logits: fixture has %zu values, C %zu", want.n, n);
        else compare(r, "logits", model_logits(&c->rs), want.data, n, c->atol, c->rtol);
        blob_free(&want);
    } else {
        report(r, "dataset logits missing");
    }

    model_backward(&c->model, &c->rs);
    for (int k = 0; k < t->count; k++) {
        const ParamInfo *pi = &t->info[k];
        char path[PARAM_NAME + 16];
        snprintf(path, sizeof path, "grads/%s", pi->name);
        if (h5_read(c->file, path, H5T_NATIVE_FLOAT, sizeof(float), &want)) {
            report(r, "gradient %s missing from the fixture", pi->name);
            continue;
        }
        if (want.n != pi->numel)
            report(r, "gradient %s: fixture numel %zu vs C %zu", pi->name, want.n, pi->numel);
        else compare(r, path, c->rs.grads + pi->offset, want.data, pi->numel, c->atol, c->rtol);
        blob_free(&want);
    }
}

/* Ten full steps from the fixture weights; the loss before each update
 * must follow losses10. */
static void check_steps(Case *c, Report *r) {
    Blob want;
    if (h5_read(c->file, "losses10", H5T_NATIVE_DOUBLE, sizeof(double), &want)) {
        report(r, "dataset losses10 missing");
        return;
    }
    const ParamTable *t = &c->model.table;
    float *m = calloc(t->total, sizeof(float));
    float *v = calloc(t->total, sizeof(float));
    assert_non_null(m);
    assert_non_null(v);
    const double *w = want.data;
    for (size_t s = 0; s < want.n; s++) {
        memset(c->rs.grads, 0, t->total * sizeof(float));
        float loss = model_forward(&c->model, &c->rs, c->tokens.data, c->targets.data, c->B, c->T);
        model_backward(&c->model, &c->rs);
        grad_clip(c->rs.grads, t->total, c->cfg.grad_clip);
        adamw_update(c->model.params, c->rs.grads, m, v, t, &c->cfg,
                     lr_at_step(&c->cfg, (long long)s), (long long)s);
        if (!close_enough(loss, w[s], c->latol, c->lrtol))
            report(r, "losses10[%zu]: got %.9g want %.9g", s, (double)loss, w[s]);
    }
    free(m);
    free(v);
    blob_free(&want);
}

static void run_fixture(void **state) {
    const Fixture *fx = *state;
    Case c;
    memset(&c, 0, sizeof c);
    c.file = -1;
    Report r = {fx->name, 0, 0};
    case_open(&c, fx);
    load_params(&c, &r);
    if (r.failures == 0) {
        if (runstate_init(&c.rs, &c.model, c.B, c.T))
            report(&r, "runstate_init(B=%d, T=%d) failed", c.B, c.T);
        else c.have_rs = 1;
    }
    if (r.failures == 0) check_forward_backward(&c, &r);
    if (c.have_rs) check_steps(&c, &r);
    int failures = r.failures;
    case_free(&c);
    if (failures) fail_msg("%s: %d mismatch(es) against PyTorch", fx->name, failures);
}

/* ------------------------------------------------------------ discovery */

static int by_name(const void *a, const void *b) {
    return strcmp(((const Fixture *)a)->name, ((const Fixture *)b)->name);
}

static int list_fixtures(Fixture *out, int cap, char *dir, size_t dirlen) {
    const char *src = getenv("GATELAB_SRC");
    snprintf(dir, dirlen, "%s/tests/reference/fixtures", src ? src : ".");
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < cap) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".h5") != 0) continue;
        snprintf(out[n].name, sizeof out[n].name, "%.*s", (int)(len - 3), e->d_name);
        snprintf(out[n].path, sizeof out[n].path, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    qsort(out, (size_t)n, sizeof *out, by_name);
    return n;
}

/* grad_clip = 0 is no clipping: a gradient of norm 5 stays as it is, where
 * clip = 1 scales it to norm 1 (the same call, so the test can fail). */
static void test_clip_off(void **state) {
    (void)state;
    float g[2] = {3.0f, 4.0f};
    assert_true(grad_clip(g, 2, 0.0f) == 5.0);
    assert_true(g[0] == 3.0f && g[1] == 4.0f);
    assert_true(grad_clip(g, 2, 1.0f) == 5.0);
    assert_true(fabs(grad_global_norm(g, 2) - 1.0) < 1e-6);
}

/* One AdamW step on one decayed weight, by hand (docs/MODEL.md): with a
 * zero gradient the moments stay 0 and only the decay acts, p = 2 becomes
 * 2 - 2 * factor with factor lr_t * wd (wd_scale = lr) or wd * lr_t / lr
 * (wd_scale = fixed); at lr_t = lr / 4 they differ. */
static void test_wd_scale_step(void **state) {
    (void)state;
    Config c;
    config_defaults(&c);
    c.lr = 0.2f;
    c.weight_decay = 0.5f;
    ParamInfo pi = {.numel = 1, .ndim = 1, .shape = {1, 0}, .decay = 1};
    ParamTable t = {&pi, 1, 1};
    const float lr_t = 0.05f;
    for (int mode = 0; mode < 2; mode++) {
        c.wd_scale = mode ? WD_SCALE_FIXED : WD_SCALE_LR;
        float p = 2.0f, g = 0.0f, m = 0.0f, v = 0.0f;
        adamw_update(&p, &g, &m, &v, &t, &c, lr_t, 0);
        float factor = mode ? 0.5f * (lr_t / 0.2f) : lr_t * 0.5f;
        assert_true(decay_factor(&c, lr_t) == factor);
        assert_true(p == 2.0f - factor * 2.0f);
        assert_true(fabsf(p - (mode ? 1.75f : 1.95f)) < 1e-6f);
    }
}

int main(void) {
    static Fixture fx[MAX_FIXTURES];
    static struct CMUnitTest tests[MAX_FIXTURES + 2];
    char dir[1024];
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* missing objects are reported by name */
    int n = list_fixtures(fx, MAX_FIXTURES, dir, sizeof dir);
    if (n <= 0) {
        fprintf(stderr,
                "test_reference: no fixtures in %s (set GATELAB_SRC; "
                "regenerate with tests/reference/make_fixtures.py)\n",
                dir);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        tests[i].name = fx[i].name;
        tests[i].test_func = run_fixture;
        tests[i].setup_func = NULL;
        tests[i].teardown_func = NULL;
        tests[i].initial_state = &fx[i];
    }
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_clip_off);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_wd_scale_step);
    return _cmocka_run_group_tests("reference", tests, (size_t)n, NULL, NULL);
}
