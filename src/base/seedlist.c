/* seedlist.c: see seedlist.h. */
#include "seedlist.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* A decimal, non-negative seed at t (up to *end); 0, or -1. */
static int seed_number(const char *t, char **end, unsigned long long *v) {
    errno = 0;
    *v = strtoull(t, end, 10);
    return isdigit((unsigned char)*t) && !errno ? 0 : -1;
}

/* The seeds lo..hi (of value) after seeds[*n]; 0, or -1 with why. */
static int add_range(const char *value, unsigned long long lo, unsigned long long hi,
                     unsigned long long *seeds, int max, int *n, char *why, size_t whylen) {
    for (unsigned long long v = lo;; v++) {
        for (int i = 0; i < *n; i++)
            if (seeds[i] == v)
                return seterr(why, whylen, "seed %llu listed twice in seeds = %s", v, value);
        if (*n == max)
            return seterr(why, whylen, "too many seeds in '%s' (at most %d)", value, max);
        seeds[(*n)++] = v;
        if (v == hi) return 0;
    }
}

int seed_list_parse(const char *value, unsigned long long *seeds, int max, int *n, char *why,
                    size_t whylen) {
    *n = 0;
    char *tmp = strdup(value), *save = NULL;
    if (!tmp) return seterr(why, whylen, "out of memory");
    int empty_tok = 0, rc = 0;
    for (const char *p = tmp; *p; p++)
        if (*p == ',' && (p == tmp || p[1] == '\0' || p[1] == ',')) empty_tok = 1;
    if (empty_tok || !*str_trim(tmp))
        rc = seterr(why, whylen, "bad seeds list '%s' (expected e.g. 1,2,3 or 1001-1040)", value);
    for (char *t = strtok_r(tmp, ",", &save); !rc && t; t = strtok_r(NULL, ",", &save)) {
        t = str_trim(t);
        char *end = NULL;
        unsigned long long lo, hi;
        int bad = seed_number(t, &end, &lo);
        hi = lo;
        if (!bad && *end == '-') bad = seed_number(end + 1, &end, &hi) || hi < lo;
        if (bad || *end)
            rc = seterr(why, whylen,
                        "bad seed '%s' in seeds = %s (non-negative integers, or LOW-HIGH ranges)",
                        t, value);
        else rc = add_range(value, lo, hi, seeds, max, n, why, whylen);
    }
    free(tmp);
    return rc;
}
