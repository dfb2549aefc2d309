/* hf_inspect_fixture.c: the comparison against PyTorch, a committed
 * fixture's forward held to it, and the token-id file of the
 * pretrained-checkpoint tests (hf_inspect_fixture.h). Test-only. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h> /* symlink */

#include <jansson.h>

#include "hf_inspect_fixture.h"
#include "hf_model.h"
#include "testutil.h"

/* Contracts in hf_inspect_fixture.h. */
double hf_compare(const char *fix, const char *what, const float *got, const float *want,
                  size_t n) {
    double worst = 0.0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(got[i]) && isnan(want[i])) continue; /* a head the layer lacks */
        double e = fabs((double)got[i] - want[i]) / (1.0 + fabs((double)want[i]));
        if (!(e <= worst)) worst = e, at = i;
    }
    if (!(worst <= HF_TOL))
        fail_msg("%s: %s[%zu] = %.7g, PyTorch %.7g (error %.3g > %g)", fix, what, at, got[at],
                 want[at], worst, HF_TOL);
    return worst;
}

void hf_write_tokens(const char *path, const int32_t *ids, int n, int lines) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int l = 0; l < lines; l++)
        for (int i = 0; i < n; i++) fprintf(f, "%d%c", ids[i], i + 1 < n ? ' ' : '\n');
    fclose(f);
}

typedef struct {
    int L, T, H, C, d;
    float *att;   /* [L, H, T, T] */
    float *col;   /* [L, H, T] */
    float *gates; /* [L, T, C] */
    float *hid;   /* [L, T, d] */
    float *slot;  /* [L, H, T]: the sink logit's share (gpt-oss) */
} Got;

/* n rows of k floats from src into dst's rows of w floats (w >= k), the
 * rest of each row NaN: a layer's heads (or gate channels) laid out at
 * the model's count, the heads it lacks NaN as the reference stores them. */
static void pad_rows(float *dst, const float *src, size_t n, size_t k, size_t w) {
    for (size_t r = 0; r < n; r++) {
        memcpy(dst + r * w, src + r * k, k * sizeof(float));
        for (size_t i = k; i < w; i++) dst[r * w + i] = NAN;
    }
}

static void collect(void *ctx, const ProbeLayer *o) {
    Got *g = ctx;
    size_t TT = (size_t)o->T * o->T, l = (size_t)o->layer;
    assert_int_equal(o->M, o->T);
    pad_rows(g->att + l * g->H * TT, o->maps, 1, o->H * TT, g->H * TT);
    pad_rows(g->col + l * g->H * o->T, o->first_col, 1, (size_t)o->H * o->T, (size_t)g->H * o->T);
    if (o->C)
        pad_rows(g->gates + l * o->T * g->C, o->gates, (size_t)o->T, (size_t)o->C, (size_t)g->C);
    memcpy(g->hid + l * o->T * o->d, o->hidden, (size_t)o->T * o->d * sizeof(float));
    if (o->slot)
        pad_rows(g->slot + l * g->H * o->T, o->slot, 1, (size_t)o->H * o->T, (size_t)g->H * o->T);
}

/* Contracts in hf_inspect_fixture.h. */
void hf_check_fixture(const char *name) {
    char dir[2048], path[2100], err[512] = "";
    snprintf(dir, sizeof dir, "%s/tests/reference/hf/%s", tu_src(), name);
    snprintf(path, sizeof path, "%s/expected.h5", dir);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) fail_msg("cannot open %s", path);
    size_t nt, nl, na, nh, ng = 0, ns = 0;
    int32_t *tok = tu_h5_read_opt(f, "tokens", H5T_NATIVE_INT32, 4, &nt);
    float *logits = tu_h5_read_opt(f, "logits", H5T_NATIVE_FLOAT, 4, &nl);
    float *att = tu_h5_read_opt(f, "attention", H5T_NATIVE_FLOAT, 4, &na);
    float *hid = tu_h5_read_opt(f, "hidden", H5T_NATIVE_FLOAT, 4, &nh);
    float *gates = tu_h5_read_opt(f, "gates", H5T_NATIVE_FLOAT, 4, &ng);
    float *slot = tu_h5_read_opt(f, "slot", H5T_NATIVE_FLOAT, 4, &ns);
    H5Fclose(f);

    HfModel *m = NULL;
    if (hf_model_open(&m, dir, 2, err, sizeof err) < 0) fail_msg("%s: %s", name, err);
    const HfArch *a = hf_model_arch(m);
    int T = (int)nt;
    Got g = {a->L, T, a->H, hf_model_gate_channels(m), a->d, NULL, NULL, NULL, NULL, NULL};
    assert_int_equal(na, (size_t)a->L * a->H * T * T);
    assert_int_equal(nl, (size_t)T * a->V);
    assert_int_equal(ng, (size_t)a->L * T * g.C);
    g.att = calloc(na, 4), g.col = calloc((size_t)a->L * a->H * T, 4);
    g.gates = calloc(ng + 1, 4), g.hid = calloc(nh, 4), g.slot = calloc(ns + 1, 4);
    assert_int_equal(ns, a->sinks ? (size_t)a->L * a->H * T : 0);
    float *lg = calloc(nl, 4);
    if (hf_model_forward(m, tok, T, &(HfRun){.M = T, .fn = collect, .ctx = &g, .logits = lg}, err,
                         sizeof err) < 0)
        fail_msg("%s: %s", name, err);
    double e[5];
    e[0] = hf_compare(name, "logits", lg, logits, nl);
    e[1] = hf_compare(name, "attention", g.att, att, na);
    e[2] = hf_compare(name, "hidden", g.hid, hid, nh);
    e[3] = ng ? hf_compare(name, "gates", g.gates, gates, ng) : 0.0;
    /* first_col is column 0 of the reference maps */
    float *col0 = calloc((size_t)a->L * a->H * T, 4);
    for (size_t i = 0; i < (size_t)a->L * a->H * T; i++) col0[i] = att[i * T];
    e[4] = hf_compare(name, "first_col", g.col, col0, (size_t)a->L * a->H * T);
    if (ns) hf_compare(name, "slot", g.slot, slot, ns);
    printf("%-30s %-5s logits %.2e attention %.2e hidden %.2e gates %.2e\n", name,
           hf_model_dtype(m), e[0], e[1], e[2], e[3]);
    hf_model_close(m);
    free(col0), free(lg), free(g.att), free(g.col), free(g.gates), free(g.hid), free(g.slot);
    free(tok), free(logits), free(att), free(hid), free(gates), free(slot);
}

int hf_parse_tiny(HfArch *a, const char *arch, const char *extra, char *err, size_t errlen) {
    char json[1024];
    snprintf(json, sizeof json,
             "{\"architectures\": [\"%s\"], \"hidden_size\": 32, \"num_hidden_layers\": 3,"
             " \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"intermediate_size\": 64,"
             " \"vocab_size\": 128, \"rope_theta\": 10000.0%s}",
             arch, extra);
    return hf_config_parse(a, json, strlen(json), "config.json", err, errlen);
}

static void refused_under(const char *fix, const char *cfg, const char *want) {
    char dir[64], log[1024], ids[1024], run[1024];
    snprintf(dir, sizeof dir, "%s", tu_tmpdir());
    snprintf(log, sizeof log, "%s/log", dir);
    snprintf(ids, sizeof ids, "%s/ids.txt", dir);
    snprintf(run, sizeof run, "%s/run.h5", dir);
    tu_write_text(tu_join(dir, "config.json"), cfg);
    assert_int_equal(symlink(tu_join(fix, "model.safetensors"), tu_join(dir, "model.safetensors")),
                     0);
    tu_write_text(ids, "1 2 3 4\n");
    assert_int_equal(tu_run(log, "inspect %s --tokens %s --out %s -q", dir, ids, run), 2);
    char *out = tu_slurp_ok(log, NULL);
    if (!strstr(out, want) || strchr(out, '\n') + 1 != out + strlen(out))
        fail_msg("%s: the refusal was: %s", fix, out);
    free(out);
    tu_rmtree(dir);
}

/* text with its first from replaced by to (malloc'd; text freed). */
static char *replaced(char *text, const char *from, const char *to) {
    char *p = strstr(text, from);
    if (!p) fail_msg("config.json has no %s", from);
    const size_t head = (size_t)(p - text), nf = strlen(from), nt = strlen(to);
    char *out = malloc(strlen(text) - nf + nt + 1);
    assert_non_null(out);
    memcpy(out, text, head);
    memcpy(out + head, to, nt);
    strcpy(out + head + nt, p + nf);
    free(text);
    return out;
}

/* Contracts in hf_inspect_fixture.h. */
void hf_refused_edited(const char *name, const char *want, ...) {
    char fix[2048];
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/%s", tu_src(), name);
    char *cfg = tu_slurp_ok(tu_join(fix, "config.json"), NULL);
    va_list ap;
    va_start(ap, want);
    for (const char *from; (from = va_arg(ap, const char *)) != NULL;)
        cfg = replaced(cfg, from, va_arg(ap, const char *));
    va_end(ap);
    refused_under(fix, cfg, want);
    free(cfg);
}

/* Contracts in hf_inspect_fixture.h. */
void hf_check_uniform(const char *run, const char *log, int len, const double *share, int L,
                      double mean) {
    assert_int_equal(tu_run(log, "sinks %s --json", run), 0);
    json_t *o = json_load_file(log, 0, NULL);
    assert_non_null(o);
    assert_true(fabs(json_real_value(json_object_get(o, "f_attn_uniform")) - mean) < 1e-9);
    json_t *ul = json_object_get(o, "f_attn_uniform_layer");
    assert_int_equal(json_array_size(ul), (size_t)L);
    for (int l = 0; l < L; l++)
        assert_true(fabs(json_real_value(json_array_get(ul, (size_t)l)) - share[l]) < 1e-9);
    json_decref(o);
    assert_int_equal(
        tu_run(log, "eval %s --lengths %d --batches 1 --batch-size 1 --no-write --json", run, len),
        0);
    o = json_load_file(log, 0, NULL);
    assert_non_null(o);
    json_t *e = json_array_get(json_object_get(o, "plain"), 0);
    assert_true(fabs(json_real_value(json_object_get(e, "uniform_share")) - mean) < 1e-9);
    json_decref(o);
}

/* Contracts in hf_inspect_fixture.h. */
void hf_refusals(HfParse parse, const HfRefusal *c, size_t n) {
    HfArch a;
    char err[512];
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(parse(&a, c[i].extra, err, sizeof err), -1);
        if (!strstr(err, c[i].want)) fail_msg("%s: got \"%s\"", c[i].extra, err);
        assert_null(strchr(err, '\n'));
    }
}
