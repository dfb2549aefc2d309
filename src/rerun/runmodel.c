/* runmodel.c: a finished run's model from its run file (runmodel.h). */
#include "runmodel.h"

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_args.h"
#include "config_derive.h"
#include "runfile_check.h"
#include "util.h"

#define CONFIG_TEXT_MAX ((size_t)1 << 16)

static int load_config(RunReader *rr, const char *path, Config *cfg, char *err, size_t errlen) {
    char *text = malloc(CONFIG_TEXT_MAX);
    if (!text) return seterr(err, errlen, "%s: out of memory", path);
    int rc = runread_config_string(rr, RS_CONFIG_TEXT, text, CONFIG_TEXT_MAX, err, errlen);
    if (rc == 0) rc = config_from_text(cfg, text, path, err, errlen);
    free(text);
    return rc != 0 ? -1 : 0;
}

/* Every tensor of the model, shape-checked and finite (runfile_check.h). */
static int load_weights(RunReader *rr, const char *path, Model *m, char *err, size_t errlen) {
    for (int i = 0; i < m->table.count; i++) {
        const ParamInfo *p = &m->table.info[i];
        char what[300];
        snprintf(what, sizeof what, "/%s/%s", RS_G_PARAMS, p->name);
        if (runread_param(rr, p->name, m->params + p->offset, p->ndim, p->shape, err, errlen) !=
                0 ||
            runcheck_finite(path, what, m->params + p->offset, p->numel, err, errlen) != 0)
            return -1;
    }
    return 0;
}

int runmodel_load(RunReader *rr, const char *path, Model *m, char *err, size_t errlen) {
    const RunMeta *meta = runread_meta(rr);
    if (strcmp(meta->status, RS_STATUS_DONE) && strcmp(meta->status, RS_STATUS_DIVERGED))
        return seterr(err, errlen,
                      "%s: run status is '%s', not done or diverged (no final weights)", path,
                      meta->status);
    Config cfg;
    if (load_config(rr, path, &cfg, err, errlen) != 0) return -1;
    RunConfigDims dims;
    runread_config_dims(rr, &dims);
    if (runcheck_config(path, &dims, &cfg, err, errlen) != 0) return -1;
    config_extended(&cfg); /* the model as its training left it */
    if (model_init(m, &cfg, err, errlen) != 0) return -1;
    if (load_weights(rr, path, m, err, errlen) != 0) {
        model_free(m);
        return -1;
    }
    return 0;
}
