/* test_bounded.c: inputs cost what they are used for, with a clear limit.
 * - `inspect --text` encodes only as much of the file as its windows use:
 *   64 MB of text without a space (one pre-token) is probed in bounded
 *   memory (never the whole file);
 * - sweep includes: 25 chained files, each including the next twice under
 *   two spellings, are each read once (not 2^25 parses);
 * - grid expansion is linear and capped: 64,000 runs list at once, 70,400
 *   are refused with the limit named;
 * - config.json sizes: 2048 heads x head_dim 2^20 is refused in one line
 *   naming the product (never an int overflow). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "testutil.h"

static char dir[64];

static int setup(void **st) {
    (void)st;
    snprintf(dir, sizeof dir, "%s", tu_tmpdir());
    return 0;
}

static int teardown(void **st) {
    (void)st;
    return tu_rmtree(dir);
}

/* `timeout 60 gatelab ARGS` with output into dir/out.txt; the exit code
 * (124: it did not finish within the minute). */
static int run_bounded(const char *args) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && timeout 60 '%s' %s >'%s/out.txt' 2>&1", dir, tu_bin(),
             args, dir);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A fresh model directory dir/name (path into m[n]). */
static void model_dir(char *m, size_t n, const char *name) {
    snprintf(m, n, "%s/%s", dir, name);
    assert_int_equal(mkdir(m, 0755), 0);
}

/* A byte-level BPE tokenizer.json with h e l o and one merge "l l". */
static const char *TOKJSON =
    "{\"version\": \"1.0\", \"added_tokens\": [], \"normalizer\": null, \"pre_tokenizer\": "
    "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, "
    "\"use_regex\": true}, \"post_processor\": null, \"decoder\": null, \"model\": {\"type\": "
    "\"BPE\", \"dropout\": null, \"unk_token\": null, \"fuse_unk\": false, \"byte_fallback\": "
    "false, \"vocab\": {\"h\": 1, \"e\": 2, \"l\": 3, \"o\": 4, \"ll\": 9}, \"merges\": "
    "[\"l l\"]}}";

static void test_text_bounded(void **st) {
    (void)st;
    char m[1100], path[1200], args[3000];
    model_dir(m, sizeof m, "model");
    tu_hf_fixture(m, "gpt2-f32", "config.json");
    tu_hf_fixture(m, "gpt2-f32", "model.safetensors");
    snprintf(path, sizeof path, "%s/tokenizer.json", m);
    tu_write_text(path, TOKJSON);
    snprintf(path, sizeof path, "%s/big.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < (64 << 20) / 5; i++) fputs("hello", f);
    assert_int_equal(fclose(f), 0);
    snprintf(args, sizeof args, "inspect %s --text %s --seq-len 8 --n-seq 2 --out %s/t.h5 --quiet",
             m, path, dir);
    assert_int_equal(run_bounded(args), 0);
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    /* the model and a few windows: below the text's own 64 MB (the process
     * alone is about 25 MB, about 50 under the sanitizers), so a program
     * that held the text whole would pass 64 MB */
    if (ru.ru_maxrss > 60 * 1024) fail_msg("peak RSS %ld KiB for 16 tokens", ru.ru_maxrss);
}

static void test_sweep_includes_once(void **st) {
    (void)st;
    char path[1200];
    for (int i = 0; i < 25; i++) {
        snprintf(path, sizeof path, "%s/f%d.sweep", dir, i);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "[sweep]\npreset = %s/experiments/tiny.ini\n", tu_src());
        if (i < 24) fprintf(f, "include = f%d.sweep\ninclude = ./f%d.sweep\n", i + 1, i + 1);
        fprintf(f, "[run r%d]\nvariant = baseline\n", i);
        assert_int_equal(fclose(f), 0);
    }
    assert_int_equal(run_bounded("sweep f0.sweep --list"), 0);
    char out[1200];
    snprintf(out, sizeof out, "%s/out.txt", dir);
    assert_int_equal(tu_count_lines(out), 25);
}

/* A sweep of runs [run r0..r(n-1)] x 64 seeds. */
static void grid(const char *name, int runs) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "[sweep]\npreset = %s/experiments/tiny.ini\nseeds = 1", tu_src());
    for (int s = 2; s <= 64; s++) fprintf(f, ",%d", s);
    fputc('\n', f);
    for (int i = 0; i < runs; i++) fprintf(f, "[run r%d]\nvariant = baseline\n", i);
    assert_int_equal(fclose(f), 0);
}

static void test_grid_capped(void **st) {
    (void)st;
    char out[1200];
    snprintf(out, sizeof out, "%s/out.txt", dir);
    grid("big.sweep", 1000);
    assert_int_equal(run_bounded("sweep big.sweep --list"), 0);
    assert_int_equal(tu_count_lines(out), 64000);
    grid("huge.sweep", 1100);
    assert_int_equal(run_bounded("sweep huge.sweep --list"), 2);
    tu_assert_one_line(out, "more than 65536 runs", NULL);
}

static void test_config_sizes(void **st) {
    (void)st;
    char m[1100], path[1200], args[3000];
    model_dir(m, sizeof m, "wide");
    tu_hf_fixture(m, "llama-f32", "model.safetensors");
    snprintf(path, sizeof path, "%s/config.json", m);
    tu_write_text(path, "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", "
                        "\"hidden_size\": 32, \"num_hidden_layers\": 2, "
                        "\"num_attention_heads\": 2048, \"num_key_value_heads\": 2048, "
                        "\"head_dim\": 1048576, \"intermediate_size\": 64, \"vocab_size\": 64, "
                        "\"rope_theta\": 10000.0}");
    snprintf(path, sizeof path, "%s/ids.txt", dir);
    tu_write_text(path, "1 2 3 4\n");
    snprintf(args, sizeof args, "inspect %s --tokens %s --out %s/w.h5", m, path, dir);
    assert_int_equal(run_bounded(args), 2);
    char out[1200];
    snprintf(out, sizeof out, "%s/out.txt", dir);
    tu_assert_one_line(out, "2048 heads x head_dim 1048576", NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_bounded),
        cmocka_unit_test(test_sweep_includes_once),
        cmocka_unit_test(test_grid_capped),
        cmocka_unit_test(test_config_sizes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
