/* test_experiments.c: every sweep file of experiments/ parses, expands to
 * the runs it is meant to have, names only catalog variants, and the
 * reference, stability and all sweeps keep their special shapes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "sweep.h"
#include "testutil.h"

static int in_catalog(const char *id) {
    for (int i = 0; variant_id_at(i); i++)
        if (!strcmp(variant_id_at(i), id)) return 1;
    return 0;
}

/* How many of the sweep's runs carry the setting `set` (e.g. "variant=fox"). */
static int runs_with(const Sweep *sw, const char *set) {
    int n = 0;
    for (int r = 0; r < sw->n_runs; r++)
        for (int k = 0; k < sw->runs[r].n_sets; k++) n += !strcmp(sw->runs[r].sets[k], set);
    return n;
}

/* reference.sweep runs every catalog id (the distinct mechanisms) with
 * five seeds each. */
static void check_reference(const Sweep *sw) {
    int ids = 0;
    for (int i = 0; variant_id_at(i); i++, ids++) {
        char set[96];
        snprintf(set, sizeof set, "variant=%s", variant_id_at(i));
        if (runs_with(sw, set) != 5)
            fail_msg("reference: %s runs %d times, want 5 seeds", variant_id_at(i),
                     runs_with(sw, set));
    }
    assert_true(ids >= 30);
    assert_int_equal(sw->n_runs, 5 * ids);
}

/* stability.sweep: 1-8x lr with clipping and without (grad_clip = 0). */
static void check_stability(const Sweep *sw) {
    assert_int_equal(runs_with(sw, "grad_clip=0"), 60);
    assert_int_equal(runs_with(sw, "lr=8e-2"), 30);
    /* every lr is explicit: small.ini's default is 4e-2, the multiples are of 1e-2 */
    assert_int_equal(runs_with(sw, "lr=1e-2"), 30);
}

static void test_experiments(void **state) {
    (void)state;
    /* meson sets GATELAB_SRC; by hand, run from the repo root or build/tests */
    const char *src = getenv("GATELAB_SRC");
    if (!src) src = access("experiments/all.sweep", R_OK) == 0 ? "." : "../..";
    struct {
        const char *file;
        int runs;
    } want[] = {
        /* runs x seeds: three seeds on the paper sweeps, two on Brown,
         * five on the reference, natural-text and stability sweeps */
        {"gate-positions", 45},   {"nonlinearity", 15},   {"sparsity", 21},
        {"sink-remedies", 30},    {"stability", 120},     {"long-context", 15},
        {"quickstart", 16},       {"brown", 10},          {"tiny-test", 4},
        {"test-mpi", 3},          {"all", 325},           {"headline", 6},
        {"reference", 205},       {"natural", 35},        {"confirm-bigram", 100},
        {"confirm-natural", 100}, {"lr-sensitivity", 84}, {"claims-brown", 120},
        {"claims-length", 200},   {"claims-bigram", 100}, {"claims-stability", 225},
        {"claims-longctx", 40},   {"claims-nonlin", 420},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char p[600], err[512];
        snprintf(p, sizeof p, "%s/experiments/%s.sweep", src, want[i].file);
        Sweep sw;
        if (sweep_parse(p, &sw, err, sizeof err)) fail_msg("%s", err);
        if (sw.n_runs != want[i].runs)
            fail_msg("%s: %d runs, want %d", want[i].file, sw.n_runs, want[i].runs);
        for (int r = 0; r < sw.n_runs; r++)
            for (int k = 0; k < sw.runs[r].n_sets; k++)
                if (!strncmp(sw.runs[r].sets[k], "variant=", 8) &&
                    !in_catalog(sw.runs[r].sets[k] + 8))
                    fail_msg("%s: %s: unknown variant %s", want[i].file, sw.runs[r].id,
                             sw.runs[r].sets[k] + 8);
        if (!strcmp(want[i].file, "reference")) check_reference(&sw);
        if (!strcmp(want[i].file, "stability")) check_stability(&sw);
        if (!strcmp(want[i].file, "all")) {
            /* only long-context.sweep's runs (baseline, g1-elem, g1-head on
             * bigram x 5 seeds) are evaluated, not all 325 */
            int ne = 0;
            for (int r = 0; r < sw.n_runs; r++) {
                const char *e = sw.runs[r].eval_lengths, *nm = sw.runs[r].name;
                if (!e[0]) continue;
                ne++;
                assert_string_equal(e, "1x,2x,4x,8x");
                if (strcmp(nm, "baseline") && strcmp(nm, "g1-elem") && strcmp(nm, "g1-head"))
                    fail_msg("all: %s carries eval_lengths", sw.runs[r].id);
            }
            assert_int_equal(ne, 15);
        }
        sweep_free(&sw);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_experiments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
