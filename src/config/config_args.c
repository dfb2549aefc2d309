/* config_args.c: turning a config source (a preset file plus --set
 * overrides, or the config text a run file recorded) into a Config every
 * command that builds a model can trust (see config_args.h). */
#include "config_args.h"

/* Derived values, then validation: the tail every config source shares. */
static int finish(Config *cfg, char *err, size_t errlen) {
    config_resolve(cfg);
    return config_validate(cfg, err, errlen);
}

int config_from_args(Config *cfg, const char *path, char **sets, int nsets, char *err,
                     size_t errlen) {
    config_defaults(cfg);
    if (path && config_load_file(cfg, path, err, errlen) != 0) return -1;
    for (int i = 0; i < nsets; i++)
        if (config_set(cfg, sets[i], err, errlen) != 0) return -1;
    if (finish(cfg, err, errlen) != 0) return -1;
    config_warn_moot(cfg, stderr); /* a user's settings that do nothing */
    return 0;
}

int config_from_text(Config *cfg, const char *text, const char *name, char *err, size_t errlen) {
    config_defaults(cfg);
    if (config_load_string(cfg, text, name, err, errlen) != 0) return -1;
    return finish(cfg, err, errlen);
}
