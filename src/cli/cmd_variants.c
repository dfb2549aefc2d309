/* cmd_variants.c: `gatelab variants [--json]`: the variant catalog
 * (config/variants.c) as it is compiled in: each id, the key=value text it
 * applies, whether it also changes shapes, its key-run role and formula. */
#include <getopt.h>
#include <stdio.h>

#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "config.h"

static void usage(FILE *f) {
    fprintf(f, "usage: gatelab variants [--json]\n"
               "  Print the variant catalog: each id, the key=value fields it sets over\n"
               "  the baseline's, a shape change (the parameter-matched ids), its role\n"
               "  in the paper's headline comparison, and its formula.\n"
               "  --json     machine-readable output\n");
}

static const struct option variants_long[] = {
    {"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
const CliOpts variants_options = {"variants", ":jh", "", variants_long};

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

static int print_text(void) {
    printf("%-17s %-46s %-6s %-9s %s\n", "id", "fields", "shape", "key", "formula");
    for (int i = 0; variant_id_at(i); i++) {
        const char *id = variant_id_at(i);
        printf("%-17s %-46s %-6s %-9s %s\n", id, *variant_fields(id) ? variant_fields(id) : "-",
               variant_changes_shape(id) ? "yes" : "-", *role_name(id) ? role_name(id) : "-",
               variant_formula(id));
    }
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

int cmd_variants(int argc, char **argv) {
    int c, json = 0;
    optind = 1;
    opterr = 0;
    unsigned char seen[CU_MAX_OPTS] = {0};
    while ((c = cu_getopt(&variants_options, argc, argv, seen)) != -1) {
        if (c == 'j') json = 1;
        else if (c == 'h') {
            usage(stdout);
            return 0;
        } else return cu_bad_option("variants", c, argv);
    }
    if (optind != argc) {
        fprintf(stderr,
                "gatelab variants: takes no arguments, got '%s' (gatelab variants --help)\n",
                argv[optind]);
        return 2;
    }
    return json ? print_json() : print_text();
}
