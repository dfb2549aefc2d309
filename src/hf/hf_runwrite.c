/* hf_runwrite.c: probe + provenance -> RUN.h5 (see hf_runwrite.h). No
 * /config, /metrics rows or /summary: readers treat those as absent. */
#include "hf_runwrite.h"

#include <unistd.h>

#include "atomic_write.h"
#include "runfile_read.h"
#include "runlock.h"
#include "util.h"

int hf_run_write(const char *out, int force, const ProbeRecord *p, const RunPretrained *info,
                 char *err, size_t errlen) {
    /* one writer per run file (runlock.h), and the output-path rule
     * (outpath.h): a new path, or with force our own run file */
    RunLock lock;
    if (runlock_acquire(&lock, out, err, errlen) != 0) return -1;
    if (runfile_outpath_check(out, force, err, errlen) != 0) {
        runlock_release(&lock);
        return -1;
    }
    /* a fresh temporary that takes OUT's place when complete */
    char tmp[ATOMIC_TMP_MAX];
    int fd = atomic_create(out, tmp, sizeof tmp, err, errlen);
    if (fd >= 0) close(fd);
    RunFile *rf = fd >= 0 ? runfile_create(tmp, NULL, NULL, 1, err, errlen) : NULL;
    if (!rf) {
        if (fd >= 0) atomic_discard(tmp);
        runlock_release(&lock);
        return -1;
    }
    int rc = runfile_write_probe(rf, p, err, errlen);
    if (rc == 0) rc = runfile_write_pretrained(rf, info, err, errlen);
    if (rc == 0) rc = runfile_set_status(rf, RS_STATUS_DONE, err, errlen);
    char cerr[512];
    if (runfile_close(rf, cerr, sizeof cerr) < 0 && rc == 0) rc = seterr(err, errlen, "%s", cerr);
    if (rc == 0) rc = atomic_commit(tmp, out, 1, err, errlen);
    else atomic_discard(tmp);
    runlock_release(&lock);
    return rc;
}
