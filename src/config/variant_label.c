/* variant_label.c: a config's variant label from its fields
 * (config_label_variant, config_variant_diff in config.h): the catalog id
 * whose key=value row its fields equal, else custom. */
#include "config.h"
#include "util.h"

#include <string.h>

/* 1 when applying catalog id's fields to c changes nothing. */
static int row_matches(const char *id, const Config *c) {
    Config t = *c;
    char why[400];
    return config_apply_fields(&t, variant_fields(id), why, sizeof why) == 0 &&
           config_differences(c, &t, NULL, 0) == 0;
}

void config_label_variant(Config *c) {
    if (variant_fields(c->variant) && row_matches(c->variant, c)) return;
    for (int i = 0; variant_id_at(i); i++)
        if (!variant_changes_shape(variant_id_at(i)) && row_matches(variant_id_at(i), c)) {
            str_copy(c->variant, sizeof c->variant, variant_id_at(i));
            return;
        }
    str_copy(c->variant, sizeof c->variant, VARIANT_CUSTOM);
}

int config_variant_diff(const Config *c, char *buf, size_t len) {
    Config base = *c;
    config_reset_variant_fields(&base);
    return config_differences(&base, c, buf, len);
}
