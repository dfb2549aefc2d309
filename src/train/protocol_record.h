/* protocol_record.h: the protocol file `gatelab train --protocol FILE`
 * records in its run file (protocol_record.c; the file is the
 * OUT/protocol.ini a confirmatory sweep writes, docs/sweeps.md). */
#ifndef GATELAB_PROTOCOL_RECORD_H
#define GATELAB_PROTOCOL_RECORD_H

#include <stddef.h>

#include "util.h" /* PROTOCOL_HASH_LEN */

/* a protocol file is a few kB; an HDF5 attribute holds at most 64 KiB */
#define PROTOCOL_RECORD_MAX (32 << 10)

/* One protocol file: its exact bytes, their hash and its [source]
 * section's keys (sweep_file, sweep_commit, sweep_dirty, uncommitted;
 * "unknown" and -1 for one it lacks). */
typedef struct {
    char *text;
    size_t len;
    char hash[PROTOCOL_HASH_LEN];
    char sweep_file[256], sweep_commit[64];
    int sweep_dirty, uncommitted;
} ProtocolRecord;

/* Reads path into *p (freed by protocol_record_free). 0, or -1 with one
 * line naming the file: unreadable, over PROTOCOL_RECORD_MAX bytes, no
 * [primary] section, or a [source] value that is not what the sweep
 * writes. */
int protocol_record_load(const char *path, ProtocolRecord *p, char *err, size_t errlen);
void protocol_record_free(ProtocolRecord *p);

#endif
