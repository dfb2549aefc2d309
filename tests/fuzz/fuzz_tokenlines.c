/* fuzz_tokenlines.c: libFuzzer target; the work is fuzz_tokenlines_one (fuzz_entry_hf.c). */
#include "fuzz_entry_hf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_assert_verdict(fuzz_tokenlines_one(data, size));
    return 0;
}
