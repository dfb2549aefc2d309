/* test_runfile_probe.c: a run file's probe tables (every RS_PROBE_ARRAYS
 * entry), intervention groups and schema versions, written through
 * runfile.h and read back through runfile_read.h (the file format itself:
 * test_runfile.c). */
#define _POSIX_C_SOURCE 200809L
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

#include "config.h"
#include "intervention.h"
#include "runfile.h"
#include "runfile_fixture.h"
#include "runfile_read.h"
#include "runschema.h"
#include "testutil.h"

/* Elements of one RS_PROBE_ARRAYS entry for this probe (its dims letters). */
static size_t table_elems(const ProbeRecord *p, const char *dims) {
    size_t n = 1;
    for (const char *c = dims; *c; c++) {
        switch (*c) {
        case 'L': n *= (size_t)p->L; break;
        case 'H': n *= (size_t)p->H; break;
        case 'T': n *= (size_t)p->T; break;
        case 'P': n *= (size_t)(p->M > 0 ? p->M : p->T); break;
        case 'N': n *= (size_t)p->N; break;
        case 'C': n *= (size_t)p->gate_channels; break;
        case 'S': n *= (size_t)p->gate_sample_n; break;
        case 'D': n *= (size_t)p->D; break;
        case 'B': n *= RS_GATE_BINS; break;
        case 'K': n *= RS_GATE_NBELOW; break;
        case 'M': n *= RS_GATE_NSTATS; break;
        case '3': n *= RS_HIDDEN_TOP; break;
        case 'G': n *= (size_t)p->gate_heads; break;
        default: fail_msg("unknown dims letter %c", *c);
        }
    }
    return n;
}

/* Every table array of got equals w's (w from make_probe, which must set
 * them all), with the same shape. */
static void assert_same_probe(const ProbeRecord *got, const ProbeRecord *w) {
    assert_int_equal(got->L, w->L), assert_int_equal(got->H, w->H);
    assert_int_equal(got->N, w->N), assert_int_equal(got->T, w->T);
    assert_int_equal(got->gate_channels, w->gate_channels);
    assert_int_equal(got->gate_sample_n, w->gate_sample_n);
#define RS_CHECK(member, ctype, cls, hid, name, dims, kind, desc)                                  \
    if (!w->member) fail_msg("make_probe leaves %s unset", name);                                  \
    if (!got->member) fail_msg("%s not read back", name);                                          \
    if (memcmp(got->member, w->member, table_elems(w, dims) * sizeof(ctype)))                      \
        fail_msg("%s differs after the round trip", name);
    RS_PROBE_ARRAYS(RS_CHECK)
#undef RS_CHECK
}

/* Every array of the schema table comes back from the reader as written
 * (so a new table line is covered once make_probe fills it), and a
 * negative layer_slots entry is refused. */
static void test_probe_table_roundtrip(void **state) {
    (void)state;
    char path[512], err[512];
    tu_scratch_path(path, sizeof path, "table.h5");
    Probe q;
    write_closed_run(path, &q);
    RunReader *r = runread_open(path, err, sizeof err);
    if (!r) fail_msg("open: %s", err);
    ProbeRecord got;
    assert_int_equal(runread_probe(r, -1, &got, err, sizeof err), 0);
    assert_same_probe(&got, &q.p);
    /* layer l's slots: its layer_slots entry; l outside the layers: slots */
    for (int l = 0; l < PL; l++) assert_int_equal(runread_layer_slots(&got, l), q.layer_slots[l]);
    assert_int_equal(runread_layer_slots(&got, -1), q.p.slots);
    runread_probe_free(&got);
    runread_close(r);
    /* a negative count is refused, naming the dataset and the layer */
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "/probe/step_0000002/layer_slots", H5P_DEFAULT);
    const int bad[PL] = {0, -1};
    assert_true(d >= 0 && H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, bad) >= 0);
    H5Dclose(d), H5Fclose(f);
    r = runread_open(path, err, sizeof err);
    if (!r) fail_msg("open: %s", err);
    assert_int_equal(runread_probe(r, -1, &got, err, sizeof err), -1);
    if (!strstr(err, "layer_slots[1] is -1")) fail_msg("got \"%s\"", err);
    runread_close(r);
}

/* /intervene/<kind>: every probe array, loss, loss_n and clip_k written by
 * runfile_write_interventions (copy and rename) read back unchanged; a
 * second write replaces a kind; a missing kind is an error naming it; the
 * rest of the file (the probe) is kept. */
static void test_intervention_roundtrip(void **state) {
    (void)state;
    char path[512], err[512];
    tu_scratch_path(path, sizeof path, "iv.h5");
    Probe q;
    write_closed_run(path, &q);
    InterventionOut out[3] = {
        {RS_IV_NONE, &q.p, 1.5, 40, 0, NULL, -1, NAN, NULL, 1.5, NAN, NAN},
        {RS_IV_BOS_CLIP, &q.p, 9.0, 1, 3, NULL, -1, NAN, NULL, 1.5, NAN, NAN},
        {RS_IV_MACT_ZERO, &q.p, 4.0, 40, 0, "mact-zero-L1", 1, 0.25, "0.1,1.0", 1.5, 7.5, 30}};
    assert_int_equal(runfile_write_interventions(path, out, 3, err, sizeof err), 0);
    out[1].loss = 2.25; /* rewritten: the new value wins */
    assert_int_equal(runfile_write_interventions(path, out + 1, 1, err, sizeof err), 0);
    RunReader *r = runread_open(path, err, sizeof err);
    if (!r) fail_msg("open: %s", err);
    for (int k = 0; k < 2; k++) {
        RunIntervention iv;
        if (runread_intervention(r, out[k].kind, &iv, err, sizeof err) != 0) fail_msg("%s", err);
        assert_true(iv.loss == out[k].loss);
        assert_int_equal(iv.loss_n, out[k].loss_n);
        assert_int_equal(iv.clip_k, out[k].clip_k);
        assert_int_equal(iv.probe.step, q.p.step);
        assert_same_probe(&iv.probe, &q.p);
        assert_string_equal(iv.kind, out[k].kind);
        assert_int_equal(iv.layer, -1);
        assert_true(isnan(iv.gate_const));
        assert_true(iv.loss_none == 1.5);
        assert_true(isnan(iv.mact_abs) && isnan(iv.mact_ratio));
        runread_intervention_free(&iv);
    }
    RunIntervention iv;
    /* a named group keeps its kind, layer, c and heads */
    if (runread_intervention(r, "mact-zero-L1", &iv, err, sizeof err) != 0) fail_msg("%s", err);
    assert_string_equal(iv.kind, RS_IV_MACT_ZERO);
    assert_int_equal(iv.layer, 1);
    assert_true(iv.gate_const == 0.25 && iv.loss == 4.0);
    assert_string_equal(iv.heads, "0.1,1.0");
    assert_true(iv.mact_abs == 7.5 && iv.mact_ratio == 30);
    runread_intervention_free(&iv);
    char **names;
    assert_int_equal(runread_intervention_names(r, &names, err, sizeof err), 3);
    assert_string_equal(names[0], RS_IV_BOS_CLIP);
    assert_string_equal(names[1], "mact-zero-L1");
    assert_string_equal(names[2], RS_IV_NONE);
    runread_names_free(names, 3);
    assert_int_equal(runread_has_intervention(r, RS_IV_NO_BOS), 0);
    assert_int_equal(runread_intervention(r, RS_IV_NO_BOS, &iv, err, sizeof err), -1);
    assert_non_null(strstr(err, "intervene/no-bos"));
    ProbeRecord p;
    assert_int_equal(runread_probe(r, -1, &p, err, sizeof err), 0);
    runread_probe_free(&p);
    runread_close(r);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_false(access(tmp, F_OK) == 0);
}

/* Set (replacing) the int64 attribute name of obj. */
static void set_attr_i64(hid_t obj, const char *name, long long v) {
    if (H5Aexists(obj, name) > 0) assert_true(H5Adelete(obj, name) >= 0);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, name, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Awrite(a, H5T_NATIVE_LLONG, &v) >= 0);
    H5Aclose(a);
    H5Sclose(sp);
}

/* Older files: a version-1 probe without gate_shared takes /config's (the
 * upgrade); the current version must carry it; versions outside 1..2 are
 * refused by the reader and by the writers that reopen a file. */
static void test_schema_versions(void **state) {
    (void)state;
    char path[512], err[512] = "", g[64];
    tu_scratch_path(path, sizeof path, "versions.h5");
    Probe q;
    write_closed_run(path, &q);
    snprintf(g, sizeof g, RS_PROBE_PATH_FMT, 2LL);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t pg = H5Gopen2(f, g, H5P_DEFAULT), cg = H5Gopen2(f, RS_G_CONFIG, H5P_DEFAULT);
    assert_true(pg >= 0 && cg >= 0);
    assert_true(H5Adelete(pg, RS_P_GATE_SHARED) >= 0);
    set_attr_i64(cg, RS_CFG_GATE_SHARED, 1);
    H5Gclose(pg);
    H5Gclose(cg);
    H5Fclose(f);

    /* the current version: the missing attribute is refused, naming it */
    ProbeRecord p;
    RunReader *r = runread_open(path, err, sizeof err);
    if (!r) fail_msg("%s", err);
    assert_int_equal(runread_probe(r, -1, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "gate_shared"));
    tu_assert_msg_line(err);
    runread_close(r);

    /* version 1: upgraded from /config */
    static const long long versions[] = {1, 0, RUNFILE_SCHEMA_VERSION + 1};
    for (int i = 0; i < 3; i++) {
        f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
        assert_true(f >= 0);
        set_attr_i64(f, RS_SCHEMA_VERSION, versions[i]);
        H5Fclose(f);
        r = runread_open(path, err, sizeof err);
        if (i > 0) {
            assert_null(r);
            assert_non_null(strstr(err, "schema_version"));
            assert_null(runfile_reopen(path, -1, err, sizeof err));
            assert_non_null(strstr(err, "schema_version"));
            continue;
        }
        if (!r) fail_msg("%s", err);
        assert_int_equal(runread_meta(r)->schema_version, 1);
        if (runread_probe(r, -1, &p, err, sizeof err) != 0) fail_msg("%s", err);
        assert_int_equal(p.gate_shared, 1);
        runread_probe_free(&p);
        runread_close(r);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe_table_roundtrip),
        cmocka_unit_test(test_intervention_roundtrip),
        cmocka_unit_test(test_schema_versions),
    };
    return cmocka_run_group_tests(tests, tu_scratch_setup_h5quiet, tu_scratch_teardown);
}
