/* cli_json.c: see cli_json.h. */
#include "cli_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *cj_num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s) {
    int n = s[0] < 0x80             ? 1
            : (s[0] & 0xE0) == 0xC0 ? 2
            : (s[0] & 0xF0) == 0xE0 ? 3
            : (s[0] & 0xF8) == 0xF0 ? 4
                                    : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    return (size_t)n;
}

json_t *cj_str(const char *s) {
    json_t *j = json_string(s ? s : "");
    if (j) return j;
    /* not UTF-8: keep the valid parts, replace each bad byte */
    size_t n = strlen(s);
    char *buf = malloc(3 * n + 1), *o = buf;
    if (!buf) return json_null();
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t k = utf8_len(p);
        if (k) {
            memcpy(o, p, k), o += k, p += k;
        } else {
            memcpy(o, "\xEF\xBF\xBD", 3), o += 3, p++;
        }
    }
    *o = 0;
    j = json_string(buf);
    free(buf);
    return j ? j : json_null();
}

json_t *cj_set(json_t *obj, const char *key, json_t *v) {
    if (obj && v) json_object_set_new(obj, key, v);
    return obj;
}

int cj_print(const char *cmd, json_t *v) {
    /* 9 significant digits: every float32 metric reads back exactly */
    char *s = v ? json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(9) | JSON_ENCODE_ANY) : NULL;
    json_decref(v);
    if (!s) {
        fprintf(stderr, "gatelab %s: cannot build the JSON output (out of memory)\n", cmd);
        return -1;
    }
    int ok = puts(s) >= 0 && fflush(stdout) == 0;
    free(s);
    if (!ok) fprintf(stderr, "gatelab %s: cannot write the JSON output\n", cmd);
    return ok ? 0 : -1;
}

json_t *cj_popen_object(const char *cmd) {
    FILE *p = popen(cmd, "r");
    if (!p) return NULL;
    json_t *last = NULL;
    char line[65536];
    while (fgets(line, sizeof line, p)) {
        if (line[strspn(line, " \t")] != '{') continue;
        json_t *o = json_loads(line, 0, NULL);
        if (!json_is_object(o)) {
            json_decref(o);
            continue;
        }
        json_decref(last);
        last = o;
    }
    if (pclose(p) != 0) {
        json_decref(last);
        return NULL;
    }
    return last;
}

double cj_number(const json_t *obj, const char *key) {
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}
