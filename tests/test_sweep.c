/* test_sweep.c: sweep file parsing and expansion, error locations, resume
 * planning on hand-made run files, the Slurm script, the MPI partition, and
 * failure isolation with a fake trainer (no real training here). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <hdf5.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "config.h"
#include "fakequant.h" /* FQ_NAMES_TEXT */
#include "protocol.h"
#include "runfile_read.h"
#include "sweep.h"
#include "testutil.h"

static char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* ---- parsing ---- */

static void test_expand(void **state) {
    (void)state;
    tu_put("p.ini", "steps = 10\n");
    tu_put("q.ini", "steps = 20\n");
    tu_put("b.sweep", "[sweep]\npreset = q\nseeds = 7\n[run z]\nvariant = g1-head\n");
    const char *a =
        tu_put("a.sweep", "# comment\n"
                          "[sweep]\n"
                          "preset = p            ; p.ini next to this file\n"
                          "seeds = 1, 2\n"
                          "set = steps=5\n"
                          "set = bos = 1\n"
                          "include = b.sweep\n"
                          "include = b.sweep     ; twice: identical runs are dropped\n"
                          "[run x]\n"
                          "  variant = baseline\n" /* indented: still a key, not a continuation */
                          "[run y]\n"
                          "variant = g1-elem\n"
                          "lr = 6e-3\n");
    Sweep sw;
    char err[512] = "";
    int rc = sweep_parse(a, &sw, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(sw.n_runs, 5);
    const char *ids[] = {"x_s1", "x_s2", "y_s1", "y_s2", "z_s7"};
    for (int i = 0; i < 5; i++) assert_string_equal(sw.runs[i].id, ids[i]);
    const SweepRun *y2 = &sw.runs[3];
    assert_string_equal(y2->name, "y");
    assert_true(y2->seed == 2);
    assert_string_equal(y2->out_name, "y_s2.h5");
    const char *want[] = {"steps=5", "bos=1",       "variant=g1-elem",
                          "lr=6e-3", "init_seed=2", "data_seed=2"};
    assert_int_equal(y2->n_sets, 6);
    for (int i = 0; i < 6; i++) assert_string_equal(y2->sets[i], want[i]);
    char pp[600];
    snprintf(pp, sizeof pp, "%s/p.ini", tu_scratch);
    assert_string_equal(y2->preset, pp);
    assert_string_equal(sw.runs[0].sets[2], "variant=baseline");
    /* the included run keeps its own preset, seeds and no parent sets */
    const SweepRun *z = &sw.runs[4];
    snprintf(pp, sizeof pp, "%s/q.ini", tu_scratch);
    assert_string_equal(z->preset, pp);
    assert_int_equal(z->n_sets, 3);
    assert_string_equal(z->sets[0], "variant=g1-head");
    assert_string_equal(z->sets[1], "init_seed=7");
    assert_non_null(strstr(z->where, "b.sweep:4"));
    sweep_free(&sw);
}

/* eval_lengths belongs to the runs of the file that sets it: not to a
 * parent's or an include's runs; a run defined identically in two files
 * (trained once) is evaluated when either file asks. */
static void test_eval_lengths_scope(void **state) {
    (void)state;
    tu_put("p.ini", "steps = 10\n");
    tu_put("lc.sweep", "[sweep]\npreset = p\neval_lengths = 1,2,8\nintervene = all\n"
                       "eval_quant = w8a8, w4a4\n"
                       "[run x]\nvariant = baseline\n[run w]\nvariant = g1-head\n");
    tu_put("other.sweep", "[sweep]\npreset = p\n[run z]\nvariant = g1-elem\n");
    const char *top =
        tu_put("top.sweep", "[sweep]\npreset = p\ninclude = other.sweep\ninclude = lc.sweep\n"
                            "[run x]\nvariant = baseline\n" /* same run as lc.sweep's x */
                            "[run y]\nvariant = g1-elem\nlr = 1e-3\n");
    Sweep sw;
    char err[512] = "";
    if (sweep_parse(top, &sw, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(sw.n_runs, 4);
    const char *ids[] = {"x_s1", "y_s1", "z_s1", "w_s1"};
    const char *ev[] = {"1x,2x,8x", "", "", "1x,2x,8x"};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(sw.runs[i].id, ids[i]);
        assert_string_equal(sw.runs[i].eval_lengths, ev[i]);
        /* intervene has the same scope */
        assert_string_equal(sw.runs[i].intervene, ev[i][0] ? "all" : "");
        /* and eval_quant, as the list gatelab eval --quant takes */
        assert_string_equal(sw.runs[i].eval_quant, ev[i][0] ? "w8a8,w4a4" : "");
    }
    assert_string_equal(sw.eval_lengths, "1x,2x,8x");
    assert_string_equal(sw.intervene, "all");
    assert_string_equal(sw.eval_quant, "w8a8,w4a4");
    sweep_free(&sw);
    /* a top file's eval_lengths does not reach its include's runs */
    const char *top2 = tu_put("top2.sweep", "[sweep]\npreset = p\neval_lengths = 4\n"
                                            "include = other.sweep\n[run v]\nvariant = baseline\n");
    if (sweep_parse(top2, &sw, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(sw.n_runs, 2);
    assert_string_equal(sw.runs[0].eval_lengths, "4x");
    assert_string_equal(sw.runs[1].id, "z_s1");
    assert_string_equal(sw.runs[1].eval_lengths, "");
    sweep_free(&sw);
    /* no file asks: nothing is evaluated */
    if (sweep_parse(tu_put("o2.sweep", "[sweep]\ninclude = other.sweep\n"), &sw, err, sizeof err))
        fail_msg("%s", err);
    assert_string_equal(sw.eval_lengths, "");
    assert_string_equal(sw.runs[0].eval_lengths, "");
    sweep_free(&sw);
}

static void test_default_seed_and_path_preset(void **state) {
    (void)state;
    char sub[600];
    snprintf(sub, sizeof sub, "%s/presets", tu_scratch);
    assert_int_equal(mkdir(sub, 0777), 0);
    tu_put("presets/tiny.ini", "steps = 1\n");
    const char *a = tu_put("d.sweep", "[sweep]\npreset = presets/tiny.ini\n[run only]\n");
    Sweep sw;
    char err[512];
    assert_int_equal(sweep_parse(a, &sw, err, sizeof err), 0);
    assert_int_equal(sw.n_runs, 1);
    assert_string_equal(sw.runs[0].id, "only_s1");
    assert_int_equal(sw.runs[0].n_sets, 2);
    assert_non_null(strstr(sw.runs[0].preset, "presets/tiny.ini"));
    sweep_free(&sw);
}

/* Parse text as tu_scratch/name and expect an error containing `where` and `what`. */
static void expect_error(const char *name, const char *text, const char *where, const char *what) {
    const char *p = tu_put(name, text);
    Sweep sw;
    char err[512] = "";
    assert_int_equal(sweep_parse(p, &sw, err, sizeof err), -1);
    if (!strstr(err, where) || !strstr(err, what))
        fail_msg("error '%s' lacks '%s' / '%s'", err, where, what);
    assert_int_equal(sw.n_runs, 0);
}

/* eval_quant_keep_first and eval_quant_source reach the quantized eval a
 * sweep runs after training (sweep_quant_argv), for the runs of the file
 * that sets them; without eval_quant beside them, or with a bad value,
 * they are refused naming the line. */
static void test_eval_quant_options(void **state) {
    (void)state;
    tu_put("p.ini", "steps = 1\n");
    tu_put("plain.sweep", "[sweep]\npreset = p\neval_quant = kv8\n[run z]\nvariant = g1-elem\n");
    const char *a = tu_put("qo.sweep", "[sweep]\npreset = p\neval_quant_source = 1\n"
                                       "eval_quant = w8a8,kv4\neval_quant_keep_first = 2\n"
                                       "include = plain.sweep\n[run x]\nvariant = baseline\n");
    Sweep sw;
    char err[512] = "", k[16], *argv[8];
    if (sweep_parse(a, &sw, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(sw.n_runs, 2);
    assert_int_equal(sweep_quant_argv(&sw.runs[0], "x_s1.h5", k, sizeof k, argv), 7);
    const char *want[] = {"eval", "x_s1.h5",       "--quant", "w8a8,kv4", "--quant-keep-first",
                          "2",    "--quant-source"};
    for (int i = 0; i < 7; i++) assert_string_equal(argv[i], want[i]);
    assert_null(argv[7]);
    /* the include's run has its own eval_quant and neither option */
    assert_int_equal(sweep_quant_argv(&sw.runs[1], "z_s1.h5", k, sizeof k, argv), 4);
    assert_string_equal(argv[3], "kv8");
    assert_null(argv[4]);
    sweep_free(&sw);
    expect_error("qk1.sweep", "[sweep]\npreset = p\neval_quant_keep_first = 1\n[run a]\n",
                 "qk1.sweep:3:", "eval_quant_keep_first needs eval_quant in the same [sweep]");
    expect_error("qk2.sweep", "[sweep]\npreset = p\n[run a]\n[sweep]\neval_quant_source = 1\n",
                 "qk2.sweep:5:", "eval_quant_source needs eval_quant in the same [sweep]");
    expect_error("qk3.sweep",
                 "[sweep]\npreset = p\neval_quant = w8a8\neval_quant_keep_first = -1\n[run a]\n",
                 "qk3.sweep:4:", "bad eval_quant_keep_first '-1'");
    expect_error("qk4.sweep",
                 "[sweep]\npreset = p\neval_quant = w8a8\neval_quant_source = yes\n[run a]\n",
                 "qk4.sweep:4:", "bad eval_quant_source 'yes'");
    expect_error("qk5.sweep",
                 "[sweep]\npreset = p\neval_quant = w8a8\neval_quant_source = 1\n"
                 "eval_quant_source = 0\n[run a]\n",
                 "qk5.sweep:5:", "eval_quant_source given twice");
    /* --quant-source needs a per-tensor mode: refused here, not after training */
    expect_error("qk6.sweep",
                 "[sweep]\npreset = p\neval_quant = kv8,w8a8-tok\neval_quant_source = 1\n[run a]\n",
                 "qk6.sweep:4:", "eval_quant_source = 1 finds a per-tensor mode's damage source");
}

static void test_errors(void **state) {
    (void)state;
    tu_put("p.ini", "steps = 1\n");
    expect_error("e1.sweep", "[sweep]\npreset = p\nprest = q\n[run a]\n",
                 "e1.sweep:3:", "unknown key 'prest'");
    expect_error("e2.sweep", "[sweep]\npreset = p\n\n[run]\nlr = 1\n",
                 "e2.sweep:4:", "needs a name");
    expect_error("e3.sweep", "[sweep]\npreset = p\n[run a]\nlr = 1\n[run b]\n[run a]\n",
                 "e3.sweep:6:", "duplicate run name 'a' (first at line 3)");
    expect_error("e4.sweep", "[sweep]\npreset = p\nseeds = 1,x\n[run a]\n",
                 "e4.sweep:3:", "bad seed 'x'");
    expect_error("e5.sweep", "[sweep]\npreset = p\nseeds = 1,,2\n[run a]\n",
                 "e5.sweep:3:", "bad seeds list");
    expect_error("e6.sweep", "[sweep]\n\npreset = p\nseeds = 3,-1\n[run a]\n",
                 "e6.sweep:4:", "bad seed '-1'");
    expect_error("e7.sweep", "[sweep]\nseeds = 2,2\npreset = p\n[run a]\n",
                 "e7.sweep:2:", "listed twice");
    expect_error("e8.sweep", "[sweep]\nseeds = 1\npreset = nope\n[run a]\n",
                 "e8.sweep:3:", "no file");
    expect_error("e9.sweep", "[sweep]\nseeds = 1\n\n[run a]\nlr = 1\n", "e9.sweep:4:", "no preset");
    expect_error("e10.sweep", "lr = 1\n[sweep]\n", "e10.sweep:1:", "outside a section");
    expect_error("e11.sweep", "[sweep]\npreset = p\n[run a]\njust words\n",
                 "e11.sweep:4:", "expected 'key = value'");
    expect_error("e12.sweep", "[sweep]\npreset = p\n[run a]\ninit_seed = 4\n",
                 "e12.sweep:4:", "seeds =");
    expect_error("e14.sweep", "[sweep]\npreset = p\nintervene = bos-mean, bos-max\n[run a]\n",
                 "e14.sweep:3:", "bad intervene kind 'bos-max'");
    expect_error("e15.sweep", "[sweep]\npreset = p\nintervene = none\n[run a]\n",
                 "e15.sweep:3:", "bad intervene kind 'none'");
    expect_error("e16.sweep", "[sweep]\npreset = p\nintervene = all\nintervene = no-bos\n[run a]\n",
                 "e16.sweep:4:", "intervene given twice");
    expect_error("q1.sweep", "[sweep]\npreset = p\neval_quant = w8a8,w2a2\n[run a]\n",
                 "q1.sweep:3:", "bad eval_quant mode 'w2a2'");
    expect_error("q2.sweep", "[sweep]\npreset = p\neval_quant = w4a4,w4a4\n[run a]\n",
                 "q2.sweep:3:", "bad eval_quant mode 'w4a4'");
    expect_error("q3.sweep", "[sweep]\npreset = p\neval_quant = float\n[run a]\n",
                 "q3.sweep:3:", "bad eval_quant mode 'float'");
    expect_error("q4.sweep", "[sweep]\npreset = p\neval_quant = w8a8-tok,w8a8-tok\n[run a]\n",
                 "q4.sweep:3:", "(" FQ_NAMES_TEXT ", each once)");
    { /* modes of fakequant.h's list are accepted, w8a8-tok and kv4 included */
        Sweep sw;
        char err[512] = "";
        const char *q5 = tu_put("q5.sweep", "[sweep]\npreset = p\neval_quant = w8a8-tok,w4a4,kv4\n"
                                            "[run a]\nvariant = baseline\n");
        if (sweep_parse(q5, &sw, err, sizeof err)) fail_msg("%s", err);
        assert_string_equal(sw.eval_quant, "w8a8-tok,w4a4,kv4");
        sweep_free(&sw);
    }
    expect_error("e13.sweep", "[sweep]\npreset = p\n[run a]\nlr = 1\nlr = 2\n",
                 "e13.sweep:5:", "given twice");
    expect_error("e14.sweep", "[sweep]\npreset = p\n[grid a]\n", "e14.sweep:3:", "unknown section");
    expect_error("e15.sweep", "[sweep]\npreset = p\nset = steps\n[run a]\n",
                 "e15.sweep:3:", "not key=value");
    expect_error("e16.sweep", "[sweep]\npreset = p\n[run a/b]\n", "e16.sweep:3:", "bad run name");
    expect_error("e17.sweep", "[sweep]\ninclude = missing.sweep\n", "e17.sweep:2:", "cannot open");
    expect_error("e18.sweep", "[sweep]\npreset = p\n", "e18.sweep:1:", "no runs");
    /* the INI syntax is inifile.c's, with its messages */
    expect_error("e19.sweep", "[sweep]\npreset = p\n[run a\nlr = 1\n",
                 "e19.sweep:3:", "expected 'key = value' or a [section]");
    char longer[400];
    snprintf(longer, sizeof longer, "[sweep]\npreset = p\n[run a]\nlr = %0198d\n", 1);
    expect_error("e20.sweep", longer, "e20.sweep:4:", "line longer than 197 characters");
    /* a loop: l1 -> l2 -> l1, reported at l2's include line */
    tu_put("l2.sweep", "[sweep]\n\ninclude = l1.sweep\n");
    expect_error("l1.sweep", "[sweep]\npreset = p\ninclude = l2.sweep\n[run a]\n",
                 "l2.sweep:3:", "include loop");
    /* same run id from two files with different settings */
    tu_put("o1.sweep", "[sweep]\npreset = p\n[run a]\nlr = 1\n");
    expect_error("o2.sweep", "[sweep]\npreset = p\ninclude = o1.sweep\n[run a]\nlr = 2\n",
                 "o1.sweep:3:", "also defined at");
}

/* Entries of dir other than . and .. */
static int dir_entries(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d) closedir(d);
    return n;
}

/* [primary] goes to OUT/protocol.ini, replaced whole on a rerun with no
 * temporary left; a protocol.ini that is a directory is refused by name. */
static void test_protocol_file(void **state) {
    (void)state;
    tu_put("p.ini", "steps = 1\n");
    const char *sf =
        tu_put("pr.sweep", "[sweep]\npreset = p\n[primary]\nmetric = f_attn\n"
                           "test = f_attn welch\ncompare = b vs a\n[run a]\n[run b]\n");
    Sweep sw;
    char err[512] = "", out[600], pf[700];
    if (sweep_parse(sf, &sw, err, sizeof err)) fail_msg("%s", err);
    snprintf(out, sizeof out, "%s/out", tu_scratch);
    assert_int_equal(mkdir(out, 0755), 0);
    for (int k = 0; k < 2; k++)
        if (sweep_write_protocol(&sw, NULL, out, NULL, err, sizeof err)) fail_msg("%s", err);
    snprintf(pf, sizeof pf, "%s/protocol.ini", out);
    const char *text = slurp(pf);
    assert_non_null(text);
    assert_non_null(
        strstr(text, "[primary]\nmetric = f_attn\ntest = f_attn welch\ncompare = b vs a\n"));
    assert_int_equal(dir_entries(out), 1);
    assert_int_equal(unlink(pf), 0);
    assert_int_equal(mkdir(pf, 0755), 0);
    assert_int_equal(sweep_write_protocol(&sw, NULL, out, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "protocol.ini"));
    assert_int_equal(dir_entries(out), 1);
    sweep_free(&sw);
}

/* ---- resume planning ---- */

/* A minimal run file: root attr status (variable- or fixed-length). */
static void make_run(const char *name, const char *status, int fixed) {
    char p[600];
    snprintf(p, sizeof p, "%s/%s", tu_scratch, name);
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    if (status) {
        hid_t t = H5Tcopy(H5T_C_S1);
        assert_true(H5Tset_size(t, fixed ? strlen(status) : H5T_VARIABLE) >= 0);
        hid_t sp = H5Screate(H5S_SCALAR);
        hid_t a = H5Acreate2(f, "status", t, sp, H5P_DEFAULT, H5P_DEFAULT);
        assert_true(a >= 0);
        assert_true(H5Awrite(a, t, fixed ? (const void *)status : (const void *)&status) >= 0);
        H5Aclose(a);
        H5Sclose(sp);
        H5Tclose(t);
    }
    H5Fclose(f);
}

static SweepRun fake_run(const char *name) {
    SweepRun r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "%s", name);
    r.seed = 1;
    snprintf(r.id, sizeof r.id, "%s_s1", name);
    snprintf(r.out_name, sizeof r.out_name, "%s_s1.h5", name);
    return r;
}

static void test_plan(void **state) {
    (void)state;
    make_run("done_s1.h5", "done", 0);
    make_run("fixed_s1.h5", "done", 1);
    make_run("div_s1.h5", "diverged", 0);
    make_run("resume_s1.h5", "running", 0);
    tu_put("resume_s1.h5.ckpt", "x");
    make_run("restart_s1.h5", "running", 0);
    make_run("nostatus_s1.h5", NULL, 0);
    tu_put("junk_s1.h5", "not hdf5");
    tu_put("orphan_s1.h5.ckpt", "x");
    char st[32];
    char p[600];
    snprintf(p, sizeof p, "%s/div_s1.h5", tu_scratch);
    assert_int_equal(runfile_read_status(p, st, sizeof st), 0);
    assert_string_equal(st, "diverged");
    snprintf(p, sizeof p, "%s/fixed_s1.h5", tu_scratch);
    assert_int_equal(runfile_read_status(p, st, sizeof st), 0);
    assert_string_equal(st, "done");
    snprintf(p, sizeof p, "%s/nostatus_s1.h5", tu_scratch);
    assert_int_equal(runfile_read_status(p, st, sizeof st), 0);
    assert_string_equal(st, "");
    snprintf(p, sizeof p, "%s/junk_s1.h5", tu_scratch);
    assert_int_equal(runfile_read_status(p, st, sizeof st), -1);

    struct {
        const char *name;
        SweepAction want;
    } cases[] = {
        {"done", SWEEP_SKIP_DONE}, {"fixed", SWEEP_SKIP_DONE}, {"div", SWEEP_SKIP_DIVERGED},
        {"resume", SWEEP_RESUME},  {"restart", SWEEP_RESTART}, {"nostatus", SWEEP_RESTART},
        {"junk", SWEEP_RESTART},   {"orphan", SWEEP_RESTART},  {"fresh", SWEEP_START},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        SweepRun r = fake_run(cases[i].name);
        SweepAction a = sweep_plan_run(tu_scratch, &r);
        if (a != cases[i].want)
            fail_msg("%s: got %s, want %s", cases[i].name, sweep_action_name(a),
                     sweep_action_name(cases[i].want));
    }
}

/* ---- Slurm ---- */

static void test_slurm(void **state) {
    (void)state;
    tu_put("p.ini", "steps = 1\n");
    const char *a = tu_put("s.sweep", "[sweep]\npreset = p\nseeds = 1,2,3\n"
                                      "[run baseline]\n[run g1-elem]\nvariant = g1-elem\n");
    Sweep sw;
    char err[512], out[600], script[700];
    assert_int_equal(sweep_parse(a, &sw, err, sizeof err), 0);
    assert_int_equal(sw.n_runs, 6);
    snprintf(out, sizeof out, "%s/out", tu_scratch);
    snprintf(script, sizeof script, "%s/job.sbatch", tu_scratch);
    assert_int_equal(sweep_write_slurm(&sw, a, out, script, 0, err, sizeof err), 0);
    const char *s = slurp(script);
    assert_non_null(s);
    assert_non_null(strstr(s, "#!/bin/bash\n#SBATCH"));
    assert_non_null(strstr(s, "#SBATCH --array=0-5\n"));
    assert_non_null(strstr(s, "#SBATCH --cpus-per-task=1\n"));
    assert_non_null(strstr(s, "#     0  baseline_s1\n"));
    assert_non_null(strstr(s, "#     4  g1-elem_s2\n"));
    assert_non_null(strstr(s, "#     5  g1-elem_s3\n"));
    assert_null(strstr(s, "#     6  "));
    assert_non_null(strstr(s, "--only \"$SLURM_ARRAY_TASK_ID\""));
    assert_non_null(strstr(s, " report "));
    /* every directive comes before the first command */
    const char *cmd = strstr(s, "\nset -eu");
    assert_non_null(cmd);
    const char *last_dir = s;
    for (const char *p = s; (p = strstr(p, "#SBATCH")); p++) last_dir = p;
    assert_true(last_dir < cmd);
    sweep_free(&sw);
}

/* ---- MPI partition ---- */

static void test_partition(void **state) {
    (void)state;
    for (int size = 1; size <= 4; size++)
        for (int i = 0; i < 37; i++) {
            int owners = 0, owner = -1;
            for (int r = 0; r < size; r++)
                if (sweep_rank_owns(i, r, size)) owners++, owner = r;
            assert_int_equal(owners, 1);
            assert_int_equal(owner, i % size);
        }
}

/* ---- running with a fake trainer ---- */

static const char *fake_trainer =
    "#!/bin/sh\n"
    "out=''; prev=''\n"
    "for a in \"$@\"; do [ \"$prev\" = --out ] && out=$a; prev=$a; done\n"
    "echo \"$@\" > \"$out.args\"\n"
    "echo \"OPENBLAS=$OPENBLAS_NUM_THREADS\" >> \"$out.args\"\n"
    "echo 'step 3/5 | loss 1.0 | lr 1e-3 | 10 tok/s | ETA 0s' >&2\n"
    "echo 'progress 3 5 0' >&3 || exit 9\n"
    "case \"$out\" in *bad_s*) exit 1;; *div_s*) exit 3;; esac\n"
    "exit 0\n";

static const char *out_file(const char *name) {
    static char p[700];
    snprintf(p, sizeof p, "%s/out/%s", tu_scratch, name);
    return p;
}

static Sweep fake_sweep(void) {
    tu_put("p.ini", "steps = 1\n");
    const char *a =
        tu_put("f.sweep", "[sweep]\npreset = p\n"
                          "[run good]\n[run bad]\n[run div]\n[run good2]\n[run old]\n[run half]\n");
    Sweep sw;
    char err[512];
    assert_int_equal(sweep_parse(a, &sw, err, sizeof err), 0);
    assert_int_equal(sw.n_runs, 6);
    return sw;
}

static void test_failure_isolation(void **state) {
    (void)state;
    const char *exe = tu_put("trainer.sh", fake_trainer);
    assert_int_equal(chmod(exe, 0755), 0);
    Sweep sw = fake_sweep();
    char dir[600];
    snprintf(dir, sizeof dir, "%s/out", tu_scratch);
    assert_int_equal(mkdir(dir, 0777), 0);
    make_run("out/old_s1.h5", "done", 0);     /* finished: skipped */
    make_run("out/half_s1.h5", "running", 0); /* checkpointed: resumed */
    tu_put("out/half_s1.h5.ckpt", "x");

    setenv("GATELAB_TEST_EXE", exe, 1);
    SweepOptions o = {.out_dir = dir, .jobs = 2, .only = -1, .size = 1, .progress_every = 0.05};
    SweepSummary s;
    char err[512] = "";
    int rc = sweep_execute(&sw, &o, &s, err, sizeof err);
    unsetenv("GATELAB_TEST_EXE");
    assert_int_equal(rc, 1); /* one run failed */
    assert_int_equal(s.total, 6);
    assert_int_equal(s.done, 4); /* good, good2, half, old (skipped) */
    assert_int_equal(s.diverged, 1);
    assert_int_equal(s.failed, 1);
    assert_int_equal(s.skipped, 1);

    /* the runs after the failure still ran, with the agreed command line */
    const char *g2 = slurp(out_file("good2_s1.h5.args"));
    assert_non_null(g2);
    assert_non_null(strstr(g2, "train --config "));
    assert_non_null(strstr(g2, "p.ini --set threads=1 --set init_seed=1 "
                               "--set data_seed=1 --out "));
    assert_non_null(strstr(g2, "out/good2_s1.h5 --progress-fd 3\n"));
    assert_non_null(strstr(g2, "OPENBLAS=1"));
    const char *h = slurp(out_file("half_s1.h5.args"));
    assert_non_null(h);
    assert_non_null(strstr(h, "half_s1.h5 --progress-fd 3 --resume\n"));
    assert_null(slurp(out_file("old_s1.h5.args")));
    assert_non_null(slurp(out_file("div_s1.h5.args")));

    const char *tsv = slurp(out_file("sweep_status.tsv"));
    assert_non_null(tsv);
    assert_non_null(strstr(tsv, "name\tseed\texit\tseconds\tresult\n"));
    assert_non_null(strstr(tsv, "\nbad\t1\t1\t"));
    assert_non_null(strstr(tsv, "\tfailed\n"));
    assert_non_null(strstr(tsv, "\ndiv\t1\t3\t"));
    assert_non_null(strstr(tsv, "\ngood2\t1\t0\t"));
    assert_null(strstr(tsv, "\nold\t"));
    const char *log = slurp(out_file("logs/bad_s1.log"));
    assert_non_null(log);
    assert_non_null(strstr(log, "step 3/5 | loss"));
    sweep_free(&sw);
}

static void test_only_and_ranks(void **state) {
    (void)state;
    const char *exe = tu_put("trainer.sh", fake_trainer);
    assert_int_equal(chmod(exe, 0755), 0);
    Sweep sw = fake_sweep();
    char dir[600], err[512];
    snprintf(dir, sizeof dir, "%s/out", tu_scratch);
    SweepSummary s;
    /* --only 3: just good2, created out dir included */
    SweepOptions o = {.out_dir = dir, .jobs = 1, .only = 3, .size = 1, .train_exe = exe};
    assert_int_equal(sweep_execute(&sw, &o, &s, err, sizeof err), 0);
    assert_int_equal(s.total, 1);
    assert_non_null(slurp(out_file("good2_s1.h5.args")));
    assert_null(slurp(out_file("good_s1.h5.args")));
    /* rank 1 of 2: indexes 1, 3, 5 (bad, good2, half) */
    o.only = -1;
    o.rank = 1;
    o.size = 2;
    assert_int_equal(sweep_execute(&sw, &o, &s, err, sizeof err), 1);
    assert_int_equal(s.total, 3);
    assert_int_equal(s.failed, 1);
    assert_non_null(slurp(out_file("half_s1.h5.args")));
    assert_null(slurp(out_file("good_s1.h5.args")));
    assert_null(slurp(out_file("div_s1.h5.args")));
    /* --only past the end is refused */
    o.only = 6;
    assert_int_equal(sweep_execute(&sw, &o, &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "--only 6"));
    /* a trainer that cannot even start counts as failed, not a crash */
    o.only = 0;
    o.train_exe = "/nonexistent/trainer";
    assert_int_equal(sweep_execute(&sw, &o, &s, err, sizeof err), 1);
    assert_int_equal(s.failed, 1);
    sweep_free(&sw);
}

static void test_all_succeed(void **state) {
    (void)state;
    tu_put("p.ini", "steps = 1\n");
    const char *a = tu_put("ok.sweep", "[sweep]\npreset = p\nseeds = 1,2\n[run a]\n[run b]\n");
    Sweep sw;
    char dir[600], err[512];
    assert_int_equal(sweep_parse(a, &sw, err, sizeof err), 0);
    snprintf(dir, sizeof dir, "%s/ok", tu_scratch);
    SweepOptions o = {.out_dir = dir, .jobs = 3, .only = -1, .size = 1, .train_exe = "/bin/true"};
    SweepSummary s;
    assert_int_equal(sweep_execute(&sw, &o, &s, err, sizeof err), 0);
    assert_int_equal(s.done, 4);
    assert_int_equal(s.failed, 0);
    sweep_free(&sw);
}

/* The trainer's progress protocol (train_loop.h), which the sweep reads:
 * with --progress-fd, one "progress STEP STEPS ETA" line per logged step,
 * also under -q, the last one at STEPS. */
static void test_progress_protocol(void **state) {
    (void)state;
    char out[700], run[700];
    snprintf(out, sizeof out, "%s/progress.txt", tu_scratch);
    snprintf(run, sizeof run, "%s/p.h5", tu_scratch);
    assert_int_equal(tu_run(out,
                            "train --config experiments/tiny.ini --set steps=30 "
                            "--set log_every=10 -q --out %s --progress-fd 1",
                            run),
                     0);
    char *text = slurp(out);
    assert_non_null(text);
    long long step, steps, eta, last = 0;
    int lines = 0;
    for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        assert_int_equal(sscanf(l, "progress %lld %lld %lld", &step, &steps, &eta), 3);
        assert_int_equal(steps, 30);
        assert_true(step > last && eta >= 0);
        last = step, lines++;
    }
    assert_int_equal(lines, 3);
    assert_int_equal(last, 30);
}

static void test_cli(void **state) {
    (void)state;
    tu_put("p.ini", "steps = 1\n");
    const char *a = tu_put("c.sweep", "[sweep]\npreset = p\n[run a]\n");
    char dir[600], script[700];
    snprintf(dir, sizeof dir, "%s/cli", tu_scratch);
    char *list[] = {"sweep", (char *)a, "--list", NULL};
    assert_int_equal(cmd_sweep(3, list), 0);
    char *no_out[] = {"sweep", (char *)a, NULL};
    assert_int_equal(cmd_sweep(2, no_out), 2);
    char *bad_jobs[] = {"sweep", (char *)a, "--out", dir, "--jobs", "0", NULL};
    assert_int_equal(cmd_sweep(6, bad_jobs), 2);
    const char *bad = tu_put("bad.sweep", "[sweep]\npreset = p\nfoo = 1\n");
    char *bad_file[] = {"sweep", (char *)bad, "--out", dir, NULL};
    assert_int_equal(cmd_sweep(4, bad_file), 2);
    snprintf(script, sizeof script, "%s/x.sbatch", tu_scratch);
    char *slurm[] = {"sweep", "--emit-slurm", script, (char *)a, "--out", dir, NULL};
    assert_int_equal(cmd_sweep(6, slurm), 0);
    const char *s = slurp(script);
    assert_non_null(s);
    assert_non_null(strstr(s, "#SBATCH --array=0-0\n"));
    char *dflt[] = {"sweep", (char *)a, "--out", dir, "--emit-slurm", NULL};
    assert_int_equal(cmd_sweep(5, dflt), 0);
    char dp[800];
    snprintf(dp, sizeof dp, "%s/sweep.sbatch", dir);
    assert_non_null(slurp(dp));
}

/* ---- the shipped sweep files ---- */

/* The sweep's ETA: running runs' own ETA, then the runs not started at
 * the mean time of the finished ones, jobs at a time. */
static void test_sweep_eta(void **state) {
    (void)state;
    double eta[2] = {10, 30}, el[2] = {50, 70};
    /* 2 running (mean ETA 20), 4 left at 100 s each (two done, 200 s), 2 jobs */
    assert_float_equal(sweep_eta_estimate(eta, el, 2, 4, 200, 2, 2), 20 + 4 * 100 / 2.0, 1e-9);
    /* none done yet: a run takes elapsed + ETA (60 and 100: 80) */
    assert_float_equal(sweep_eta_estimate(eta, el, 2, 3, 0, 0, 1), 20 + 3 * 80.0, 1e-9);
    /* nothing left to start: the running runs alone */
    assert_float_equal(sweep_eta_estimate(eta, el, 2, 0, 0, 0, 2), 20, 1e-9);
    /* a run not heard from and none finished: unknown */
    double un[2] = {10, -1};
    assert_true(sweep_eta_estimate(un, el, 2, 3, 0, 0, 2) < 0);
    /* ... but known once a run has finished */
    assert_float_equal(sweep_eta_estimate(un, el, 2, 2, 90, 1, 2), 10 + 90.0, 1e-9);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_expand, tu_scratch_setup, tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_eval_lengths_scope, tu_scratch_setup,
                                        tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_default_seed_and_path_preset, tu_scratch_setup,
                                        tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_errors, tu_scratch_setup, tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_eval_quant_options, tu_scratch_setup,
                                        tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_protocol_file, tu_scratch_setup, tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_plan, tu_scratch_setup, tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_slurm, tu_scratch_setup, tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_partition, tu_scratch_setup, tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_failure_isolation, tu_scratch_setup,
                                        tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_only_and_ranks, tu_scratch_setup, tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_all_succeed, tu_scratch_setup, tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_progress_protocol, tu_scratch_setup,
                                        tu_scratch_teardown),
        cmocka_unit_test(test_sweep_eta),
        cmocka_unit_test_setup_teardown(test_cli, tu_scratch_setup, tu_scratch_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
