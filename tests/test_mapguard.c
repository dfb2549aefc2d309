/* test_mapguard.c: weights read through mmap, changed under the reader.
 * - a model.safetensors truncated after the model was opened: the forward
 *   pass, in a child, ends with exit 1 and one line naming the file (not
 *   a silent death by SIGBUS);
 * - a file rewritten in place (same size, new content) after mapping:
 *   mapguard_check names it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hf_model.h"
#include "mapguard.h"
#include "testutil.h"

static void test_truncated_under_forward(void **st) {
    (void)st;
    const char *d = tu_tmpdir();
    tu_hf_fixture(d, "llama-f32", "config.json");
    tu_hf_fixture(d, "llama-f32", "model.safetensors");
    char weights[1100], log[1100];
    snprintf(weights, sizeof weights, "%s/model.safetensors", d);
    snprintf(log, sizeof log, "%s/child.err", d);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        HfModel *m = NULL;
        char err[512];
        if (hf_model_open(&m, d, 1, err, sizeof err) < 0) _exit(90);
        if (truncate(weights, 0) != 0) _exit(91);
        int32_t ids[4] = {1, 2, 3, 4};
        HfRun run = {.M = 4};
        hf_model_forward(m, ids, 4, &run, err, sizeof err);
        _exit(92); /* the weights cannot have been read */
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) fail_msg("the child died of signal %d", WTERMSIG(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    tu_assert_one_line(log, "model.safetensors was truncated or changed", NULL);
}

static void test_rewritten_in_place(void **st) {
    (void)st;
    const char *d = tu_tmpdir();
    char path[1100], err[512] = "";
    snprintf(path, sizeof path, "%s/w.bin", d);
    tu_write_text(path, "0123456789abcdef");
    int fd = open(path, O_RDONLY);
    struct stat s;
    assert_int_equal(fstat(fd, &s), 0);
    void *m = mmap(NULL, 16, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    assert_true(m != MAP_FAILED);
    assert_int_equal(mapguard_add(m, 16, path, &s), 0);
    assert_int_equal(mapguard_check(err, sizeof err), 0);
    usleep(20000); /* a later modification time than the mapping's */
    tu_write_text(path, "fedcba9876543210");
    assert_int_equal(mapguard_check(err, sizeof err), -1);
    assert_non_null(strstr(err, "w.bin changed while being read"));
    mapguard_remove(m);
    munmap(m, 16);
    assert_int_equal(mapguard_check(err, sizeof err), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncated_under_forward),
        cmocka_unit_test(test_rewritten_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
