/* cmd_variants.c: `gatelab variants [--json]`: the variant catalog
 * (config/variants.c) as it is compiled in: each id, the key=value text it
 * applies, whether it also changes shapes, its key-run role and formula. */
#include <stdio.h>

#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "config.h"

static const OptRow variants_rows[] = {
    {'j', "json", OPT_FLAG, NULL, 0, 0, NULL, "machine-readable output", 0, 0}, {0}};
const OptTable variants_options = {
    "variants",
    "[options]",
    "Print the variant catalog: each id, the key=value fields it sets over\n"
    "the baseline's, a shape change (the parameter-matched ids), its role\n"
    "in the paper's headline comparison, and its formula.\n",
    NULL,
    variants_rows,
    NULL};

/* The key-run role of id as a word ("" when it has none). */
static const char *role_name(const char *id) {
    switch (variant_key(id)) {
    case VARIANT_KEY_BASELINE: return "baseline";
    case VARIANT_KEY_HEADLINE: return "headline";
    case VARIANT_KEY_OTHER: return "other";
    default: return "";
    }
}

static int print_json(void) {
    json_t *a = json_array();
    for (int i = 0; variant_id_at(i); i++) {
        const char *id = variant_id_at(i);
        json_t *o = json_object();
        cj_set(o, "id", cj_str(id));
        cj_set(o, "fields", cj_str(variant_fields(id)));
        cj_set(o, "changes_shape", json_boolean(variant_changes_shape(id)));
        cj_set(o, "key", cj_str(role_name(id)));
        cj_set(o, "formula", cj_str(variant_formula(id)));
        json_array_append_new(a, o);
    }
    return cj_print("variants", a) ? 1 : 0;
}

/* The architecture keys every id combines with (docs/MODEL.md), each with
 * the values the key table accepts. */
static const char *const field_keys[] = {"window", "window_layers", "norm_place", "pos", NULL};

static void print_field_keys(void) {
    printf("\nArchitecture keys every id combines with (--set KEY=VALUE; docs/MODEL.md):\n");
    for (int i = 0; field_keys[i]; i++) {
        const char *const *vocab = config_key_vocab(field_keys[i]);
        printf("  %s=", field_keys[i]);
        if (!vocab) printf("W (keys each query sees; 0: full causal)");
        for (int v = 0; vocab && vocab[v]; v++) printf("%s%s", v ? "|" : "", vocab[v]);
        printf("\n");
    }
}

static int print_text(void) {
    printf("%-17s %-46s %-6s %-9s %s\n", "id", "fields", "shape", "key", "formula");
    for (int i = 0; variant_id_at(i); i++) {
        const char *id = variant_id_at(i);
        printf("%-17s %-46s %-6s %-9s %s\n", id, *variant_fields(id) ? variant_fields(id) : "-",
               variant_changes_shape(id) ? "yes" : "-", *role_name(id) ? role_name(id) : "-",
               variant_formula(id));
    }
    print_field_keys();
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

int cmd_variants(int argc, char **argv) {
    int json = 0;
    OptParser op;
    opt_init(&op, &variants_options, argc, argv);
    for (int c; (c = opt_next(&op)) != OPT_END;) {
        if (c == OPT_HELP) return 0;
        if (c == OPT_BAD) return 2;
        if (c == 'j') json = 1;
    }
    if (op.optind != argc) {
        fprintf(stderr,
                "gatelab variants: takes no arguments, got '%s' (gatelab variants --help)\n",
                argv[op.optind]);
        return 2;
    }
    return json ? print_json() : print_text();
}
