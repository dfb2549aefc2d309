/* fingerprint.h: a build's training fingerprint. Every id of the variant
 * catalog is trained for FINGERPRINT_STEPS steps at the fingerprint's own
 * tiny setting (fingerprint.c, FP_SETS), in this process, and its final
 * weights (/params, the float arena in its stored order) are hashed with
 * FNV-1a 64; the fingerprint is FNV-1a 64 over the lines "ID HASH\n" in
 * catalog order. Two builds with equal fingerprints train every variant to
 * the same bits at that setting; a confirmatory sweep pins its build's in
 * protocol.ini (`training =`), and refuses to add runs to a study whose
 * pinned fingerprint differs. tests/params_hashes.sh compares builds the
 * same way from outside (any build, with h5dump and sha256). */
#ifndef GATELAB_FINGERPRINT_H
#define GATELAB_FINGERPRINT_H

#include <stddef.h>

#include "util.h" /* PROTOCOL_HASH_LEN */

/* Called after each id with its hash ("fnv1a64:..."), for a listing. */
typedef void (*FingerprintEach)(void *user, const char *id, const char *hash);

/* This build's fingerprint into out ("fnv1a64:" and 16 hex digits), each
 * id's hash through each (may be NULL). Trains in a fresh directory under
 * $TMPDIR (or /tmp), removed after; or, when keep is not NULL, in the new
 * directory keep (refused when it exists), whose run files ID.h5 stay. Under the test hook
 * GATELAB_TEST_FINGERPRINT (env.h) its value, when well formed, is the
 * fingerprint and nothing is trained. 0, or -1 with one line naming the id
 * that failed. */
int training_fingerprint(char out[PROTOCOL_HASH_LEN], FingerprintEach each, void *user,
                         const char *keep, char *err, size_t errlen);

#endif
