/* test_usage.c: every command's --help against its option table
 * (cliopts.h), and the option rules every command shares: an option given
 * twice is refused unless it is repeatable, with one line. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliopts.h"
#include "testutil.h"

static char log_path[600];

/* `gatelab CMD --help` as text (malloc'd). */
static char *help_of(const CliOpts *o) {
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

/* Whether o's table has an option called name (n bytes). */
static int in_table(const CliOpts *o, const char *name, size_t n) {
    for (int i = 0; o->opts[i].name; i++)
        if (strlen(o->opts[i].name) == n && !strncmp(o->opts[i].name, name, n)) return 1;
    return 0;
}

/* Every option of every table is in its command's --help. */
static void test_help_lists_every_option(void **state) {
    (void)state;
    for (int k = 0; cli_all_options[k]; k++) {
        const CliOpts *o = cli_all_options[k];
        char *help = help_of(o);
        for (int i = 0; o->opts[i].name; i++)
            if (strcmp(o->opts[i].name, "help") && !names_option(help, o->opts[i].name))
                fail_msg("gatelab %s --help does not list --%s", o->cmd, o->opts[i].name);
        free(help);
    }
}

/* Every --option a --help names is in that command's table. */
static void test_help_names_no_other_option(void **state) {
    (void)state;
    for (int k = 0; cli_all_options[k]; k++) {
        const CliOpts *o = cli_all_options[k];
        char *help = help_of(o);
        for (const char *p = help; (p = strstr(p, "--")); p += 2) {
            size_t n = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz0123456789-");
            if (n && !in_table(o, p + 2, n) && !(n == 7 && !strncmp(p + 2, "inspect", 7)))
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

/* The table commands print the compiled-in tables, take no arguments
 * (one line, exit 2), and their JSON lists every row. */
static void test_table_commands(void **state) {
    (void)state;
    assert_int_equal(tu_run(log_path, "variants"), 0);
    char *out = tu_slurp_ok(log_path, NULL);
    assert_non_null(strstr(out, "\ng1-mult-silu "));
    assert_non_null(strstr(out, "gate_pos=g1 gate_act=silu"));
    assert_non_null(strstr(out, "\nqk-norm "));
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
        cmocka_unit_test(test_table_commands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
