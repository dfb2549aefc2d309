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

int fuzz_config_one(const uint8_t *data, size_t size);
int fuzz_sweepfile_one(const uint8_t *data, size_t size);
int fuzz_runread_one(const uint8_t *data, size_t size);
int fuzz_tokens_one(const uint8_t *data, size_t size);

#endif
