/* fpmode.c: subnormals flushed to zero, or not (see fpmode.h). */
#include "fpmode.h"

#if defined(__SSE2__)
#include <pmmintrin.h>
#include <xmmintrin.h>

void fp_flush_subnormals(int on) {
    _MM_SET_FLUSH_ZERO_MODE(on ? _MM_FLUSH_ZERO_ON : _MM_FLUSH_ZERO_OFF);
    _MM_SET_DENORMALS_ZERO_MODE(on ? _MM_DENORMALS_ZERO_ON : _MM_DENORMALS_ZERO_OFF);
}

int fp_flushing(void) {
    const unsigned both = _MM_FLUSH_ZERO_ON | _MM_DENORMALS_ZERO_ON;
    return (_mm_getcsr() & both) == both;
}

const char *fp_mode_name(void) { return fp_flushing() ? "ftz+daz" : "ieee"; }
#else
void fp_flush_subnormals(int on) { (void)on; }
const char *fp_mode_name(void) { return "ieee"; }
int fp_flushing(void) { return 0; }
#endif
