/* fingerprint.c: the training fingerprint (fingerprint.h). */
#include "fingerprint.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config_args.h"
#include "data.h"
#include "env.h"
#include "runfile_read.h"
#include "runmodel.h"
#include "train_loop.h"

/* The fingerprint's own setting: two blocks with grouped keys (so every
 * shape path runs), bigram data made in process, a few steps past warmup.
 * Changing a row changes every fingerprint. */
static char *const FP_SETS[] = {
    "n_layers=2",   "d_model=32",      "n_heads=2",         "n_kv_heads=1", "seq_len=32",
    "data=bigram",  "bigram_vocab=64", "bigram_triggers=3", "batch_size=4", "steps=12",
    "warmup=4",     "eval_every=12",   "ckpt_every=12",     "probe_n=2",    "eval_batches=1",
    "log_every=12", "threads=1",       "init_seed=1",       "data_seed=1",
};
#define N_FP_SETS (int)(sizeof FP_SETS / sizeof FP_SETS[0])

/* Every file in dir, then dir, removed (the run file, its checkpoint, log
 * and lock: what train_run writes). */
static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[4400];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    if (d) closedir(d);
    rmdir(dir);
}

/* Train id at FP_SETS to dir/ID.h5 and hash its final weights into hash.
 * 0, or -1 with one line. */
static int hash_id(const char *dir, const char *id, char hash[PROTOCOL_HASH_LEN], char *err,
                   size_t errlen) {
    char variant[96], path[4200], why[1024];
    char *sets[N_FP_SETS + 1];
    memcpy(sets, FP_SETS, sizeof FP_SETS);
    snprintf(variant, sizeof variant, "variant=%s", id);
    sets[N_FP_SETS] = variant;
    snprintf(path, sizeof path, "%s/%s.h5", dir, id);
    Config cfg;
    TrainOptions opt = {.out_path = path, .quiet = 1, .progress_fd = -1};
    if (config_from_args(&cfg, NULL, sets, N_FP_SETS + 1, why, sizeof why) != 0 ||
        data_fill_vocab(&cfg, why, sizeof why) != 0 ||
        train_run(&cfg, &opt, why, sizeof why) != TRAIN_OK)
        return seterr(err, errlen, "training fingerprint: %s: %s", id, why);
    RunReader *rr = runread_open(path, why, sizeof why);
    Model m;
    if (!rr || runmodel_load(rr, path, &m, why, sizeof why) != 0) {
        if (rr) runread_close(rr);
        return seterr(err, errlen, "training fingerprint: %s: %s", id, why);
    }
    protocol_hash_text(m.params, m.table.total * sizeof *m.params, hash);
    model_free(&m);
    runread_close(rr);
    return 0;
}

/* 1 when s is "fnv1a64:" and 16 lower-case hex digits. */
static int well_formed(const char *s) {
    if (strncmp(s, "fnv1a64:", 8) || strlen(s) != PROTOCOL_HASH_LEN - 1) return 0;
    return strspn(s + 8, "0123456789abcdef") == 16;
}

/* The directory to train in, made new (keep, or a temporary one) into
 * dir[n]. 0, or -1 with one line. */
static int make_dir(const char *keep, char *dir, size_t n, char *err, size_t errlen) {
    const char *tmp = getenv("TMPDIR");
    if (keep) snprintf(dir, n, "%s", keep);
    else snprintf(dir, n, "%s/gatelab-fingerprint-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (keep ? mkdir(dir, 0777) == 0 : mkdtemp(dir) != NULL) return 0;
    return seterr(err, errlen, "training fingerprint: cannot make %s: %s%s", dir, strerror(errno),
                  keep && errno == EEXIST ? " (--keep wants a new directory)" : "");
}

int training_fingerprint(char out[PROTOCOL_HASH_LEN], FingerprintEach each, void *user,
                         const char *keep, char *err, size_t errlen) {
    const char *hook = env_get("GATELAB_TEST_FINGERPRINT");
    if (hook && well_formed(hook) && !keep) return snprintf(out, PROTOCOL_HASH_LEN, "%s", hook), 0;
    char dir[4096];
    if (make_dir(keep, dir, sizeof dir, err, errlen) != 0) return -1;
    char *lines = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&lines, &len);
    int rc = m ? 0 : seterr(err, errlen, "out of memory");
    for (int i = 0; rc == 0 && variant_id_at(i); i++) {
        char h[PROTOCOL_HASH_LEN];
        rc = hash_id(dir, variant_id_at(i), h, err, errlen);
        if (rc == 0) fprintf(m, "%s %s\n", variant_id_at(i), h);
        if (rc == 0 && each) each(user, variant_id_at(i), h);
    }
    if (m && fclose(m) != 0 && rc == 0) rc = seterr(err, errlen, "out of memory");
    if (rc == 0) protocol_hash_text(lines, len, out);
    free(lines);
    if (!keep) remove_dir(dir);
    return rc;
}
