/* data_files.h: which data files a run trained on, and whether a later
 * reader reads the same bytes.
 *
 * A run on data files (data = tokens or text: train_file and val_file)
 * records, as it starts, each file's real absolute path and the hash of
 * its bytes (input_hash, util.h) under /data_files (runschema.h RS_DF_*,
 * docs/runfile.md). Every later reader of a run's data (eval, intervene,
 * stream through forward_trained.c; a resume through train_loop.c) checks
 * the files against that record before it uses them, so a run is never
 * measured on other data than it was trained on. */
#ifndef GATELAB_DATA_FILES_H
#define GATELAB_DATA_FILES_H

#include <stddef.h>
#include "config.h"
#include "runfile.h"
#include "runfile_read.h"
#include "util.h"

#define DATA_FILES_PATH 4096

/* The train and val files of a run, as recorded or as found; n is 0 for
 * data without files (brown, bigram) and for a run file without the
 * record (older runs), else 2. */
typedef struct {
    int n;
    char path[2][DATA_FILES_PATH];
    char hash[2][PROTOCOL_HASH_LEN];
} DataFiles;

/* cfg's data files with their real paths and hashes (n = 0 for data
 * without files). -1 with one line naming the file. */
int data_files_ident(const Config *cfg, DataFiles *out, char *err, size_t errlen);

/* Record cfg's data files in a fresh run file (nothing for data without
 * files). -1 with one line. */
int data_files_record(RunFile *rf, const Config *cfg, char *err, size_t errlen);

/* The record of run file rr (n = 0 when it has none). -1 with one line
 * when the record is there but incomplete. */
int data_files_load(RunReader *rr, DataFiles *out, char *err, size_t errlen);

/* Before a reader of run `run` opens cfg's data: with follow, cfg's
 * train_file and val_file become the recorded paths (a recorded path that
 * cannot be opened falls back to the configured one); then each file is
 * hashed and must match the record, else -1 with one line naming the run,
 * the file read and both hashes. A run without a record is read as
 * configured after a one-line warning on stderr. */
int data_files_check(Config *cfg, const DataFiles *rec, const char *run, int follow, char *err,
                     size_t errlen);

#endif
