/* fpmode.c: subnormals flushed to zero (see fpmode.h). */
#include "fpmode.h"

#if defined(__SSE2__)
#include <pmmintrin.h>
#include <xmmintrin.h>

const char *fp_flush_subnormals(void) {
    _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
    _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
    return fp_mode_name();
}

void fp_ieee(void) {
    _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_OFF);
    _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_OFF);
}

const char *fp_mode_name(void) {
    const unsigned both = _MM_FLUSH_ZERO_ON | _MM_DENORMALS_ZERO_ON;
    return (_mm_getcsr() & both) == both ? "ftz+daz" : "ieee";
}
#else
const char *fp_flush_subnormals(void) { return "ieee"; }
void fp_ieee(void) {}
const char *fp_mode_name(void) { return "ieee"; }
#endif
