/* runfile_check.c: see runfile_check.h. */
#include "runfile_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5util.h"
#include "util.h"

typedef struct {
    char name[512]; /* the first external link found */
} LinkScan;

static herr_t link_cb(hid_t g, const char *name, const H5L_info_t *info, void *data) {
    (void)g;
    if (info->type != H5L_TYPE_EXTERNAL) return 0;
    snprintf(((LinkScan *)data)->name, sizeof((LinkScan *)data)->name, "%s", name);
    return 1; /* stop: one is enough */
}

int runcheck_links(hid_t file, const char *path, char *err, size_t errlen) {
    LinkScan s = {""};
    herr_t rc = H5Lvisit(file, H5_INDEX_NAME, H5_ITER_NATIVE, link_cb, &s);
    if (rc > 0)
        return seterr(err, errlen,
                      "%s: /%s is an external link to another file; refusing a run file "
                      "that points outside itself",
                      path, s.name);
    return 0; /* a file that cannot be listed fails on the reads that follow */
}

int runcheck_vocab(const char *path, const char *what, const char *value, const char *const *vocab,
                   char *err, size_t errlen) {
    for (int i = 0; vocab[i]; i++)
        if (strcmp(value, vocab[i]) == 0) return 0;
    char shown[52], list[256] = "";
    for (int i = 0; vocab[i]; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", vocab[i]);
    }
    return seterr(err, errlen, "%s: %s is \"%s\", not one of %s", path, what,
                  err_shown(shown, sizeof shown, value), list);
}

static const char *const status_vocab[] = {RS_STATUS_RUNNING, RS_STATUS_DONE, RS_STATUS_DIVERGED,
                                           NULL};
static const char *const source_vocab[] = {RS_SOURCE_PRETRAINED, NULL};
static const char *const input_kind_vocab[] = {RS_PT_INPUT_TEXT, RS_PT_INPUT_TOKENS, NULL};

/* Attribute name of g (at path where, "/config/") against vocab: 0, or -1
 * naming it. */
static int check_enum_attr(hid_t g, const char *name, const char *where, const char *const *vocab,
                           const char *path, char *err, size_t errlen) {
    char what[160], *v;
    snprintf(what, sizeof what, "%s%s", where, name);
    if (h5u_attr_read_str(g, name, &v) < 0)
        return seterr(err, errlen, "%s: %s cannot be read as a string: the file is corrupt", path,
                      what);
    int rc = runcheck_vocab(path, what, v, vocab, err, errlen);
    free(v);
    return rc;
}

typedef struct {
    const char *path;
    char *err;
    size_t errlen;
    int bad;
} EnumScan;

static herr_t enum_cb(hid_t g, const char *name, const H5A_info_t *info, void *data) {
    (void)info;
    EnumScan *s = data;
    const char *const *vocab = config_key_vocab(name);
    if (!vocab) return 0;
    if (check_enum_attr(g, name, "/" RS_G_CONFIG "/", vocab, s->path, s->err, s->errlen) < 0) {
        s->bad = 1;
        return 1; /* stop: the first is named */
    }
    return 0;
}

int runcheck_enums(hid_t file, const char *path, char *err, size_t errlen) {
    if (H5Aexists(file, RS_STATUS) > 0 &&
        check_enum_attr(file, RS_STATUS, "/", status_vocab, path, err, errlen) < 0)
        return -1;
    if (H5Aexists(file, RS_SOURCE) > 0 &&
        check_enum_attr(file, RS_SOURCE, "/", source_vocab, path, err, errlen) < 0)
        return -1;
    if (H5Lexists(file, RS_G_PRETRAINED, H5P_DEFAULT) > 0) {
        hid_t pt = H5Gopen2(file, RS_G_PRETRAINED, H5P_DEFAULT);
        int bad = pt >= 0 && H5Aexists(pt, RS_PT_INPUT_KIND) > 0 &&
                  check_enum_attr(pt, RS_PT_INPUT_KIND, "/" RS_G_PRETRAINED "/", input_kind_vocab,
                                  path, err, errlen) < 0;
        if (pt >= 0) H5Gclose(pt);
        if (bad) return -1;
    }
    if (H5Lexists(file, RS_G_CONFIG, H5P_DEFAULT) <= 0) return 0;
    hid_t g = H5Gopen2(file, RS_G_CONFIG, H5P_DEFAULT);
    if (g < 0) return 0; /* the reads that follow report it */
    EnumScan s = {path, err, errlen, 0};
    H5Aiterate2(g, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, enum_cb, &s);
    H5Gclose(g);
    return s.bad ? -1 : 0;
}

/* dim (named for the message) against /config value want (-1: absent):
 * equal, or at most. */
static int dim_vs_config(const char *path, const char *gname, const char *what, long long dim,
                         const char *key, long long want, int at_most, char *err, size_t errlen) {
    if (want < 0 || (at_most ? dim <= want : dim == want)) return 0;
    return seterr(err, errlen, "%s: /%s has %s = %lld but /config %s = %lld", path, gname, what,
                  dim, key, want);
}

static int check_tokens(const char *path, const char *gname, const ProbeRecord *p, long long vocab,
                        char *err, size_t errlen) {
    size_t n = (size_t)p->N * (size_t)p->T;
    for (size_t i = 0; i < n; i++) {
        int id = p->tokens[i];
        if (id >= 0 && (vocab <= 0 || id < vocab)) continue;
        if (vocab <= 0)
            return seterr(err, errlen, "%s: /%s/%s holds token id %d (sequence %zu); ids are >= 0",
                          path, gname, RS_TOKENS, id, i / (size_t)p->T);
        return seterr(err, errlen,
                      "%s: /%s/%s holds token id %d (sequence %zu), outside the vocabulary "
                      "0..%lld of /config vocab_size",
                      path, gname, RS_TOKENS, id, i / (size_t)p->T, vocab - 1);
    }
    return 0;
}

int runcheck_probe(const char *path, const char *gname, const ProbeRecord *p,
                   const RunConfigDims *c, char *err, size_t errlen) {
    if (!p->tokens) return seterr(err, errlen, "%s: /%s has no %s", path, gname, RS_TOKENS);
    if (p->N < 1 || p->T < 2)
        return seterr(err, errlen,
                      "%s: /%s/%s is %d x %d; a probe needs at least 1 sequence of at least 2 "
                      "tokens",
                      path, gname, RS_TOKENS, p->N, p->T);
    if (dim_vs_config(path, gname, "N (sequences)", p->N, "probe_n", c->probe_n, 1, err, errlen) !=
            0 ||
        dim_vs_config(path, gname, "L (layers)", p->L, "n_layers", c->n_layers, 0, err, errlen) !=
            0 ||
        dim_vs_config(path, gname, "H (heads)", p->H, "n_heads", c->n_heads, 0, err, errlen) != 0 ||
        (p->D > 0 && dim_vs_config(path, gname, "D (residual width)", p->D, "d_model", c->d_model,
                                   0, err, errlen) != 0))
        return -1;
    return check_tokens(path, gname, p, c->vocab_size, err, errlen);
}

int runcheck_config(const char *path, const RunConfigDims *c, const Config *cfg, char *err,
                    size_t errlen) {
    const struct {
        const char *key;
        long long file;
        int v;
    } keys[] = {
        {"n_layers", c->n_layers, cfg->n_layers}, {"n_heads", c->n_heads, cfg->n_heads},
        {"d_model", c->d_model, cfg->d_model},    {"vocab_size", c->vocab_size, cfg->vocab_size},
        {"seq_len", c->seq_len, cfg->seq_len},    {"probe_n", c->probe_n, cfg->probe_n}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (keys[i].file < 0)
            return seterr(err, errlen, "%s: /config has no integer attribute %s", path,
                          keys[i].key);
        if (keys[i].file != keys[i].v)
            return seterr(err, errlen,
                          "%s: /config %s = %lld contradicts the config's %s = %d "
                          "(corrupt or edited file, or a different config)",
                          path, keys[i].key, keys[i].file, keys[i].key, keys[i].v);
    }
    return 0;
}

int runcheck_finite(const char *path, const char *what, const float *x, size_t n, char *err,
                    size_t errlen) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return seterr(err, errlen,
                          "%s: %s holds a non-finite value (%g at index %zu); refusing to "
                          "compute with it",
                          path, what, (double)x[i], i);
    return 0;
}
