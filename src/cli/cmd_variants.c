/* cmd_variants.c: `gatelab variants [--json]`: the variant catalog
 * (config/variants.c) as it is compiled in: each id, the key=value text it
 * applies, whether it also changes shapes, its key-run role and formula;
 * with --json also each id's resolved config over the key table's defaults
 * (and any --set), the variant fields, the enums and the defaults, which
 * the PyTorch twin (python/gatelab/ref_config.py) reads as its catalog. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "config.h"

#define MAX_SETS 255

typedef struct {
    int json;
} VariantsOpts;
static const VariantsOpts variants_defaults = {0};

static const OptRow variants_rows[] = {{'j', "json", OPT_FLAG, NULL, 0, 0, NULL,
                                        "machine-readable output", 0, 0, &variants_defaults.json},
                                       {'s', "set", OPT_STR, "K=V", 0, 0, NULL,
                                        "with --json: a key of the base each id is resolved over\n"
                                        "(repeatable; default: the key table's defaults)",
                                        1, 0, OPT_SPECIAL},
                                       {0}};
const OptTable variants_options = {
    .cmd = "variants",
    .operands = "[options]",
    .about = "Print the variant catalog: each id, the key=value fields it sets over\n"
             "the baseline's, a shape change (the parameter-matched ids), its role\n"
             "in the paper's headline comparison, and its formula. --json adds each\n"
             "id's resolved config (every key after its fields and shape change over\n"
             "the defaults and --set), the variant fields, each enumerated key's\n"
             "names and every key's default (docs/variants.md).\n",
    .rows = variants_rows,
    OPT_DEFAULTS(variants_defaults),
};

/* The key-run role of id as a word ("" when it has none). */
static const char *role_name(const char *id) {
    switch (variant_key(id)) {
    case VARIANT_KEY_BASELINE: return "baseline";
    case VARIANT_KEY_HEADLINE: return "headline";
    case VARIANT_KEY_OTHER: return "other";
    default: return "";
    }
}

/* config_visit's callback: obj[key] = value, typed (an integer, a
 * number, else a string). */
static void put_typed(const char *key, const char *value, int is_int, int is_float, void *ctx) {
    json_t *v;
    if (is_int) {
        unsigned long long u = strtoull(value, NULL, 10);
        v = u <= (unsigned long long)LLONG_MAX ? json_integer((json_int_t)u) : cj_str(value);
    } else if (is_float) {
        /* the float's shortest text, which cj_print's %.9g gives back */
        v = json_real(strtod(value, NULL));
    } else {
        v = cj_str(value);
    }
    cj_set(ctx, key, v);
}

static json_t *config_json(const Config *c) {
    json_t *o = json_object();
    config_visit(c, put_typed, o);
    return o;
}

/* The key table's side of the catalog: the variant fields in table order,
 * each enumerated key's names, every key's default. */
static void put_key_table(json_t *top) {
    json_t *vkeys = json_array(), *enums = json_object();
    for (int i = 0; config_key_at(i); i++) {
        const char *k = config_key_at(i);
        if (config_key_is_variant_field(k)) json_array_append_new(vkeys, cj_str(k));
        const char *const *vocab = config_key_vocab(k);
        if (!vocab) continue;
        json_t *names = json_array();
        for (int v = 0; vocab[v]; v++) json_array_append_new(names, cj_str(vocab[v]));
        cj_set(enums, k, names);
    }
    Config d;
    config_defaults(&d);
    cj_set(top, "variant_keys", vkeys);
    cj_set(top, "enums", enums);
    cj_set(top, "defaults", config_json(&d));
}

/* One catalog row, with its config resolved over base: "resolved", or
 * null and "unresolved" (the reason) when the id cannot apply to base
 * (more-kv-heads over a base without GQA). */
static json_t *row_json(const char *id, const Config *base) {
    json_t *o = json_object();
    cj_set(o, "id", cj_str(id));
    cj_set(o, "fields", cj_str(variant_fields(id)));
    cj_set(o, "changes_shape", json_boolean(variant_changes_shape(id)));
    cj_set(o, "key", cj_str(role_name(id)));
    cj_set(o, "formula", cj_str(variant_formula(id)));
    Config c = *base;
    char why[1024];
    if (config_apply_variant(&c, id, why, sizeof why) == 0) {
        cj_set(o, "resolved", config_json(&c));
    } else {
        cj_set(o, "resolved", json_null());
        cj_set(o, "unresolved", cj_str(why));
    }
    return o;
}

static int print_json(const char *const *sets, int nsets) {
    Config base;
    config_defaults(&base);
    char err[1024];
    for (int i = 0; i < nsets; i++)
        if (config_set(&base, sets[i], err, sizeof err)) {
            fprintf(stderr, "gatelab variants: %s\n", err);
            return 2;
        }
    json_t *top = json_object(), *rows = json_array();
    for (int i = 0; variant_id_at(i); i++)
        json_array_append_new(rows, row_json(variant_id_at(i), &base));
    cj_set(top, "variants", rows);
    put_key_table(top);
    return cj_print("variants", top) ? 1 : 0;
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
    VariantsOpts o = variants_defaults;
    int nsets = 0;
    const char *sets[MAX_SETS];
    OptParser op;
    opt_init(&op, &variants_options, argc, argv);
    for (int c; (c = opt_parse(&op, &o)) != OPT_END;) {
        if (c < 0) return opt_exit(c);
        if (c == 's') {
            if (nsets == MAX_SETS) return cu_too_many("variants", "--set", MAX_SETS);
            sets[nsets++] = op.str;
        }
    }
    if (op.optind != argc) {
        fprintf(stderr,
                "gatelab variants: takes no arguments, got '%s' (gatelab variants --help)\n",
                argv[op.optind]);
        return 2;
    }
    if (nsets && !o.json) {
        fprintf(stderr, "gatelab variants: --set needs --json (gatelab variants --help)\n");
        return 2;
    }
    return o.json ? print_json(sets, nsets) : print_text();
}
