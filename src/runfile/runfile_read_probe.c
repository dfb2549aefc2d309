/* runfile_read_probe.c: a run's probes and interventions
 * (runfile_read.h), each checked against itself and /config
 * (runfile_check.h) before it is handed out. */
#include "runfile_read_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5util.h"
#include "probe_reduce.h" /* probe_layer_heads, probe_layer_channels */
#include "runschema.h"
#include "runfile_check.h"
#include "util.h"

/* ---- probes ---- */

int runread_probe_steps(RunReader *r, long long **steps, int *n, char *err, size_t errlen) {
    *steps = NULL;
    *n = 0;
    hid_t g = rr_open_group(r->file, RS_G_PROBE);
    if (g < 0) return 0;
    int rc = rr_list_numbered(g, RS_PROBE_STEP_SCAN, LLONG_MIN, steps, n);
    H5Gclose(g);
    if (rc < 0) return seterr(err, errlen, "%s: cannot list /probe", r->meta.path);
    return 0;
}

void runread_probe_free(ProbeRecord *p) {
    if (!p) return;
#define RS_FREE(member, ctype, cls, hid, name, dims, kind, desc) free(p->member);
    RS_PROBE_ARRAYS(RS_FREE)
#undef RS_FREE
    memset(p, 0, sizeof *p);
}

/* The one place an older file is brought up to the current schema
 * (runschema.h RUNFILE_SCHEMA_VERSION): a version-1 probe group may lack
 * RS_P_GATE_SHARED, which its run's /config gate_shared then gives (0
 * when that is absent too). */
static void upgrade_probe_v1(RunReader *r, hid_t g, ProbeRecord *p) {
    double v;
    if (rr_attr_double(g, RS_P_GATE_SHARED, &v) == 0 ||
        runread_config_double(r, RS_CFG_GATE_SHARED, &v, NULL, 0) == 0)
        p->gate_shared = v != 0.0;
}

static int read_probe_attrs(RunReader *r, hid_t g, const char *gname, ProbeRecord *p, char *err,
                            size_t errlen) {
    double v;
    if (rr_attr_ll(g, RS_P_STEP, &p->step) < 0) {
        seterr(err, errlen, "%s: /probe/%s has no step attribute", r->meta.path, gname);
        return -1;
    }
    p->proxy = rr_attr_double(g, RS_P_PROXY, &v) == 0 && v != 0.0;
    p->slots = rr_attr_double(g, RS_P_SLOTS, &v) == 0 ? rr_dbl_to_int(v) : -1;
    char what[128];
    snprintf(what, sizeof what, "/%s/%s", gname, RS_P_NORMALISER);
    if (h5u_attr_read_strbuf(g, RS_P_NORMALISER, p->normaliser, sizeof p->normaliser) < 0)
        return seterr(err, errlen, "%s: %s is missing or cannot be read: the file is corrupt",
                      r->meta.path, what);
    if (runcheck_vocab(r->meta.path, what, p->normaliser, config_key_vocab(RS_P_NORMALISER), err,
                       errlen) < 0)
        return -1;
    p->gate_channels = rr_attr_double(g, RS_P_GATE_CHANNELS, &v) == 0 ? rr_dbl_to_int(v) : 0;
    p->gate_heads = rr_attr_double(g, RS_P_GATE_HEADS, &v) == 0 ? rr_dbl_to_int(v) : 0;
    p->gate_bounded = rr_attr_double(g, RS_P_GATE_BOUNDED, &v) == 0 && v != 0.0;
    if (r->meta.schema_version < 2) {
        upgrade_probe_v1(r, g, p);
        return 0;
    }
    if (rr_attr_double(g, RS_P_GATE_SHARED, &v) < 0) {
        seterr(err, errlen, "%s: /%s has no gate_shared attribute", r->meta.path, gname);
        return -1;
    }
    p->gate_shared = v != 0.0;
    return 0;
}

/* The sizes of the dims letters of RS_PROBE_ARRAYS seen so far (0 until
 * the first array that has the letter). */
typedef struct {
    hsize_t L, H, T, N, C, S, P, D, G;
} ProbeDims;

static hsize_t *dim_slot(ProbeDims *d, char c, hsize_t *fixed) {
    switch (c) {
    case 'L': return &d->L;
    case 'H': return &d->H;
    case 'T': return &d->T;
    case 'P': return &d->P;
    case 'N': return &d->N;
    case 'C': return &d->C;
    case 'S': return &d->S;
    case 'D': return &d->D;
    case 'G': return &d->G;
    case 'B': *fixed = RS_GATE_BINS; return fixed;
    case 'K': *fixed = RS_GATE_NBELOW; return fixed;
    case 'M': *fixed = RS_GATE_NSTATS; return fixed;
    case '3': *fixed = RS_HIDDEN_TOP; return fixed;
    }
    *fixed = 0;
    return fixed;
}

/* One array of the table: skipped when optional and absent, or gated and
 * the probe has no gate; its dims checked against (and teaching) d. */
static int read_probe_array(RunReader *r, hid_t g, hid_t h, ProbeRecord *p, ProbeDims *d,
                            void **out, int cls, int hidden, const char *name, const char *dims,
                            int kind, char *err, size_t errlen) {
    hid_t loc = hidden ? h : g;
    if ((kind == RS_GATE || kind == RS_GATE_OPT) && !p->has_gate) return 0;
    if ((kind == RS_OPT || kind == RS_GATE_OPT) && H5Lexists(loc, name, H5P_DEFAULT) <= 0) return 0;
    int rank = (int)strlen(dims);
    hsize_t want[8], fixed[8];
    for (int i = 0; i < rank; i++) want[i] = *dim_slot(d, dims[i], &fixed[i]);
    int rc = cls == RS_F32   ? READ_F32(loc, name, rank, want, out)
             : cls == RS_F64 ? READ_F64(loc, name, rank, want, out)
                             : READ_I32(loc, name, rank, want, out);
    if (rc < 0) return -1;
    for (int i = 0; i < rank; i++) {
        hsize_t *slot = dim_slot(d, dims[i], &fixed[i]);
        if (*slot == 0) *slot = want[i];
        else if (*slot != want[i]) { /* a letter twice in one array (TT) */
            seterr(err, errlen, "%s: dataset %s dim %d is %llu, want %llu", r->meta.path, name, i,
                   (unsigned long long)want[i], (unsigned long long)*slot);
            return -1;
        }
    }
    return 0;
}

/* The maps are T x T unless the attr maps_len says they were cut to the
 * first maps_len <= T positions. */
static int check_maps_len(RunReader *r, hid_t g, const ProbeDims *d, char *err, size_t errlen) {
    double ml;
    int cut = rr_attr_double(g, RS_P_MAPS_LEN, &ml) == 0;
    if (cut ? ml == (double)d->P && d->P <= d->T : d->P == d->T) return 0;
    seterr(err, errlen,
           "%s: attention maps are %llu x %llu but the probe has "
           "T=%llu%s",
           r->meta.path, (unsigned long long)d->P, (unsigned long long)d->P,
           (unsigned long long)d->T, cut ? " and a different maps_len" : " and no maps_len");
    return -1;
}

static int read_probe_arrays(RunReader *r, hid_t g, ProbeRecord *p, char *err, size_t errlen) {
    ProbeDims d = {0};
    hid_t h = rr_open_group(g, RS_G_HIDDEN);
    if (h < 0) {
        seterr(err, errlen, "%s: probe step %lld has no hidden/ group", r->meta.path, p->step);
        return -1;
    }
    /* the gate arrays are there when gate_channel_mean is */
    p->has_gate = H5Lexists(g, RS_GATE_MARKER, H5P_DEFAULT) > 0;
    if (p->has_gate && p->gate_channels > 0) d.C = (hsize_t)p->gate_channels;
    int rc = 0;
#define RS_READ(member, ctype, cls, hid, name, dims, kind, desc)                                   \
    if (rc == 0)                                                                                   \
        rc = read_probe_array(r, g, h, p, &d, (void **)&p->member, cls, hid, name, dims, kind,     \
                              err, errlen);
    RS_PROBE_ARRAYS(RS_READ)
#undef RS_READ
    H5Gclose(h);
    p->L = (int)d.L, p->H = (int)d.H, p->T = (int)d.T, p->N = (int)d.N;
    p->M = (int)d.P;
    p->D = (int)d.D;
    p->gate_sample_n = (int)d.S;
    if (rc == 0) rc = check_maps_len(r, g, &d, err, errlen);
    for (int l = 0; rc == 0 && p->layer_heads && l < p->L; l++)
        if (p->layer_heads[l] < 1 || p->layer_heads[l] > p->H) {
            seterr(err, errlen, "%s: probe step %lld: layer_heads[%d] is %d, not in [1, H=%d]",
                   r->meta.path, p->step, l, p->layer_heads[l], p->H);
            rc = -1;
        }
    for (int l = 0; rc == 0 && p->layer_slots && l < p->L; l++)
        if (p->layer_slots[l] < 0) {
            seterr(err, errlen, "%s: probe step %lld: layer_slots[%d] is %d, not >= 0",
                   r->meta.path, p->step, l, p->layer_slots[l]);
            rc = -1;
        }
    if (rc == 0 && p->gate_w_norm && d.G != (hsize_t)p->gate_heads) {
        seterr(err, errlen, "%s: gate_weight_norm has %llu heads but the attr gate_heads is %d",
               r->meta.path, (unsigned long long)d.G, p->gate_heads);
        rc = -1;
    }
    if (rc == 0 && p->has_gate) {
        if (p->gate_channels == 0) p->gate_channels = (int)d.C;
        /* a shared gate's channels serve every head whole: no split */
        if (p->gate_heads < 1 || (!p->gate_shared && p->gate_channels % p->gate_heads)) {
            seterr(err, errlen,
                   "%s: gate_channel_mean has %llu channels but "
                   "attrs say gate_channels=%d gate_heads=%d",
                   r->meta.path, (unsigned long long)d.C, p->gate_channels, p->gate_heads);
            rc = -1;
        }
    }
    return rc;
}

/* The probe against itself and /config (runfile_check.h). */
static int probe_against_config(RunReader *r, const char *gname, const ProbeRecord *p, char *err,
                                size_t errlen) {
    RunConfigDims c;
    runread_config_dims(r, &c);
    return runcheck_probe(r->meta.path, gname, p, &c, err, errlen);
}

/* A probe group's attrs and arrays (/probe/step_N or /intervene/<kind>). */
static int read_probe_group(RunReader *r, hid_t g, const char *gname, ProbeRecord *p, char *err,
                            size_t errlen) {
    int rc = -1;
    if (read_probe_attrs(r, g, gname, p, err, errlen) == 0 &&
        read_probe_arrays(r, g, p, err, errlen) == 0 &&
        probe_against_config(r, gname, p, err, errlen) == 0)
        rc = 0;
    if (rc < 0) runread_probe_free(p);
    return rc;
}

int runread_probe(RunReader *r, long long step, ProbeRecord *p, char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    long long *steps;
    int n;
    if (runread_probe_steps(r, &steps, &n, err, errlen) < 0) return -1;
    if (n == 0) {
        seterr(err, errlen, "%s: no probes in /probe", r->meta.path);
        return -1;
    }
    long long want = step < 0 ? steps[n - 1] : step;
    int found = 0;
    for (int i = 0; i < n; i++) found |= steps[i] == want;
    free(steps);
    if (!found) {
        seterr(err, errlen, "%s: no probe at step %lld", r->meta.path, want);
        return -1;
    }
    char gname[64];
    snprintf(gname, sizeof gname, RS_PROBE_PATH_FMT, want);
    hid_t g = H5Gopen2(r->file, gname, H5P_DEFAULT);
    if (g < 0) {
        seterr(err, errlen, "%s: cannot open /%s", r->meta.path, gname);
        return -1;
    }
    int rc = read_probe_group(r, g, gname, p, err, errlen);
    H5Gclose(g);
    return rc;
}

/* ---- /intervene/<kind> (gatelab intervene) ---- */

int runread_has_intervention(RunReader *r, const char *kind) {
    if (!kind || !*kind || strchr(kind, '/')) return 0;
    hid_t top = rr_open_group(r->file, RS_G_INTERVENE);
    if (top < 0) return 0;
    int has = H5Lexists(top, kind, H5P_DEFAULT) > 0;
    H5Gclose(top);
    return has;
}

int runread_has_prompt(RunReader *r, const char *name) {
    if (!name || !*name || strchr(name, '/')) return 0;
    hid_t top = rr_open_group(r->file, RS_G_PROMPT);
    if (top < 0) return 0;
    int has = H5Lexists(top, name, H5P_DEFAULT) > 0;
    H5Gclose(top);
    return has;
}

int runread_prompt(RunReader *r, const char *name, ProbeRecord *p, char *text, size_t textlen,
                   char *err, size_t errlen) {
    char gname[160];
    memset(p, 0, sizeof *p);
    snprintf(gname, sizeof gname, "%s/%s", RS_G_PROMPT, name ? name : "");
    hid_t g = runread_has_prompt(r, name) ? H5Gopen2(r->file, gname, H5P_DEFAULT) : -1;
    if (g < 0) return seterr(err, errlen, "%s: no /%s", r->meta.path, gname);
    int rc = read_probe_group(r, g, gname, p, err, errlen);
    if (rc == 0 && text && textlen && rr_group_attr(r, gname, RS_PM_TEXT, NULL, text, textlen) != 0)
        text[0] = '\0';
    H5Gclose(g);
    return rc;
}

void runread_intervention_free(RunIntervention *iv) {
    if (!iv) return;
    runread_probe_free(&iv->probe);
    memset(iv, 0, sizeof *iv);
}

/* The attributes newer files add to an /intervene group, each absent
 * (-1, NaN, "", the group's name for the kind) where the file lacks it. */
static void iv_newer_attrs(hid_t g, const char *name, RunIntervention *iv) {
    double v;
    iv->layer = rr_attr_double(g, RS_IV_LAYER, &v) == 0 && v >= 0 ? rr_dbl_to_int(v) : -1;
    iv->gate_const = rr_attr_double(g, RS_IV_CONST_C, &v) == 0 ? v : NAN;
    iv->loss_none = rr_attr_double(g, RS_IV_LOSS_NONE, &v) == 0 ? v : NAN;
    iv->mact_abs = rr_attr_double(g, RS_IV_MACT_ABS, &v) == 0 ? v : NAN;
    iv->mact_ratio = rr_attr_double(g, RS_IV_MACT_RATIO, &v) == 0 ? v : NAN;
    if (h5u_attr_read_strbuf(g, RS_IV_HEADS, iv->heads, sizeof iv->heads) < 0) iv->heads[0] = 0;
    if (h5u_attr_read_strbuf(g, RS_IV_KIND, iv->kind, sizeof iv->kind) < 0)
        snprintf(iv->kind, sizeof iv->kind, "%s", name);
}

int runread_intervention(RunReader *r, const char *kind, RunIntervention *iv, char *err,
                         size_t errlen) {
    memset(iv, 0, sizeof *iv);
    char gname[128];
    snprintf(gname, sizeof gname, "%s/%s", RS_G_INTERVENE, kind ? kind : "");
    hid_t g = runread_has_intervention(r, kind) ? H5Gopen2(r->file, gname, H5P_DEFAULT) : -1;
    if (g < 0) {
        seterr(err, errlen, "%s: no /%s", r->meta.path, gname);
        return -1;
    }
    double loss, n, k;
    int rc = read_probe_group(r, g, gname, &iv->probe, err, errlen);
    if (rc == 0 &&
        (rr_attr_double(g, RS_IV_LOSS, &loss) < 0 || rr_attr_double(g, RS_IV_LOSS_N, &n) < 0 ||
         rr_attr_double(g, RS_IV_CLIP_K, &k) < 0)) {
        seterr(err, errlen, "%s: /%s lacks its loss, loss_n or clip_k attribute", r->meta.path,
               gname);
        rc = -1;
    }
    if (rc < 0) {
        H5Gclose(g);
        runread_intervention_free(iv);
        return -1;
    }
    iv->loss = loss;
    iv->loss_n = (long long)n;
    iv->clip_k = rr_dbl_to_int(k);
    iv_newer_attrs(g, kind, iv);
    H5Gclose(g);
    return 0;
}

void runread_names_free(char **names, int n) {
    for (int i = 0; names && i < n; i++) free(names[i]);
    free(names);
}

typedef struct {
    char **v;
    int n, cap;
} NameList;

static herr_t name_cb(hid_t g, const char *name, const H5L_info_t *info, void *data) {
    (void)g, (void)info;
    NameList *l = data;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        char **p = realloc(l->v, (size_t)cap * sizeof *p);
        if (!p) return -1;
        l->v = p, l->cap = cap;
    }
    if (!(l->v[l->n] = strdup(name))) return -1;
    l->n++;
    return 0;
}

int runread_intervention_names(RunReader *r, char ***names, char *err, size_t errlen) {
    *names = NULL;
    hid_t top = rr_open_group(r->file, RS_G_INTERVENE);
    if (top < 0) return 0;
    NameList l = {0};
    herr_t e = H5Literate(top, H5_INDEX_NAME, H5_ITER_INC, NULL, name_cb, &l);
    H5Gclose(top);
    if (e < 0) {
        runread_names_free(l.v, l.n);
        return seterr(err, errlen, "%s: cannot list /%s", r->meta.path, RS_G_INTERVENE);
    }
    *names = l.v;
    return l.n;
}

int runread_layer_heads(const ProbeRecord *p, int l) {
    return probe_layer_heads(p->layer_heads, p->H, l);
}

int runread_layer_channels(const ProbeRecord *p, int l) {
    return probe_layer_channels(p->layer_heads, p->H, p->gate_channels, p->gate_shared, l);
}

int runread_layer_slots(const ProbeRecord *p, int l) {
    return p->layer_slots && l >= 0 && l < p->L ? p->layer_slots[l] : p->slots;
}

int runread_heads_in(const ProbeRecord *p, int l0, int l1) {
    int n = 0;
    for (int l = l0; l < l1; l++) n += runread_layer_heads(p, l);
    return n;
}
