/* fuzz_protocol.c: libFuzzer target; the work is fuzz_protocol_one (fuzz_entry.c). */
#include "fuzz_entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_assert_verdict(fuzz_protocol_one(data, size));
    return 0;
}
