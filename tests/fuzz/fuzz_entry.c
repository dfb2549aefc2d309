/* fuzz_entry.c: see fuzz_entry.h. Inputs that must be files (sweep file,
 * run file, token file) are written to a per-process temporary file. */
#include "fuzz_entry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ini.h>

#include "config.h"
#include "data.h"
#include "protocol.h"
#include "runfile_read.h"
#include "runlock.h"
#include "safetensors.h"
#include "sweep.h"

/* Write the input to /tmp/gatelab-fuzz-PID.TAG; the path in static storage. */
static const char *to_file(const char *tag, const uint8_t *data, size_t size) {
    static char p[128];
    snprintf(p, sizeof p, "/tmp/gatelab-fuzz-%ld.%s", (long)getpid(), tag);
    FILE *f = fopen(p, "wb");
    if (!f) return NULL;
    if (size && fwrite(data, 1, size, f) != size) {
        fclose(f);
        return NULL;
    }
    fclose(f);
    return p;
}

static int count_key(void *user, const char *section, const char *name, const char *value) {
    (void)section, (void)name, (void)value;
    ++*(int *)user;
    return 1;
}

/* A preset that loads, written twice in a row, sets its first key (or its
 * `variant`) twice in one scope: it must be refused as a duplicate key.
 * Both are read as presets are, as files: a recorded config (the fuzzed
 * string) reads a retired key as a no-op, which a preset refuses. */
static void check_doubled(const char *text) {
    int keys = 0;
    ini_parse_string(text, count_key, &keys);
    if (keys == 0) return;
    size_t n = strlen(text);
    char *two = malloc(2 * n + 2), err[512] = "";
    if (!two) return;
    memcpy(two, text, n);
    two[n] = '\n';
    memcpy(two + n + 1, text, n + 1);
    Config c;
    config_defaults(&c);
    const char *once = to_file("once.ini", (const uint8_t *)text, n);
    int loads = once && config_load_file(&c, once, err, sizeof err) == 0;
    if (once) unlink(once);
    if (!loads) {
        free(two);
        return;
    }
    const char *twice = to_file("twice.ini", (const uint8_t *)two, 2 * n + 1);
    config_defaults(&c);
    int refused = twice && config_load_file(&c, twice, err, sizeof err) != 0;
    if (twice) unlink(twice);
    fuzz_assert(refused);
    /* (or the first copy's last, empty, section now holds the second's
     * first key: an unknown section) */
    fuzz_assert(strstr(err, "duplicate key") || strstr(err, "unknown section"));
    free(two);
}

int fuzz_config_one(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1), err[512], buf[1 << 16];
    if (!text) return 1;
    memcpy(text, data, size);
    text[size] = 0; /* the API takes a C string; embedded NULs just cut it */
    Config c;
    config_defaults(&c);
    int rc = config_load_string(&c, text, "fuzz.ini", err, sizeof err);
    if (rc == 0) check_doubled(text);
    if (rc == 0) {
        config_resolve(&c);
        if (c.vocab_size <= 0) c.vocab_size = 257;
        rc = config_validate(&c, err, sizeof err);
        /* a valid config must round-trip through its own text form */
        if (rc == 0 && config_to_text(&c, buf, sizeof buf) == 0) {
            Config d;
            config_defaults(&d);
            fuzz_assert(config_load_string(&d, buf, "roundtrip", err, sizeof err) == 0);
        }
    }
    /* the same text as one --set override */
    Config e;
    config_defaults(&e);
    config_set(&e, text, err, sizeof err);
    free(text);
    return rc != 0;
}

int fuzz_sweepfile_one(const uint8_t *data, size_t size) {
    const char *p = to_file("sweep", data, size);
    if (!p) return 1;
    Sweep sw;
    char err[512];
    int rc = sweep_parse(p, &sw, err, sizeof err);
    if (rc == 0) {
        for (int i = 0; i < sw.n_runs; i++) /* touch every expanded field */
            fuzz_assert(strlen(sw.runs[i].out_name) + strlen(sw.runs[i].preset) <= 1u << 20);
        sweep_free(&sw);
    }
    unlink(p);
    return rc != 0;
}

int fuzz_protocol_one(const uint8_t *data, size_t size) {
    const char *p = to_file("ini", data, size);
    if (!p) return 1;
    Protocol pr;
    char err[512] = "";
    memset(&pr, 0, sizeof pr);
    int rc = protocol_read(p, &pr, err, sizeof err);
    unlink(p);
    if (rc != 0) {
        fuzz_assert(rc == -1 && err[0] && !strchr(err, '\n'));
        return 1;
    }
    fuzz_assert(pr.n_metrics >= 0 && pr.n_metrics <= PROTO_METRIC_SLOTS);
    fuzz_assert(pr.n_compares >= 0 && pr.n_compares <= PROTO_MAX);
    fuzz_assert(pr.n_claims >= 0 && pr.n_claims <= PROTO_MAX);
    for (int i = 0; i < pr.n_compares; i++)
        fuzz_assert(memchr(pr.compares[i].arm, 0, PROTO_ARM_MAX) &&
                    memchr(pr.compares[i].ref, 0, PROTO_ARM_MAX));
    for (int i = 0; i < pr.n_claims; i++)
        fuzz_assert(pr.claims[i].compare >= (pr.claims[i].rel == PR_SINK_FREE ? -1 : 0) &&
                    pr.claims[i].compare < pr.n_compares &&
                    memchr(pr.claims[i].arm, 0, PROTO_ARM_MAX) &&
                    proto_metric_name(pr.claims[i].metric));
    return 0;
}

/* Everything the analysis tools read: meta, config, summary, metrics and
 * every probe. */
int fuzz_runread_one(const uint8_t *data, size_t size) {
    const char *p = to_file("h5", data, size);
    if (!p) return 1;
    char err[512], s[256];
    RunReader *r = runread_open(p, err, sizeof err);
    if (!r) {
        unlink(p);
        return 1;
    }
    double v;
    (void)runread_meta(r);
    runread_config_double(r, "d_model", &v, err, sizeof err);
    runread_config_string(r, "variant", s, sizeof s, err, sizeof err);
    runread_summary(r, "final_val_loss", &v, err, sizeof err);
    RunTrain t;
    volatile double sink = 0; /* touch every element as the tools do */
    if (runread_train(r, &t, err, sizeof err) == 0) {
        for (size_t i = 0; i < t.n; i++)
            sink += (double)t.step[i] + t.loss[i] + t.lr[i] + t.grad_norm[i] + t.seconds[i] +
                    (double)t.tokens[i];
        runread_train_free(&t);
    }
    RunEval e;
    if (runread_eval(r, &e, err, sizeof err) == 0) {
        for (size_t i = 0; i < e.n; i++) sink += (double)e.step[i] + e.val_loss[i] + e.val_bpb[i];
        runread_eval_free(&e);
    }
    (void)sink;
    long long *steps = NULL;
    int n = 0, refused = 0;
    if (runread_probe_steps(r, &steps, &n, err, sizeof err) == 0) {
        for (int i = 0; i < n && i < 8; i++) {
            ProbeRecord pr;
            if (runread_probe(r, steps[i], &pr, err, sizeof err) == 0) runread_probe_free(&pr);
            else refused = 1;
        }
        free(steps);
    }
    runread_close(r);
    unlink(p);
    return refused;
}

/* data=tokens over the input as both splits, then a few batches. */
int fuzz_tokens_one(const uint8_t *data, size_t size) {
    const char *p = to_file("tok", data, size);
    if (!p) return 1;
    Config c;
    char err[512];
    config_defaults(&c);
    c.data = DATA_TOKENS;
    snprintf(c.train_file, sizeof c.train_file, "%s", p);
    snprintf(c.val_file, sizeof c.val_file, "%s", p);
    c.seq_len = 8;
    int rc = 1, v = data_vocab_size(&c, err, sizeof err);
    if (v > 0) {
        c.vocab_size = v;
        Dataset ds;
        if (data_open(&ds, &c, err, sizeof err) == 0) {
            int in[2 * 8], tg[2 * 8];
            for (int s = 0; s < 3; s++) {
                data_batch(&ds, in, tg, 2, 8, SPLIT_TRAIN, 1, s);
                data_batch(&ds, in, tg, 2, 8, SPLIT_VAL, 1, s);
                for (int i = 0; i < 16; i++)
                    fuzz_assert(in[i] >= 0 && in[i] < v && tg[i] >= 0 && tg[i] < v);
            }
            data_close(&ds);
            rc = 0;
        }
    }
    unlink(p);
    return rc;
}

/* A safetensors file's bytes (header + data), parsed in memory; on
 * success every tensor must lie inside the input, agree with its shape,
 * and convert (the first elements) when it is a float type. */
int fuzz_safetensors_one(const uint8_t *data, size_t size) {
    StTensor *t;
    size_t n;
    char err[512];
    if (st_parse(data, size, "fuzz.safetensors", 0, &t, &n, err, sizeof err) < 0) {
        fuzz_assert(err[0] && !strchr(err, '\n'));
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        fuzz_assert(t[i].data >= data && t[i].nbytes <= size &&
                    (size_t)(t[i].data - data) <= size - t[i].nbytes);
        fuzz_assert(t[i].nbytes == t[i].numel * st_dtype_size(t[i].dtype));
        float buf[16];
        size_t k = t[i].numel < 16 ? t[i].numel : 16;
        if (t[i].dtype == ST_F32 || t[i].dtype == ST_BF16 || t[i].dtype == ST_F16)
            fuzz_assert(st_to_f32(&t[i], 0, k, buf, err, sizeof err) == 0);
    }
    st_tensors_free(t, n);
    return 0;
}

/* The lock file's parser (runlock.h): an accepted input names a
 * pid in 1..2^31-1, and what a writer writes for it parses back the same. */
int fuzz_runlock_one(const uint8_t *data, size_t size) {
    long pid = -1;
    if (runlock_parse((const char *)data, size, &pid) != 0) return 1;
    fuzz_assert(pid >= 1 && pid <= 0x7fffffffL);
    char buf[32];
    int k = snprintf(buf, sizeof buf, "pid %ld\n", pid);
    long back = -1;
    fuzz_assert(k > 0 && runlock_parse(buf, (size_t)k, &back) == 0 && back == pid);
    return 0;
}
