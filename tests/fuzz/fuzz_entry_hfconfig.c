/* fuzz_entry_hfconfig.c: fuzz_hfconfig_one (fuzz_entry_hf.h), apart from
 * fuzz_entry_hf.c because config.json is read by gatelab_hf, not by the
 * tokenizer library test_hf_tokenizer links. */
#include "fuzz_entry_hf.h"

#include <string.h>

#include "hf_config.h"

int fuzz_hfconfig_one(const uint8_t *data, size_t size) {
    HfArch a;
    char err[512] = "";
    memset(&a, 0, sizeof a);
    if (hf_config_parse(&a, (const char *)data, size, "config.json", err, sizeof err) < 0) {
        fuzz_assert(err[0] != 0 && strchr(err, '\n') == NULL);
        return 1;
    }
    fuzz_assert(a.L > 0 && a.d > 0 && a.H > 0 && a.Hkv > 0 && a.dh > 0 && a.ff > 0 && a.V > 0);
    fuzz_assert(a.H % a.Hkv == 0);
    fuzz_assert(hf_q_rows(&a) >= a.H * a.dh);
    fuzz_assert(memchr(a.arch, 0, sizeof a.arch) && memchr(a.model_type, 0, sizeof a.model_type));
    return 0;
}
