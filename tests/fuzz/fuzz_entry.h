/* fuzz_entry.h: one entry function per fuzz target, shared by the
 * libFuzzer wrappers (tests/fuzz/fuzz_*.c) and the regression test
 * (tests/test_fuzz_regressions.c), so a crashing input found by the fuzzer
 * is replayed through exactly the same code in the normal suite.
 * Each returns 0 when the input was accepted, 1 when refused with an error
 * (both fine); a bug shows up as a sanitizer report or a crash. */
#ifndef GATELAB_FUZZ_ENTRY_H
#define GATELAB_FUZZ_ENTRY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* An invariant of the code under test; breaking it is a bug the fuzzer must
 * report, so it aborts (a crash is what libFuzzer records). Not assert():
 * the meson suite replays these entries in a release build (NDEBUG). */
#define fuzz_assert(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_assert failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* The entries' contract: 0 accepted, 1 refused; any other value is a bug.
 * rc is evaluated once: it is the call to the entry. */
#define fuzz_assert_verdict(rc)                                                                    \
    do {                                                                                           \
        int verdict_ = (rc);                                                                       \
        fuzz_assert(verdict_ == 0 || verdict_ == 1);                                               \
    } while (0)

int fuzz_config_one(const uint8_t *data, size_t size);
int fuzz_sweepfile_one(const uint8_t *data, size_t size);
/* The [primary] section of a sweep's protocol.ini, as `report` reads it
 * (protocol_read): every comparison names two arms of run-name length,
 * every claim a declared metric and a comparison (a sink-free claim: none,
 * and its arm of run-name length). */
int fuzz_protocol_one(const uint8_t *data, size_t size);
int fuzz_runread_one(const uint8_t *data, size_t size);
int fuzz_tokens_one(const uint8_t *data, size_t size);
int fuzz_safetensors_one(const uint8_t *data, size_t size);
int fuzz_runlock_one(const uint8_t *data, size_t size);

#endif
