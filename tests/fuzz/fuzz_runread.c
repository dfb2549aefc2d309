/* fuzz_runread.c: libFuzzer target; the work is fuzz_runread_one (fuzz_entry.c).
 * runread_open's vetting child (src/runfile/runfile_read.c) is off by default here,
 * so crashes inside libhdf5 reach the fuzzer directly; run with
 * GATELAB_NO_VET=0 to fuzz with the vetting on. */
#include "fuzz_entry.h"

#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    setenv("GATELAB_NO_VET", "1", 0); /* 0: an explicit setting wins */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_assert_verdict(fuzz_runread_one(data, size));
    return 0;
}
