/* test_prereg.c: the pieces of the pre-registration on hand-built inputs:
 * FNV-1a 64 against its published vectors, `seeds = LOW-HIGH`, the
 * quickstart as claims-bigram's arms on seeds that study does not declare,
 * the run list and pins a confirmatory sweep writes into protocol.ini and
 * reads back (protocol_pin.h), the refusal to replace a protocol.ini the
 * sweep did not write, and the report's checks of missing runs and changed
 * rules (protocol_check.h). tests/prereg.sh runs the same end to end in a
 * git repository. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "protocol.h"
#include "protocol_check.h"
#include "protocol_pin.h"
#include "sweep.h"
#include "testutil.h"
#include "util.h"

/* The FNV-1a 64 test vectors (Fowler, Noll, Vo; the IETF draft's table)
 * and the protocol hash's text form. */
static void test_fnv1a64_vectors(void **state) {
    (void)state;
    assert_true(fnv1a64(FNV1A64_OFFSET, "", 0) == 0xcbf29ce484222325ULL);
    assert_true(fnv1a64(FNV1A64_OFFSET, "a", 1) == 0xaf63dc4c8601ec8cULL);
    assert_true(fnv1a64(FNV1A64_OFFSET, "foobar", 6) == 0x85944171f73967e8ULL);
    /* continuing a hash is hashing the concatenation */
    assert_true(fnv1a64(fnv1a64(FNV1A64_OFFSET, "foo", 3), "bar", 3) ==
                fnv1a64(FNV1A64_OFFSET, "foobar", 6));
    char h[PROTOCOL_HASH_LEN];
    protocol_hash_text("a", 1, h);
    assert_string_equal(h, "fnv1a64:af63dc4c8601ec8c");
}

/* `seeds = 1001-1004,7` expands in order; a reversed or open range is
 * refused naming it. */
static void test_seed_ranges(void **state) {
    (void)state;
    tu_put("p.ini", "steps = 1\n");
    const char *sf = tu_put("r.sweep", "[sweep]\npreset = p\nseeds = 1001-1004,7\n[run a]\n");
    Sweep sw;
    char err[512] = "";
    if (sweep_parse(sf, &sw, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(sw.n_runs, 5);
    unsigned long long want[] = {1001, 1002, 1003, 1004, 7};
    for (int i = 0; i < 5; i++) assert_true(sw.runs[i].seed == want[i]);
    assert_int_equal(sw.n_files, 2); /* the sweep file, then its preset */
    assert_non_null(strstr(sw.files[1], "/p.ini"));
    sweep_free(&sw);
    const char *bad[] = {"5-3", "1-", "1-2-3", "1-3,2"};
    for (int i = 0; i < 4; i++) {
        char text[128];
        snprintf(text, sizeof text, "[sweep]\npreset = p\nseeds = %s\n[run a]\n", bad[i]);
        sf = tu_put("bad.sweep", text);
        assert_int_equal(sweep_parse(sf, &sw, err, sizeof err), -1);
        assert_non_null(strstr(err, "bad.sweep:3:"));
    }
}

/* The quickstart's runs are claims-bigram's arms of the same names, with
 * the same preset and settings in the same order, on seeds that study does
 * not declare: the same training, never a preview of the study
 * (tests/check_seeds.sh checks every sweep's seeds). */
static int is_seed_set(const char *s) {
    return !strncmp(s, "init_seed=", 10) || !strncmp(s, "data_seed=", 10);
}

static void test_quickstart_fresh(void **state) {
    (void)state;
    const char *src = getenv("GATELAB_SRC");
    if (!src) src = access("experiments/all.sweep", R_OK) == 0 ? "." : "../..";
    char path[600], err[512];
    Sweep ref, qs;
    snprintf(path, sizeof path, "%s/experiments/quickstart.sweep", src);
    if (sweep_parse(path, &qs, err, sizeof err)) fail_msg("%s", err);
    const Sweep *sw = &qs;
    snprintf(path, sizeof path, "%s/experiments/claims-bigram.sweep", src);
    if (sweep_parse(path, &ref, err, sizeof err)) fail_msg("%s", err);
    for (int r = 0; r < sw->n_runs; r++) {
        const SweepRun *q = &sw->runs[r], *c = NULL;
        for (int j = 0; j < ref.n_runs; j++) {
            if (ref.runs[j].seed == q->seed)
                fail_msg("quickstart seed %llu is claims-bigram's", q->seed);
            if (!c && !strcmp(ref.runs[j].name, q->name)) c = &ref.runs[j];
        }
        if (!c) fail_msg("quickstart arm %s is not in claims-bigram.sweep", q->name);
        char rq[PATH_MAX], rc[PATH_MAX];
        assert_non_null(realpath(q->preset, rq));
        assert_non_null(realpath(c->preset, rc));
        assert_string_equal(rq, rc);
        assert_int_equal(q->n_sets, c->n_sets);
        for (int k = 0; k < q->n_sets; k++)
            if (!is_seed_set(q->sets[k])) assert_string_equal(q->sets[k], c->sets[k]);
    }
    sweep_free(&ref);
    sweep_free(&qs);
}

/* protocol.ini holds the run list (names x seeds) and the pins, and reads
 * back; a second write replaces the sweep's own file; a file the sweep
 * did not write, or a symbolic link, is refused and left as it was. */
static void test_protocol_runs_and_refusals(void **state) {
    (void)state;
    tu_put("p.ini", "steps = 1\n");
    const char *sf =
        tu_put("pr.sweep", "[sweep]\npreset = p\nseeds = 3-4\n[primary]\nmetric = f_attn\n"
                           "test = f_attn welch\ncompare = b vs a\n[run a]\n[run b]\n");
    Sweep sw;
    char err[512] = "", out[600], pf[700];
    if (sweep_parse(sf, &sw, err, sizeof err)) fail_msg("%s", err);
    SweepSource src;
    sweep_source(&sw, &src);
    snprintf(out, sizeof out, "%s/out", tu_scratch);
    assert_int_equal(mkdir(out, 0755), 0);
    for (int k = 0; k < 2; k++)
        if (sweep_write_protocol(&sw, &src, out, NULL, err, sizeof err)) fail_msg("%s", err);
    snprintf(pf, sizeof pf, "%s/protocol.ini", out);
    ProtocolPin p;
    if (pin_read(pf, NULL, &p, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(p.n_runs, 4);
    assert_string_equal(p.runs[0].name, "a");
    assert_true(p.runs[1].seed == 4);
    assert_string_equal(p.runs[3].name, "b");
    assert_int_equal(p.n_files, 2);
    assert_string_equal(p.primary, "metric = f_attn\ntest = f_attn welch\ncompare = b vs a\n");
    char rules[160];
    pin_rules(rules, sizeof rules);
    assert_string_equal(p.rules, rules);
    pin_free(&p);
    tu_put("out/protocol.ini", "[primary]\nmetric = f_attn\n");
    assert_int_equal(sweep_write_protocol(&sw, &src, out, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "was not written by gatelab sweep"));
    assert_int_equal(unlink(pf), 0);
    const char *target = tu_put("mine.ini", "# the [primary] section of a user's own\n");
    assert_int_equal(symlink(target, pf), 0);
    assert_int_equal(sweep_write_protocol(&sw, &src, out, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "is a symbolic link"));
    sweep_source_free(&src);
    sweep_free(&sw);
}

/* A rerun by another build keeps the protocol file (and so the hash its
 * runs recorded); any other difference rewrites it. */
static void test_protocol_kept_across_builds(void **state) {
    (void)state;
    tu_put("p.ini", "steps = 1\n");
    const char *sf = tu_put("k.sweep", "[sweep]\npreset = p\n[primary]\nmetric = f_attn\n"
                                       "test = f_attn welch\ncompare = b vs a\n[run a]\n[run b]\n");
    Sweep sw;
    SweepSource src;
    char err[512] = "", pf[600], *text;
    if (sweep_parse(sf, &sw, err, sizeof err)) fail_msg("%s", err);
    sweep_source(&sw, &src);
    if (sweep_write_protocol(&sw, &src, tu_scratch, NULL, err, sizeof err)) fail_msg("%s", err);
    snprintf(pf, sizeof pf, "%s/protocol.ini", tu_scratch);
    size_t len;
    assert_non_null(text = input_slurp(pf, 1 << 20, &len, err, sizeof err));
    char *at = strstr(text, "\ngatelab = ");
    assert_non_null(at);
    memcpy(at + 11, "OTHER", 5); /* another build's version */
    tu_put("protocol.ini", text);
    if (sweep_write_protocol(&sw, &src, tu_scratch, NULL, err, sizeof err)) fail_msg("%s", err);
    char *again = input_slurp(pf, 1 << 20, &len, err, sizeof err);
    assert_string_equal(again, text);
    free(again);
    char edited[8192];
    snprintf(edited, sizeof edited, "%s; an edit\n", text);
    tu_put("protocol.ini", edited);
    if (sweep_write_protocol(&sw, &src, tu_scratch, NULL, err, sizeof err)) fail_msg("%s", err);
    assert_non_null(again = input_slurp(pf, 1 << 20, &len, err, sizeof err));
    assert_null(strstr(again, "; an edit"));
    assert_null(strstr(again, "OTHER"));
    free(again);
    free(text);
    sweep_source_free(&src);
    sweep_free(&sw);
}

/* The report's checks: a declared run without its file is named; a
 * protocol that pins other rules says so; both make it not declared. */
static void test_status_missing_and_rules(void **state) {
    (void)state;
    char rules[160], text[1024];
    pin_rules(rules, sizeof rules);
    const char *fmt = "# the [primary] section of x\n[primary]\nmetric = f_attn\n[source]\n"
                      "sweep_file = x\nsweep_commit = none\nsweep_dirty = 0\nuncommitted = 0\n"
                      "[pin]\nrepo =\nrules = %s\n[runs]\nrun = a 1 2\nrun = b 1 2\n";
    snprintf(text, sizeof text, fmt, rules);
    const char *pf = tu_put("protocol.ini", text);
    Row rows[3];
    memset(rows, 0, sizeof rows);
    const char *names[] = {"a_s1.h5", "a_s2.h5", "b_s1.h5"};
    for (int i = 0; i < 3; i++) rows[i].file = names[i], rows[i].ok = 1;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(protocol_status(f, pf, rows, 3), 0);
    fclose(f);
    assert_non_null(strstr(buf, "**1 of 4 declared runs are missing**: `b_s2.h5`."));
    assert_non_null(strstr(buf, "The protocol pins the rules this build applies"));
    assert_non_null(strstr(buf, "**not checked against git**"));
    free(buf);
    snprintf(text, sizeof text, fmt, "confirm-rules 1, alpha 0.6");
    pf = tu_put("protocol.ini", text);
    f = open_memstream(&buf, &len);
    protocol_status(f, pf, rows, 3);
    fclose(f);
    assert_non_null(strstr(buf, "**the rules differ**: the protocol pins \"confirm-rules 1, "
                                "alpha 0.6\""));
    free(buf);
}

/* The seeds of run name in sw. */
static int seeds_of(const Sweep *sw, const char *name) {
    int k = 0;
    for (int r = 0; r < sw->n_runs; r++) k += !strcmp(sw->runs[r].name, name);
    return k;
}

/* The smallest p an exact test of metric m can reach over n pairs (0:
 * none), one-sided or not. */
static double floor_of(const Protocol *p, ProtoMetric m, int n, int one) {
    return p->test[m] == PT_WILCOXON ? (one ? 1 : 2) * pow(0.5, n) : 0;
}

/* No test a confirmatory sweep declares is one that cannot reject by
 * design: each exact test's smallest attainable p, with the sweep's seeds
 * (an interaction's: the fewest of its four arms), is at or below 0.05 /
 * (its family's size), so Holm can reach it and Tarone's rule leaves
 * nothing out. */
static void check_families_reach(const Sweep *sw, const char *name) {
    char path[] = "/tmp/gatelab-proto-XXXXXX", err[512];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "[primary]\n%s", sw->protocol);
    fclose(f);
    for (int sec = 0; sec < 2; sec++) {
        Protocol p;
        int rc = protocol_read_family(path, sec, &p, err, sizeof err);
        if (rc == 1) continue;
        if (rc) fail_msg("%s: %s", name, err);
        int k = 0, crossed = sec ? p.n_compares * p.n_metrics : 0, tests = crossed + p.n_inter;
        for (int j = 0; !sec && j < p.n_claims; j++) tests += p.claims[j].rel != PR_EQUIV;
        for (int j = 0; j < (sec ? crossed : p.n_claims); j++) {
            int c = sec ? j / p.n_metrics : p.claims[j].compare;
            ProtoMetric m = sec ? p.metrics[j % p.n_metrics] : p.claims[j].metric;
            if (!sec && p.claims[j].rel == PR_EQUIV) continue;
            const char *arm = c >= 0 ? p.compares[c].arm : p.claims[j].arm;
            int n = seeds_of(sw, arm), one = !sec && p.claims[j].one_sided;
            one |= !sec && p.claims[j].rel == PR_SINK_FREE;
            if (!(floor_of(&p, m, n, one) <= 0.05 / tests))
                fail_msg("%s: test %d of %d cannot reach 0.05 / %d with %d seeds", name, ++k, tests,
                         tests, n);
        }
        for (int j = 0; j < p.n_inter; j++) {
            const ProtoInteraction *x = &p.inter[j];
            const char *arms[4] = {x->arm2, x->ref2, x->arm1, x->ref1};
            int n = seeds_of(sw, arms[0]);
            for (int a = 1; a < 4; a++) n = seeds_of(sw, arms[a]) < n ? seeds_of(sw, arms[a]) : n;
            if (!(floor_of(&p, x->metric, n, x->side != 0) <= 0.05 / tests))
                fail_msg("%s: interaction %d cannot reach 0.05 / %d with %d seeds", name, j + 1,
                         tests, n);
        }
    }
    unlink(path);
}

/* Every confirmatory sweep file of experiments/ (those with [primary])
 * declares only tests that can reach their family's Holm bound. */
static void test_claims_families_reach(void **state) {
    (void)state;
    const char *src = getenv("GATELAB_SRC");
    if (!src) src = access("experiments/all.sweep", R_OK) == 0 ? "." : "../..";
    static const char *const files[] = {"claims-brown",     "claims-length",  "claims-bigram",
                                        "claims-stability", "claims-longctx", "claims-nonlin",
                                        "quickstart"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[600], err[512];
        snprintf(path, sizeof path, "%s/experiments/%s.sweep", src, files[i]);
        Sweep sw;
        if (sweep_parse(path, &sw, err, sizeof err)) fail_msg("%s", err);
        if (!sw.protocol) fail_msg("%s declares no [primary]", files[i]);
        check_families_reach(&sw, files[i]);
        sweep_free(&sw);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fnv1a64_vectors),
        cmocka_unit_test_setup_teardown(test_seed_ranges, tu_scratch_setup, tu_scratch_teardown),
        cmocka_unit_test(test_quickstart_fresh),
        cmocka_unit_test(test_claims_families_reach),
        cmocka_unit_test_setup_teardown(test_protocol_runs_and_refusals, tu_scratch_setup,
                                        tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_protocol_kept_across_builds, tu_scratch_setup,
                                        tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_status_missing_and_rules, tu_scratch_setup,
                                        tu_scratch_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
