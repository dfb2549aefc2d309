/* data_files.c: recording a run's data files and checking them again
 * (data_files.h). */
#define _DEFAULT_SOURCE /* realpath */
#include "data_files.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runschema.h"

static const char *const DF_NAME[2] = {"train_file", "val_file"};
static const char *const DF_FILE_KEY[2] = {RS_DF_TRAIN_FILE, RS_DF_VAL_FILE};
static const char *const DF_HASH_KEY[2] = {RS_DF_TRAIN_HASH, RS_DF_VAL_HASH};

/* 1 when cfg's data come from train_file and val_file. */
static int has_files(const Config *cfg) {
    return cfg->data == DATA_TOKENS || cfg->data == DATA_TEXT;
}

/* The configured path of file i (0 train, 1 val). */
static const char *cfg_path(const Config *cfg, int i) {
    return i == 0 ? cfg->train_file : cfg->val_file;
}

int data_files_ident(const Config *cfg, DataFiles *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (!has_files(cfg)) return 0;
    for (int i = 0; i < 2; i++) {
        const char *p = cfg_path(cfg, i);
        char real[PATH_MAX];
        if (!realpath(p, real))
            return seterr(err, errlen, "%s %s: cannot resolve it: %s", DF_NAME[i], p,
                          strerror(errno));
        if (str_copy(out->path[i], DATA_FILES_PATH, real))
            return seterr(err, errlen, "%s %s: its real path is too long", DF_NAME[i], p);
        if (input_hash(real, out->hash[i], err, errlen) != 0) return -1;
    }
    out->n = 2;
    return 0;
}

int data_files_record(RunFile *rf, const Config *cfg, char *err, size_t errlen) {
    DataFiles d;
    if (data_files_ident(cfg, &d, err, errlen) != 0) return -1;
    if (d.n == 0) return 0;
    RunDataFiles r = {d.path[0], d.hash[0], d.path[1], d.hash[1]};
    return runfile_write_data_files(rf, &r, err, errlen);
}

int data_files_load(RunReader *rr, DataFiles *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    for (int i = 0; i < 2; i++) {
        int rc = runread_data_file(rr, DF_FILE_KEY[i], out->path[i], DATA_FILES_PATH, err, errlen);
        if (rc == 0)
            rc =
                runread_data_file(rr, DF_HASH_KEY[i], out->hash[i], PROTOCOL_HASH_LEN, err, errlen);
        if (rc == 1) return memset(out, 0, sizeof *out), 0;
        if (rc != 0) return -1;
    }
    out->n = 2;
    return 0;
}

/* File i of cfg checked against rec: with follow the recorded path is
 * read when it can be opened, else the configured one. */
static int check_one(Config *cfg, const DataFiles *rec, int i, const char *run, int follow,
                     char *err, size_t errlen) {
    char *p = i == 0 ? cfg->train_file : cfg->val_file, found[PROTOCOL_HASH_LEN], why[600];
    char configured[CFG_STR];
    snprintf(configured, sizeof configured, "%s", p);
    if (follow && strcmp(p, rec->path[i]) && input_check(rec->path[i], why, sizeof why) == 0) {
        if (str_copy(p, CFG_STR, rec->path[i]))
            return seterr(err, errlen, "%s: the recorded %s %s is too long for a config path", run,
                          DF_NAME[i], rec->path[i]);
    }
    if (input_hash(p, found, why, sizeof why) != 0)
        return seterr(err, errlen, "%s: cannot read %s (recorded %s; configured %s): %s", run,
                      DF_NAME[i], rec->path[i], configured, why);
    if (strcmp(found, rec->hash[i]))
        return seterr(err, errlen,
                      "%s: %s %s (the path read) holds other bytes than the run trained on: hash "
                      "%s, recorded %s for %s; restore the file or train the run again",
                      run, DF_NAME[i], p, found, rec->hash[i], rec->path[i]);
    return 0;
}

int data_files_check(Config *cfg, const DataFiles *rec, const char *run, int follow, char *err,
                     size_t errlen) {
    if (!has_files(cfg)) return 0;
    if (rec->n == 0) {
        fprintf(stderr,
                "warning: %s records no data file hashes (a run file from before they were "
                "recorded): reading train_file %s and val_file %s unchecked\n",
                run, cfg->train_file, cfg->val_file);
        return 0;
    }
    for (int i = 0; i < 2; i++)
        if (check_one(cfg, rec, i, run, follow, err, errlen) != 0) return -1;
    return 0;
}
