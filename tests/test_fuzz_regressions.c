/* test_fuzz_regressions.c: replay every input under
 * tests/fuzz/regressions/TARGET/ (inputs that once crashed a fuzz target,
 * see tests/fuzz/README.md) through the same entry functions the fuzzers
 * use, so the bugs stay fixed without clang (hftok's are replayed by
 * test_hf_tokenizer). Each file must run to the end
 * with no crash; the entry result (accepted or refused) is also checked
 * against the file name: names starting "ok-" must be accepted, all others
 * refused with an error. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
/* the entry functions are compiled into this test directly, so
 * tests/meson.build needs no extra source list */
#include "fuzz/fuzz_entry.c"
#include "fuzz/fuzz_entry_hf.c"
#include "fuzz/fuzz_entry_hfconfig.c"

typedef int (*Entry)(const uint8_t *, size_t);

/* Replay every regular file in tests/fuzz/regressions/NAME; returns how
 * many were replayed. */
static int replay_dir(const char *name, Entry fn) {
    char dir[1024], path[2048];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/regressions/%s", tu_src(), name);
    DIR *d = opendir(dir);
    if (!d) fail_msg("cannot open %s", dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "README")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len;
        char *b = tu_slurp(path, &len);
        if (!b) fail_msg("cannot read %s", path);
        int rc = fn((const uint8_t *)b, len);
        int want = strncmp(e->d_name, "ok-", 3) ? 1 : 0;
        if (rc != want)
            fail_msg("%s: entry returned %d, want %d (%s)", path, rc, want,
                     want ? "refused" : "accepted");
        free(b);
        n++;
    }
    closedir(d);
    return n;
}

static void test_config(void **s) {
    (void)s;
    assert_true(replay_dir("config", fuzz_config_one) >= 1);
}
static void test_sweepfile(void **s) {
    (void)s;
    assert_true(replay_dir("sweepfile", fuzz_sweepfile_one) >= 0);
}
static void test_runread(void **s) {
    (void)s;
    assert_true(replay_dir("runread", fuzz_runread_one) >= 1);
}
static void test_safetensors(void **s) {
    (void)s;
    assert_true(replay_dir("safetensors", fuzz_safetensors_one) >= 2);
}
static void test_tokens(void **s) {
    (void)s;
    assert_true(replay_dir("tokens", fuzz_tokens_one) >= 0);
}

static void test_protocol(void **s) {
    (void)s;
    assert_true(replay_dir("protocol", fuzz_protocol_one) >= 0);
}
static void test_hfconfig(void **s) {
    (void)s;
    assert_true(replay_dir("hfconfig", fuzz_hfconfig_one) >= 0);
}
static void test_tokenlines(void **s) {
    (void)s;
    assert_true(replay_dir("tokenlines", fuzz_tokenlines_one) >= 0);
}

static void test_runlock(void **s) {
    (void)s;
    assert_true(replay_dir("runlock", fuzz_runlock_one) >= 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config),      cmocka_unit_test(test_sweepfile),
        cmocka_unit_test(test_runread),     cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_safetensors), cmocka_unit_test(test_runlock),
        cmocka_unit_test(test_protocol),    cmocka_unit_test(test_hfconfig),
        cmocka_unit_test(test_tokenlines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
