/* test_hf_inspect_cli.c: gatelab inspect end to end on the Hugging Face
 * fixtures (tests/reference/hf/<name>/): the run file it writes against
 * PyTorch's expected.h5 and read by every analysis command, bad input
 * giving one line and exit 2, --text through a tokenizer.json,
 * interventions on the inspected run against PyTorch
 * (tests/reference/make_hf_intervene_fixture.py) within 1e-4, and a
 * config.json with sliding attention: each layer masked and recorded by
 * its own window. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forward_open.h"
#include "hf_inspect_fixture.h"
#include "intervene.h"
#include "metrics.h"
#include "runfile_read.h"
#include "runstats.h"
#include "testutil.h"

/* ---- the command: run file, analysis tools, bad input ---- */

/* The probe of run, whose windows are two copies of PyTorch's window
 * (maps kept for the first M positions), against expected.h5's attention
 * (att), gates and hidden (nh values): the first-token column, the maps,
 * the non-empty rows' first-token share, the gate means and max |h|. */
static void check_probe(const char *run, int T, int M, const float *att, const float *gates,
                        const float *hid, size_t nh) {
    char err[512];
    RunReader *r = runread_open(run, err, sizeof err);
    if (!r) fail_msg("%s", err);
    assert_string_equal(runread_meta(r)->variant, "pretrained:Qwen3ForCausalLM:gate-elementwise");
    ProbeRecord p;
    if (runread_probe(r, -1, &p, err, sizeof err) < 0) fail_msg("%s", err);
    assert_int_equal(p.N, 2), assert_int_equal(p.T, T), assert_int_equal(p.M, M);
    assert_int_equal(p.gate_channels, p.H * 8), assert_int_equal(p.gate_heads, p.H);
    for (int l = 0; l < p.L; l++)
        for (int h = 0; h < p.H; h++) {
            const float *A = att + ((size_t)l * p.H + h) * T * T;
            for (int t = 0; t < T; t++) /* full first-token column of both windows */
                for (int n = 0; n < 2; n++)
                    assert_true(fabs(p.first_col[(((size_t)n * p.L + l) * p.H + h) * T + t] -
                                     A[(size_t)t * T]) < HF_TOL);
            for (int t = 0; t < M; t++) /* maps of the first M positions */
                for (int k = 0; k < M; k++)
                    assert_true(fabs(p.attention[(((size_t)l * p.H + h) * M + t) * M + k] -
                                     A[(size_t)t * T + k]) < HF_TOL);
        }
    /* T > M: the non-empty rows' first-token share comes from the full
     * first column, so for softmax it is F-Attn itself */
    assert_non_null(p.row_empty), assert_non_null(p.first_nonempty);
    for (int lh = 0; lh < p.L * p.H; lh++) {
        const float *A = att + (size_t)lh * T * T;
        double share = 0;
        for (int t = 1; t < T; t++) share += A[(size_t)t * T];
        assert_true(p.row_empty[lh] == 0.0f);
        assert_true(fabs(p.first_nonempty[lh] - share / (T - 1)) < HF_TOL);
    }
    double empty, f_ne;
    rs_mass(&p, &empty, &f_ne);
    assert_true(empty == 0.0);
    assert_true(fabs(f_ne - rs_share(&p, -1)) < 1e-6);
    for (int l = 0; l < p.L; l++) {
        double gmean = 0, hmax = 0;
        for (size_t i = 0; i < (size_t)T * p.gate_channels; i++)
            gmean += gates[(size_t)l * T * p.gate_channels + i];
        gmean /= (double)T * p.gate_channels;
        hmax = abs_max(hid + (size_t)l * nh / p.L, nh / p.L);
        assert_true(fabs(p.gate_stats[l * 4] - gmean) < HF_TOL);
        assert_true(fabs(p.h_max[l] - hmax) < HF_TOL * (1 + hmax));
    }
    runread_probe_free(&p);
    runread_close(r);
}

/* Every analysis command reads run (output into log), and the report over
 * its directory d lists it among the pretrained models. */
static void check_commands(const char *d, const char *run, const char *log) {
    const char *cmds[] = {"sinks %s",
                          "sinks --json %s",
                          "gates %s",
                          "acts %s",
                          "heatmap %s --out %s.png",
                          "plot first-share %s --out %s.fs.png",
                          "plot gate-hist %s --out %s.gh.png",
                          "plot mact %s --out %s.ma.png"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, cmds[i], run, run);
        if (tu_run(log, "%s", cmd) != 0) fail_msg("gatelab %s failed", cmd);
    }
    assert_int_equal(tu_run(log, "sinks %s", run), 0);
    char *sinks = tu_slurp_ok(log, NULL);
    assert_null(strstr(sinks, "not stored")), assert_null(strstr(sinks, "older file"));
    free(sinks);
    assert_int_equal(tu_run(log, "report %s --out %s/rep", d, d), 0);
    char md[1100];
    snprintf(md, sizeof md, "%s/rep/REPORT.md", d);
    char *rep = tu_slurp(md, NULL);
    assert_non_null(rep);
    assert_non_null(strstr(rep, "## Pretrained models"));
    assert_non_null(strstr(rep, "| run.h5 | Qwen3ForCausalLM | elementwise | F32 |"));
    free(rep);
}

/* inspect of the elementwise-gated Qwen3 fixture's window, twice: its run
 * file against PyTorch, its provenance, and every command that reads it. */
static void test_cli_runfile(void **s) {
    (void)s;
    char d[1024];
    snprintf(d, sizeof d, "%s", tu_tmpdir());
    char fix[2048], exp[2100], ids[2048], run[2048], log[2048];
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/qwen3-elementwise-f32-sharded", tu_src());
    snprintf(exp, sizeof exp, "%s/expected.h5", fix);
    hid_t f = H5Fopen(exp, H5F_ACC_RDONLY, H5P_DEFAULT);
    size_t nt, na, ng, nh;
    int32_t *tok = tu_h5_read_opt(f, "tokens", H5T_NATIVE_INT32, 4, &nt);
    float *att = tu_h5_read_opt(f, "attention", H5T_NATIVE_FLOAT, 4, &na);
    float *gates = tu_h5_read_opt(f, "gates", H5T_NATIVE_FLOAT, 4, &ng);
    float *hid = tu_h5_read_opt(f, "hidden", H5T_NATIVE_FLOAT, 4, &nh);
    H5Fclose(f);
    const int T = (int)nt, M = 4;
    snprintf(ids, sizeof ids, "%s/ids.txt", d);
    snprintf(run, sizeof run, "%s/run.h5", d);
    snprintf(log, sizeof log, "%s/log", d);
    hf_write_tokens(ids, tok, T, 2); /* two identical windows: means = the window */
    assert_int_equal(
        tu_run(log, "inspect %s --tokens %s --out %s --maps-len %d --threads 2", fix, ids, run, M),
        0);
    check_probe(run, T, M, att, gates, hid, nh);
    /* the provenance */
    f = H5Fopen(run, H5F_ACC_RDONLY, H5P_DEFAULT);
    size_t nf;
    int32_t *first = tu_h5_read_opt(f, "pretrained/first_token", H5T_NATIVE_INT32, 4, &nf);
    assert_int_equal(nf, 2), assert_int_equal(first[0], tok[0]);
    assert_true(H5Aexists_by_name(f, "pretrained", "config_json", H5P_DEFAULT) > 0);
    assert_true(H5Aexists_by_name(f, "pretrained", "architecture", H5P_DEFAULT) > 0);
    H5Fclose(f);
    check_commands(d, run, log);
    free(first), free(tok), free(att), free(gates), free(hid);
}

/* Bad input to the command: exit 2, one line naming the problem. */
static void expect_cli(const char *args, const char *needle) {
    char log[2048];
    snprintf(log, sizeof log, "%s/log", tu_tmpdir());
    int rc = tu_run(log, "%s", args);
    char *out = tu_slurp(log, NULL);
    if (rc != 2 || !out || !strstr(out, needle))
        fail_msg("gatelab %s: exit %d, output '%s', want 2 and '%s'", args, rc, out ? out : "",
                 needle);
    assert_int_equal(tu_count_lines(log), 1);
    free(out);
}

static void test_cli_bad(void **s) {
    (void)s;
    char d[1024], fix[2048], a[8192], ids[2048];
    snprintf(d, sizeof d, "%s", tu_tmpdir()); /* tu_tmpdir's buffer is reused */
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/gpt2-f32", tu_src());
    snprintf(ids, sizeof ids, "%s/ids.txt", d);
    tu_write_file(ids, "1 2 3\n4 x 6\n", 12);
    snprintf(a, sizeof a, "inspect %s --tokens %s --out %s/o.h5", fix, ids, d);
    expect_cli(a, "ids.txt:2: \"x\" is not a token id");
    tu_write_file(ids, "1 2 3\n4 5 999\n", 14);
    expect_cli(a, "ids.txt:2: token id 999 is out of range [0, 128)");
    tu_write_file(ids, "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n", 42);
    expect_cli(a, "windows of 17 tokens exceed the model's 16 positions");
    tu_write_file(ids, "7\n", 2);
    expect_cli(a, "too short");
    tu_write_file(ids, "1 2 3\n", 6);
    snprintf(a, sizeof a, "inspect %s --tokens %s", fix, ids);
    expect_cli(a, "no --out");
    snprintf(a, sizeof a, "inspect %s --text %s --out %s/o.h5", fix, ids, d);
    expect_cli(a, "tokenizer");
    snprintf(a, sizeof a, "inspect %s/nonexistent --tokens %s --out %s/o.h5", d, ids, d);
    expect_cli(a, "config.json");
    snprintf(a, sizeof a, "inspect %s --tokens %s --out %s/o.h5 --bos maybe", fix, ids, d);
    expect_cli(a, "--bos 'maybe'");
    snprintf(a, sizeof a, "inspect %s --tokens %s --out %s/ids.txt", fix, ids, d);
    expect_cli(a, "exists");
    char *still = tu_slurp(ids, NULL); /* not overwritten */
    assert_string_equal(still, "1 2 3\n");
    free(still);
}

/* --text through a hand-written byte-level BPE tokenizer.json (vocab of 10,
 * one merge): the windows hold the ids worked out by hand. */
static const char *TOKJSON =
    "{\"version\": \"1.0\", \"added_tokens\": [{\"id\": 10, \"content\": \"<|endoftext|>\", "
    "\"single_word\": false, \"lstrip\": false, \"rstrip\": false, \"normalized\": false, "
    "\"special\": true}], \"normalizer\": null, \"pre_tokenizer\": {\"type\": \"ByteLevel\", "
    "\"add_prefix_space\": false, \"trim_offsets\": true, \"use_regex\": true}, "
    "\"post_processor\": null, \"decoder\": null, \"model\": {\"type\": \"BPE\", \"dropout\": "
    "null, \"unk_token\": null, \"fuse_unk\": false, \"byte_fallback\": false, \"vocab\": "
    "{\"h\": 1, \"e\": 2, \"l\": 3, \"o\": 4, \"\\u0120\": 5, \"w\": 6, \"r\": 7, \"d\": 8, "
    "\"ll\": 9, \"<|endoftext|>\": 10}, \"merges\": [\"l l\"]}}";

static void check_tokens(const char *run, const int *want, int n) {
    char err[512];
    RunReader *r = runread_open(run, err, sizeof err);
    if (!r) fail_msg("%s", err);
    ProbeRecord p;
    if (runread_probe(r, -1, &p, err, sizeof err) < 0) fail_msg("%s", err);
    assert_int_equal(p.N * p.T, n);
    for (int i = 0; i < n; i++) assert_int_equal(p.tokens[i], want[i]);
    runread_probe_free(&p);
    runread_close(r);
}

static void test_cli_text(void **s) {
    (void)s;
    char d[1024], path[1200], log[1200], fix[2048];
    snprintf(d, sizeof d, "%s", tu_tmpdir());
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/gpt2-f32", tu_src());
    const char *names[2] = {"config.json", "model.safetensors"};
    for (int i = 0; i < 2; i++) {
        char src[2200];
        size_t n;
        snprintf(src, sizeof src, "%s/%s", fix, names[i]);
        snprintf(path, sizeof path, "%s/%s", d, names[i]);
        char *b = tu_slurp(src, &n);
        assert_non_null(b);
        tu_write_file(path, b, n);
        free(b);
    }
    snprintf(path, sizeof path, "%s/tokenizer.json", d);
    tu_write_file(path, TOKJSON, strlen(TOKJSON));
    snprintf(path, sizeof path, "%s/t.txt", d);
    tu_write_file(path, "hello world hello world hello world", 35);
    snprintf(log, sizeof log, "%s/log", d);
    /* h e ll o | Ġ w o r l d | ...: 1 2 9 4 5 6 4 7 3 8 5 1 2 9 4 5 */
    static const int no_bos[16] = {1, 2, 9, 4, 5, 6, 4, 7, 3, 8, 5, 1, 2, 9, 4, 5};
    assert_int_equal(
        tu_run(log, "inspect %s --text %s --seq-len 8 --n-seq 2 --out %s/a.h5", d, path, d), 0);
    snprintf(path, sizeof path, "%s/a.h5", d);
    check_tokens(path, no_bos, 16);
    /* --bos yes: the tokenizer adds none, so config.json's bos_token_id 0 */
    static const int bos[16] = {0, 1, 2, 9, 4, 5, 6, 4, 0, 7, 3, 8, 5, 1, 2, 9};
    assert_int_equal(tu_run(log,
                            "inspect %s --text %s/t.txt --seq-len 8 --n-seq 2 --bos yes "
                            "--out %s/b.h5",
                            d, d, d),
                     0);
    snprintf(path, sizeof path, "%s/b.h5", d);
    check_tokens(path, bos, 16);
}

/* ---- interventions on an inspected checkpoint ---- */

/* head-zero of heads 0.1 and 1.0, gates-open-layer, gate-const 0.5 and
 * mact-zero/-mean in layer 0 (massive: above 3 x the median |h|) through
 * the checkpoint's Forward against the losses of
 * make_hf_intervene_fixture.py (the same forward with o_proj's columns of
 * those heads zeroed, layer 0's gates 1, every gate 0.5, layer 0's
 * residual changed). */
static void check_more_kinds(const char *name, const char *run, const char *fixture) {
    char err[512];
    hid_t f = H5Fopen(fixture, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    double want[5] = {tu_h5_attr(f, "loss_head_zero"), tu_h5_attr(f, "loss_gates_open_layer0"),
                      tu_h5_attr(f, "loss_gate_const"), tu_h5_attr(f, "loss_mact_zero_layer0"),
                      tu_h5_attr(f, "loss_mact_mean_layer0")};
    H5Fclose(f);
    ForwardOpen fo = {.threads = 2};
    Forward *fw = forward_open(run, &fo, err, sizeof err);
    if (!fw) fail_msg("%s: %s", name, err);
    InterventionKind kinds[6] = {IV_NONE,       IV_HEAD_ZERO, IV_GATES_OPEN_LAYER,
                                 IV_GATE_CONST, IV_MACT_ZERO, IV_MACT_MEAN};
    IvParams prm = IV_PARAMS_DEFAULT;
    prm.heads = "0.1,1.0", prm.layer = 0, prm.consts = "0.5";
    prm.mact_abs = 0.0, prm.mact_ratio = 3.0;
    int nr = 0;
    IntervResult *r = intervene_run(fw, kinds, 6, &prm, &nr, NULL, err, sizeof err);
    forward_close(fw);
    if (!r) fail_msg("%s: %s", name, err);
    assert_int_equal(nr, 6);
    assert_string_equal(r[2].name, "gates-open-layer-L0");
    assert_string_equal(r[3].name, "gate-const-c0.5");
    assert_string_equal(r[5].name, "mact-mean-L0");
    for (int i = 0; i < 5; i++)
        if (!(fabs(r[i + 1].loss - want[i]) < HF_TOL) || r[i + 1].loss == r[0].loss)
            fail_msg("%s %s: loss %.7g, PyTorch %.7g (unchanged %.7g)", name, r[i + 1].name,
                     r[i + 1].loss, want[i], r[0].loss);
    intervene_free(r, nr);
    free(r);
}

/* gates-open against the same weights with every gate 1, no-bos against
 * the window without its first token (make_hf_intervene_fixture.py), the
 * maps and the losses at 1e-4; then the command stores every kind. */
static void check_intervene(const char *name) {
    char fix[2048], path[2100], ids[2048], run[2048], log[2048], err[512];
    const char *d = tu_tmpdir();
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/%s", tu_src(), name);
    snprintf(path, sizeof path, "%s/intervene.h5", fix);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    size_t nt, n1, n2;
    int32_t *tok = tu_h5_read_opt(f, "tokens", H5T_NATIVE_INT32, 4, &nt);
    float *open = tu_h5_read_opt(f, "attention_gates_open", H5T_NATIVE_FLOAT, 4, &n1);
    float *nobos = tu_h5_read_opt(f, "attention_no_bos", H5T_NATIVE_FLOAT, 4, &n2);
    double want_loss[3] = {tu_h5_attr(f, "loss_none"), tu_h5_attr(f, "loss_gates_open"),
                           tu_h5_attr(f, "loss_no_bos")};
    H5Fclose(f);
    const int T = (int)nt;
    snprintf(ids, sizeof ids, "%s/ids.txt", d);
    snprintf(run, sizeof run, "%s/run.h5", d);
    snprintf(log, sizeof log, "%s/log", d);
    hf_write_tokens(ids, tok, T, 1);
    assert_int_equal(
        tu_run(log, "inspect %s --tokens %s --out %s --maps-len %d --force -q", fix, ids, run, T),
        0);
    ForwardOpen fo = {.threads = 2};
    Forward *fw = forward_open(run, &fo, err, sizeof err);
    if (!fw) fail_msg("%s: %s", name, err);
    assert_int_equal(fw->info.checkpoint, 1);
    InterventionKind kinds[3] = {IV_NONE, IV_GATES_OPEN, IV_NO_BOS};
    IvParams prm = IV_PARAMS_DEFAULT;
    int nr = 0;
    IntervResult *r = intervene_run(fw, kinds, 3, &prm, &nr, NULL, err, sizeof err);
    if (!r) fail_msg("%s: %s", name, err);
    assert_int_equal(nr, 3);
    forward_close(fw);
    assert_int_equal(r[1].probe.T, T), assert_int_equal(r[1].probe.M, T);
    assert_int_equal(r[2].probe.T, T - 1), assert_int_equal(r[2].probe.M, T - 1);
    hf_compare(name, "gates-open attention", r[1].probe.attention, open, n1);
    hf_compare(name, "no-bos attention", r[2].probe.attention, nobos, n2);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(r[i].loss_n, T - 2);
        if (!(fabs(r[i].loss - want_loss[i]) < HF_TOL))
            fail_msg("%s %s: loss %.7g, PyTorch %.7g", name, intervention_name(kinds[i]), r[i].loss,
                     want_loss[i]);
    }
    for (int i = 0; i < r[1].probe.L; i++) assert_true(r[1].probe.gate_stats[i * 4] == 1.0);
    intervene_free(r, 3);
    free(r);
    check_more_kinds(name, run, path);
    assert_int_equal(tu_run(log, "intervene %s all", run), 0);
    f = H5Fopen(run, H5F_ACC_RDONLY, H5P_DEFAULT);
    for (int k = 0; k <= IV_NO_BOS; k++) {
        snprintf(path, sizeof path, "intervene/%s", intervention_name((InterventionKind)k));
        assert_true(H5Lexists(f, path, H5P_DEFAULT) > 0);
    }
    H5Fclose(f);
    assert_int_equal(tu_run(log, "intervene %s gates-open --model /nonexistent", run), 2);
    free(tok), free(open), free(nobos);
}

static void test_intervene(void **s) {
    (void)s;
    check_intervene("qwen3-elementwise-f32-sharded");
    check_intervene("qwen3-headwise-f32");
}

/* DIR/config.json: the qwen2-f32-sharded fixture's with keys (JSON
 * members, comma-separated) added at its end. */
static void put_config(const char *dir, const char *keys) {
    char from[2048], to[2048];
    snprintf(from, sizeof from, "%s/tests/reference/hf/qwen2-f32-sharded/config.json", tu_src());
    snprintf(to, sizeof to, "%s/config.json", dir);
    char *text = tu_slurp_ok(from, NULL), *end = strrchr(text, '}');
    assert_non_null(end);
    *end = '\0';
    FILE *f = fopen(to, "w");
    assert_non_null(f);
    fprintf(f, "%s, %s}\n", text, keys);
    fclose(f);
    free(text);
}

/* inspect of dir on two windows of n tokens into dir/o.h5; the /config
 * window it records, and each of its 2 layers' (/pretrained/layer_window)
 * into lw[2]. */
static long long inspect_window(const char *dir, int n, int *lw) {
    char ids[2048], log[2048], a[8192];
    int32_t tok[16];
    for (int i = 0; i < n; i++) tok[i] = 1 + i;
    snprintf(ids, sizeof ids, "%s/ids.txt", dir);
    snprintf(log, sizeof log, "%s/log", dir);
    hf_write_tokens(ids, tok, n, 2);
    snprintf(a, sizeof a, "inspect %s --tokens %s --out %s/o.h5 --force", dir, ids, dir);
    if (tu_run(log, "%s", a) != 0) fail_msg("gatelab %s failed", a);
    snprintf(a, sizeof a, "%s/o.h5", dir);
    hid_t f = H5Fopen(a, H5F_ACC_RDONLY, H5P_DEFAULT);
    long long w = -1;
    hid_t at = H5Aopen_by_name(f, "config", "window", H5P_DEFAULT, H5P_DEFAULT);
    assert_true(at >= 0);
    assert_true(H5Aread(at, H5T_NATIVE_LLONG, &w) >= 0);
    size_t nl;
    int32_t *win = tu_h5_read_opt(f, "pretrained/layer_window", H5T_NATIVE_INT32, 4, &nl);
    if (!win || nl != 2) fail_msg("%s: no /pretrained/layer_window [2]", a);
    lw[0] = win[0], lw[1] = win[1];
    free(win);
    H5Aclose(at), H5Fclose(f);
    return w;
}

/* Sliding attention in a Qwen2 config.json (the fixture's, its weights
 * beside it): each layer is masked by its own window and the run file
 * records each layer's (/pretrained/layer_window), the window of every
 * layer as /config window where every layer slides, else 0; windows of
 * any length are inspected and rerun; without use_sliding_window, or with
 * max_window_layers at the layer count, no layer slides. The report's
 * uniform share is the recorded windows': set to 2 keys at T = 4 here,
 * (H_2 - 1) / 3 on every layer. */
static void test_cli_sliding(void **s) {
    (void)s;
    char d[1024], a[8192], ids[2048];
    int lw[2];
    snprintf(d, sizeof d, "%s", tu_tmpdir());
    static const char *const files[] = {"model-00001-of-00002.safetensors",
                                        "model-00002-of-00002.safetensors",
                                        "model.safetensors.index.json"};
    for (int i = 0; i < 3; i++) tu_hf_fixture(d, "qwen2-f32-sharded", files[i]);
    put_config(d, "\"use_sliding_window\": true, \"sliding_window\": 4, \"max_window_layers\": 0");
    assert_int_equal(inspect_window(d, 8, lw), 4); /* every layer slides */
    assert_true(lw[0] == 4 && lw[1] == 4);
    put_config(d, "\"use_sliding_window\": true, \"sliding_window\": 4, \"max_window_layers\": 1");
    assert_int_equal(inspect_window(d, 8, lw), 0); /* layer 1 slides, at 8 tokens */
    assert_true(lw[0] == 0 && lw[1] == 4);
    /* a rerun of an inspected run at a longer length */
    int32_t t16[16];
    for (int i = 0; i < 16; i++) t16[i] = 1 + i;
    snprintf(ids, sizeof ids, "%s/ids16.txt", d);
    hf_write_tokens(ids, t16, 16, 2);
    snprintf(a, sizeof a, "inspect %s --tokens %s --seq-len 4 --out %s/p.h5 --quiet", d, ids, d);
    char log[2048];
    snprintf(log, sizeof log, "%s/log", d);
    assert_int_equal(tu_run(log, "%s", a), 0);
    snprintf(a, sizeof a, "stream %s/p.h5 --len 8 --n-seq 2 --window 6 --keep 1", d);
    assert_int_equal(tu_run(log, "%s", a), 0);
    put_config(d, "\"use_sliding_window\": true, \"sliding_window\": 4, \"layer_types\": "
                  "[\"sliding_attention\", \"full_attention\"]");
    assert_int_equal(inspect_window(d, 8, lw), 0);
    assert_true(lw[0] == 4 && lw[1] == 0);
    put_config(d, "\"use_sliding_window\": false, \"sliding_window\": 4");
    assert_int_equal(inspect_window(d, 8, lw), 0);
    assert_true(lw[0] == 0 && lw[1] == 0);
    put_config(d, "\"use_sliding_window\": true, \"sliding_window\": 4, \"max_window_layers\": 2");
    assert_int_equal(inspect_window(d, 8, lw), 0);
    assert_true(lw[0] == 0 && lw[1] == 0);
    /* the report over a run file whose window is 2 at T = 4 */
    put_config(d, "\"use_sliding_window\": false");
    assert_int_equal(inspect_window(d, 4, lw), 0);
    snprintf(a, sizeof a, "%s/o.h5", d);
    hid_t f = H5Fopen(a, H5F_ACC_RDWR, H5P_DEFAULT), g = H5Gopen2(f, "config", H5P_DEFAULT);
    hid_t at = H5Aopen(g, "window", H5P_DEFAULT); /* through the group: HDF5 1.10 */
    long long two = 2;
    assert_true(at >= 0 && H5Awrite(at, H5T_NATIVE_LLONG, &two) >= 0);
    hid_t ds = H5Dopen2(f, "pretrained/layer_window", H5P_DEFAULT); /* and on each layer */
    const int both[2] = {2, 2};
    assert_true(ds >= 0 && H5Dwrite(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, both) >= 0);
    H5Dclose(ds), H5Aclose(at), H5Gclose(g), H5Fclose(f);
    char want[64];
    snprintf(a, sizeof a, "%s/p.h5", d);
    unlink(a); /* the report over o.h5 alone */
    assert_int_equal(tu_run(log, "report %s --out %s/rep", d, d), 0);
    snprintf(a, sizeof a, "%s/rep/results.csv", d);
    char *csv = tu_slurp_ok(a, NULL);
    double u = uniform_first_share_window(4, 2, 0);
    assert_true(fabs(u - 0.5 / 3) < 1e-12);
    assert_true(fabs(atof(tu_csv_cell(csv, "o.h5", "f_attn_uniform")) - u) < 1e-12);
    snprintf(a, sizeof a, "%s/rep/REPORT.md", d);
    char *md = tu_slurp_ok(a, NULL), *row = strstr(md, "| o.h5 | Qwen2ForCausalLM |");
    assert_non_null(row);
    *strchr(row, '\n') = '\0';
    snprintf(want, sizeof want, " | %.4f | ", u);
    assert_non_null(strstr(row, want));
    free(md), free(csv);
}

int main(void) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_runfile), cmocka_unit_test(test_cli_bad),
        cmocka_unit_test(test_cli_text),    cmocka_unit_test(test_intervene),
        cmocka_unit_test(test_cli_sliding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
