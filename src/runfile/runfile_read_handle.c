/* runfile_read_handle.c: the open RunReader (runfile_read_priv.h), the
 * bottom of the read face over the checked reads of runfile_read_util.c:
 * the in-process open with its root attributes (RunMeta) and the checks
 * of runfile_check.c that hold for the whole file, the variant label,
 * close. It calls no typed reader and no vetting. */
#include "runfile_read_priv.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "h5util.h"
#include "runfile.h" /* RUNFILE_SCHEMA, RUNFILE_SCHEMA_VERSION */
#include "runfile_check.h"
#include "runschema.h"
#include "util.h"

#define CONFIG_TEXT_MAX ((size_t)1 << 16)

/* Set r's meta.variant from the fields of /config/text (config_label_variant):
 * the stored label is not trusted. VARIANT_CUSTOM when the text does not
 * load; unchanged when the run has no /config/text (inspect's runs). */
static void label_variant(RunReader *r) {
    char *text = malloc(CONFIG_TEXT_MAX);
    if (!text) return;
    if (rr_group_attr(r, RS_G_CONFIG, RS_CONFIG_TEXT, NULL, text, CONFIG_TEXT_MAX) == 0) {
        Config c;
        char why[512];
        config_defaults(&c);
        if (config_load_string(&c, text, r->meta.path, why, sizeof why) == 0) {
            config_resolve(&c);
            snprintf(r->meta.variant, sizeof r->meta.variant, "%s", c.variant);
        } else snprintf(r->meta.variant, sizeof r->meta.variant, "%s", VARIANT_CUSTOM);
    }
    free(text);
}

/* The root attributes into r->meta: schema and its version (refused when
 * foreign or out of range), variant and seed (required), the rest
 * optional. 0, or -1 naming the file and the attribute. */
static int read_meta(RunReader *r, char *err, size_t errlen) {
    RunMeta *m = &r->meta;
    char schema[64];
    double v;
    if (h5u_attr_read_strbuf(r->file, RS_SCHEMA, schema, sizeof schema) < 0) {
        seterr(err, errlen, "%s: not a gatelab run file (no schema attr)", m->path);
        return -1;
    }
    if (strcmp(schema, RUNFILE_SCHEMA) != 0) {
        seterr(err, errlen, "%s: schema is \"%s\", want \"%s\"", m->path, schema, RUNFILE_SCHEMA);
        return -1;
    }
    if (rr_attr_double(r->file, RS_SCHEMA_VERSION, &v) < 0) {
        seterr(err, errlen, "%s: missing attribute schema_version", m->path);
        return -1;
    }
    m->schema_version = rr_dbl_to_int(v);
    if (m->schema_version < RUNFILE_SCHEMA_OLDEST || m->schema_version > RUNFILE_SCHEMA_VERSION) {
        seterr(err, errlen, "%s: schema_version %d, this build reads %d to %d", m->path,
               m->schema_version, RUNFILE_SCHEMA_OLDEST, RUNFILE_SCHEMA_VERSION);
        return -1;
    }
    if (h5u_attr_read_strbuf(r->file, RS_VARIANT, m->variant, sizeof m->variant) < 0 ||
        rr_attr_ll(r->file, RS_SEED, &m->seed) < 0) {
        seterr(err, errlen, "%s: missing root attribute variant or seed", m->path);
        return -1;
    }
    /* optional bookkeeping: absent stays empty / -1 */
    if (h5u_attr_read_strbuf(r->file, RS_STATUS, m->status, sizeof m->status) < 0)
        snprintf(m->status, sizeof m->status, "unknown");
    h5u_attr_read_strbuf(r->file, RS_CREATED, m->created, sizeof m->created);
    h5u_attr_read_strbuf(r->file, RS_GATELAB_VERSION, m->gatelab_version,
                         sizeof m->gatelab_version);
    m->data_seed = m->n_params = m->n_params_added = -1;
    rr_attr_ll(r->file, RS_DATA_SEED, &m->data_seed);
    rr_attr_ll(r->file, RS_N_PARAMS, &m->n_params);
    rr_attr_ll(r->file, RS_N_PARAMS_ADDED, &m->n_params_added);
    return 0;
}

/* The in-process open: HDF5 open, no external links, the root attributes,
 * the enumerated attributes, the variant label. */
RunReader *rr_open(const char *path, char *err, size_t errlen) {
    if (H5Fis_hdf5(path) <= 0) {
        seterr(err, errlen, "%s: not an HDF5 file", path);
        return NULL;
    }
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        seterr(err, errlen, "%s: cannot open (truncated or corrupt?): %s", path, rr_h5_reason());
        return NULL;
    }
    RunReader *r = calloc(1, sizeof *r);
    if (!r) {
        H5Fclose(f);
        seterr(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    r->file = f;
    snprintf(r->meta.path, sizeof r->meta.path, "%s", path);
    if (runcheck_links(f, path, err, errlen) < 0 || read_meta(r, err, errlen) < 0 ||
        runcheck_enums(f, path, err, errlen) < 0) {
        runread_close(r);
        return NULL;
    }
    label_variant(r);
    return r;
}

void runread_close(RunReader *r) {
    if (!r) return;
    if (r->file >= 0) H5Fclose(r->file);
    free(r);
}

const RunMeta *runread_meta(const RunReader *r) { return &r->meta; }
