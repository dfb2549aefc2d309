/* test_usage.c: every command's --help against its option rows
 * (cliopts.h, opts.h), and the option rules every command shares: an
 * option given twice is refused unless it is repeatable, an unknown one
 * gets a "did you mean", and every number is range-checked before it is
 * narrowed, each refusal in one line; every row fills a field of its
 * command's defaults struct or is handled by the command, and --help's
 * default is that field's initial value. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliopts.h"
#include "config.h"
#include "testutil.h"

static char log_path[600];

/* `gatelab CMD --help` as text (malloc'd). */
static char *help_of(const OptTable *o) {
    assert_int_equal(tu_run(log_path, "%s --help", o->cmd), 0);
    return tu_slurp_ok(log_path, NULL);
}

/* Whether text names --name as a whole option word. */
static int names_option(const char *text, const char *name) {
    size_t n = strlen(name);
    for (const char *p = text; (p = strstr(p, "--")); p += 2)
        if (!strncmp(p + 2, name, n) && !isalnum((unsigned char)p[2 + n]) && p[2 + n] != '-')
            return 1;
    return 0;
}

/* Every row of every table is in its command's --help, with its letter. */
static void test_help_lists_every_option(void **state) {
    (void)state;
    for (int k = 0; cli_all_options[k]; k++) {
        const OptTable *o = cli_all_options[k];
        char *help = help_of(o);
        if (!names_option(help, "help")) fail_msg("gatelab %s --help lacks --help", o->cmd);
        for (const OptRow *r = o->rows; r->name; r++) {
            char both[64];
            snprintf(both, sizeof both, "-%c, --%s", r->key, r->name);
            if (!names_option(help, r->name))
                fail_msg("gatelab %s --help does not list --%s", o->cmd, r->name);
            if (r->key < 128 && !strstr(help, both))
                fail_msg("gatelab %s --help does not show %s", o->cmd, both);
        }
        free(help);
    }
}

/* Every --option a --help names is in that command's table. */
static void test_help_names_no_other_option(void **state) {
    (void)state;
    for (int k = 0; cli_all_options[k]; k++) {
        const OptTable *o = cli_all_options[k];
        char *help = help_of(o);
        for (const char *p = help; (p = strstr(p, "--")); p += 2) {
            size_t n = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz0123456789-");
            if (n && !opt_find(o, p + 2, n) && !(n == 7 && !strncmp(p + 2, "inspect", 7)))
                fail_msg("gatelab %s --help names --%.*s, which is not one of its options", o->cmd,
                         (int)n, p + 2);
        }
        free(help);
    }
}

/* An option given twice is refused with one line naming it; a repeatable
 * one (--set) is not. */
static void test_repeated_option(void **state) {
    (void)state;
    assert_int_equal(tu_run(log_path, "train --config a.ini --out x.h5 --out y.h5"), 2);
    tu_assert_one_line(log_path, "'--out' given twice", NULL);
    assert_int_equal(tu_run(log_path, "sinks --step 1 --step 2 r.h5"), 2);
    tu_assert_one_line(log_path, "gatelab sinks", "'--step' given twice");
    assert_int_equal(tu_run(log_path, "sweep --jobs 1 -j 2 f.sweep --out d"), 2);
    tu_assert_one_line(log_path, "'--jobs' given twice", NULL);
    assert_int_equal(
        tu_run(log_path, "train --config /nonexistent.ini --set lr=1 --set lr=2 --out x.h5"), 2);
    char *text = tu_slurp_ok(log_path, NULL);
    assert_null(strstr(text, "given twice"));
    free(text);
}

/* A bad option or value is one line in every command, bench --inspect too. */
static void test_bad_option_one_line(void **state) {
    (void)state;
    for (int k = 0; cli_all_options[k]; k++) {
        assert_int_equal(tu_run(log_path, "%s --no-such-option", cli_all_options[k]->cmd), 2);
        tu_assert_one_line(log_path, "unknown option", "--no-such-option");
    }
    assert_int_equal(tu_run(log_path, "bench --inspect --clock sundial"), 2);
    tu_assert_one_line(log_path, "--clock", "sundial");
}

/* An unknown option near a real one names it. */
static void test_did_you_mean(void **state) {
    (void)state;
    assert_int_equal(tu_run(log_path, "train --confg a.ini --out x.h5"), 2);
    tu_assert_one_line(log_path, "'--confg'", "did you mean --config?");
    assert_int_equal(tu_run(log_path, "sweep --jbos 2 f.sweep"), 2);
    tu_assert_one_line(log_path, "'--jbos'", "did you mean --jobs?");
    assert_int_equal(tu_run(log_path, "trian --config a.ini"), 2);
    tu_assert_one_line(log_path, "unknown command 'trian'", "did you mean train?");
    assert_int_equal(tu_run(log_path, "train --zzzzzz"), 2);
    char *text = tu_slurp_ok(log_path, NULL);
    assert_null(strstr(text, "did you mean"));
    free(text);
}

/* A mistyped variant id names the nearest and lists every id; a mistyped
 * config key names the nearest. */
static void test_did_you_mean_variant_and_key(void **state) {
    (void)state;
    char ini[700];
    snprintf(ini, sizeof ini, "%s/experiments/tiny.ini", tu_src());
    assert_int_equal(tu_run(log_path, "train --config %s --set variant=g1-elm --out x.h5", ini), 2);
    tu_assert_one_line(log_path, "unknown variant id 'g1-elm' (did you mean g1-elem?)",
                       "the ids: baseline, g1-elem, ");
    char *text = tu_slurp_ok(log_path, NULL);
    for (int i = 0; variant_id_at(i); i++)
        if (!strstr(text, variant_id_at(i)))
            fail_msg("%s is not listed in: %s", variant_id_at(i), text);
    free(text);
    assert_int_equal(tu_run(log_path, "train --config %s --set lrr=1 --out x.h5", ini), 2);
    tu_assert_one_line(log_path, "unknown key 'lrr'", "(did you mean lr?)");
}

/* Numbers past 32 bits are refused, not wrapped, in one line naming the
 * option and the value: the cases that ran as 1 or 0, then every integer
 * row of every command just past each end of its range. */
static void test_numbers_range_checked(void **state) {
    (void)state;
    assert_int_equal(tu_run(log_path, "sweep --jobs 4294967297 f.sweep --out d"), 2);
    tu_assert_one_line(log_path, "--jobs", "4294967297");
    assert_int_equal(tu_run(log_path, "sweep --only 4294967296 f.sweep --out d"), 2);
    tu_assert_one_line(log_path, "--only", "4294967296");
    assert_int_equal(tu_run(log_path, "intervene r.h5 bos-clip --clip-k 4294967297"), 2);
    tu_assert_one_line(log_path, "--clip-k", "4294967297");
    for (int k = 0; cli_all_options[k]; k++) {
        const OptTable *o = cli_all_options[k];
        for (const OptRow *r = o->rows; r->name; r++) {
            if (r->type != OPT_INT && r->type != OPT_LL) continue;
            long long bad[3] = {r->lo - 1, r->hi + (r->hi < LLONG_MAX), r->lo + (1LL << 32)};
            for (int i = 0; i < 3; i++) {
                if ((i == 0 && r->lo == LLONG_MIN) || (i == 1 && r->hi == LLONG_MAX) ||
                    (i == 2 && r->lo + (1LL << 32) <= r->hi))
                    continue;
                assert_int_equal(tu_run(log_path, "%s --%s %lld", o->cmd, r->name, bad[i]), 2);
                char val[32];
                snprintf(val, sizeof val, "'%lld'", bad[i]);
                tu_assert_one_line(log_path, r->name, val);
            }
            assert_int_equal(tu_run(log_path, "%s --%s 12x", o->cmd, r->name), 2);
            tu_assert_one_line(log_path, r->name, "'12x'");
        }
    }
}

/* Every row of every table stores into its command's defaults struct or
 * is OPT_SPECIAL (the command handles its key): no row is read and then
 * dropped. A flag starts at 0 (it sets 1), an OPT_INT's bounds fit the
 * int it fills. */
static void test_every_row_has_a_target(void **state) {
    (void)state;
    for (int k = 0; cli_all_options[k]; k++) {
        const OptTable *o = cli_all_options[k];
        if (!o->defaults) fail_msg("gatelab %s: its table names no defaults", o->cmd);
        for (const OptRow *r = o->rows; r->name; r++) {
            if (r->var == OPT_SPECIAL) continue;
            const char *v = r->var, *d = o->defaults;
            if (!v || v < d || v >= d + o->size)
                fail_msg("gatelab %s --%s: no target in its defaults, not OPT_SPECIAL", o->cmd,
                         r->name);
            if (r->type == OPT_FLAG && *(const int *)v)
                fail_msg("gatelab %s --%s: a flag whose default is set", o->cmd, r->name);
            if (r->type == OPT_INT && (r->lo < INT_MIN || r->hi > INT_MAX))
                fail_msg("gatelab %s --%s: OPT_INT past int (OPT_LL)", o->cmd, r->name);
        }
    }
}

/* Row r's target's initial value as text ("" for none: a flag, a NULL
 * string). */
static void initial_text(const OptTable *o, const OptRow *r, char *s, size_t n) {
    const void *v = opt_target(o, r, (void *)o->defaults);
    *s = 0;
    if (!v) return;
    if (r->type == OPT_INT) snprintf(s, n, "%d", *(const int *)v);
    if (r->type == OPT_LL) snprintf(s, n, "%lld", *(const long long *)v);
    if ((r->type == OPT_STR || r->type == OPT_OPTSTR) && *(const char *const *)v)
        snprintf(s, n, "%s", *(const char *const *)v);
}

/* The default --help shows is the target's initial value: a row gives def
 * text only when that is not the plain value (and never the value itself,
 * which would be written twice), and each shown value is in --help. */
static void test_help_default_is_initial_value(void **state) {
    (void)state;
    for (int k = 0; cli_all_options[k]; k++) {
        const OptTable *o = cli_all_options[k];
        char *help = help_of(o);
        for (const OptRow *r = o->rows; r->name; r++) {
            char init[256], want[300];
            initial_text(o, r, init, sizeof init);
            if (r->def && *init && !strcmp(r->def, init))
                fail_msg("gatelab %s --%s: def \"%s\" repeats the initial value (def NULL)", o->cmd,
                         r->name, r->def);
            if (r->def || !*init) continue;
            snprintf(want, sizeof want, "(default: %s)", init);
            if (!strstr(help, want))
                fail_msg("gatelab %s --help: --%s does not show %s", o->cmd, r->name, want);
        }
        free(help);
    }
}

/* -t is --threads in every command that has it. */
static void test_t_is_threads(void **state) {
    (void)state;
    for (int k = 0; cli_all_options[k]; k++)
        for (const OptRow *r = cli_all_options[k]->rows; r->name; r++)
            if (r->key == 't' && strcmp(r->name, "threads"))
                fail_msg("gatelab %s: -t is --%s", cli_all_options[k]->cmd, r->name);
    assert_int_equal(tu_run(log_path, "inspect -t 0 m --text t --out o.h5"), 2);
    tu_assert_one_line(log_path, "--threads", "'0'");
}

/* The table commands print the compiled-in tables, take no arguments
 * (one line, exit 2), and their JSON lists every row. */
static void test_table_commands(void **state) {
    (void)state;
    assert_int_equal(tu_run(log_path, "variants"), 0);
    char *out = tu_slurp_ok(log_path, NULL);
    assert_non_null(strstr(out, "\ng1-mult-silu "));
    assert_non_null(strstr(out, "gate_pos=g1 gate_act=silu"));
    assert_non_null(strstr(out, "\nqk-norm "));
    assert_non_null(strstr(out, "\n  norm_place=pre|post|sandwich\n"));
    assert_non_null(strstr(out, "\n  pos=rope|learned|none|alibi\n"));
    free(out);
    assert_int_equal(tu_run(log_path, "variants --json"), 0);
    out = tu_slurp_ok(log_path, NULL);
    assert_non_null(strstr(out, "{\"id\":\"wider-ffn\",\"fields\":\"\",\"changes_shape\":true"));
    free(out);
    assert_int_equal(tu_run(log_path, "metrics"), 0);
    out = tu_slurp_ok(log_path, NULL);
    assert_non_null(strstr(out, "\nsink_rate_0.3 "));
    assert_non_null(strstr(out, "\ngate_frac_below_0.1 "));
    free(out);
    assert_int_equal(tu_run(log_path, "metrics --json"), 0);
    out = tu_slurp_ok(log_path, NULL);
    assert_non_null(strstr(out, "{\"csv\":\"sink_rate_0.2\",\"threshold\":0.2"));
    assert_non_null(strstr(out, "\"definition\":\"Sink rate at ε = 0.2.\",\"protocol\":false}"));
    assert_non_null(strstr(out, "see [sink@0.3](#def-sink).\",\"protocol\":true}"));
    free(out);
    assert_int_equal(tu_run(log_path, "variants extra"), 2);
    tu_assert_one_line(log_path, "gatelab variants", "takes no arguments");
    assert_int_equal(tu_run(log_path, "metrics extra"), 2);
    tu_assert_one_line(log_path, "gatelab metrics", "takes no arguments");
}

int main(void) {
    snprintf(log_path, sizeof log_path, "%s/usage.log", tu_tmpdir());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_lists_every_option),
        cmocka_unit_test(test_help_names_no_other_option),
        cmocka_unit_test(test_repeated_option),
        cmocka_unit_test(test_bad_option_one_line),
        cmocka_unit_test(test_did_you_mean),
        cmocka_unit_test(test_did_you_mean_variant_and_key),
        cmocka_unit_test(test_numbers_range_checked),
        cmocka_unit_test(test_t_is_threads),
        cmocka_unit_test(test_every_row_has_a_target),
        cmocka_unit_test(test_help_default_is_initial_value),
        cmocka_unit_test(test_table_commands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
