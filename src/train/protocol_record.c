/* protocol_record.c: see protocol_record.h. */
#include "protocol_record.h"

#include <stdlib.h>
#include <string.h>

#include "inifile.h"

typedef struct {
    ProtocolRecord *p;
    int primary; /* a [primary] section was seen */
} SourceCtx;

/* "0" or "1" into *out; -1 for anything else. */
static int flag_of(const char *v, int *out) {
    if (strcmp(v, "0") && strcmp(v, "1")) return -1;
    *out = v[0] == '1';
    return 0;
}

/* A key of the file: [source]'s are read, [primary]'s only noted. */
static int on_key(void *user, const IniLine *l, char *why, size_t whylen) {
    SourceCtx *c = user;
    if (!strcmp(l->section, "primary")) c->primary = 1;
    if (strcmp(l->section, "source")) return 0;
    ProtocolRecord *p = c->p;
    if (!strcmp(l->key, "sweep_file"))
        return str_copy(p->sweep_file, sizeof p->sweep_file, l->value)
                   ? seterr(why, whylen, "sweep_file too long")
                   : 0;
    if (!strcmp(l->key, "sweep_commit"))
        return str_copy(p->sweep_commit, sizeof p->sweep_commit, l->value)
                   ? seterr(why, whylen, "sweep_commit too long")
                   : 0;
    if (!strcmp(l->key, "sweep_dirty"))
        return flag_of(l->value, &p->sweep_dirty)
                   ? seterr(why, whylen, "sweep_dirty '%s' is not 0 or 1", l->value)
                   : 0;
    if (!strcmp(l->key, "uncommitted"))
        return flag_of(l->value, &p->uncommitted)
                   ? seterr(why, whylen, "uncommitted '%s' is not 0 or 1", l->value)
                   : 0;
    return seterr(
        why, whylen,
        "unknown key '%s' in [source] (sweep_file, sweep_commit, sweep_dirty, uncommitted)",
        l->key);
}

int protocol_record_load(const char *path, ProtocolRecord *p, char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    str_copy(p->sweep_file, sizeof p->sweep_file, "unknown");
    str_copy(p->sweep_commit, sizeof p->sweep_commit, "unknown");
    p->sweep_dirty = -1;
    p->text = input_slurp(path, PROTOCOL_RECORD_MAX, &p->len, err, errlen);
    if (!p->text) return -1;
    protocol_hash_text(p->text, p->len, p->hash);
    SourceCtx c = {p, 0};
    IniHandlers h = {on_key, NULL, &c};
    int rc = ini_read(path, p->text, &h, err, errlen);
    if (rc == 0 && !c.primary)
        rc = seterr(err, errlen, "%s: no [primary] section (not a protocol file)", path);
    if (rc != 0) protocol_record_free(p);
    return rc;
}

void protocol_record_free(ProtocolRecord *p) {
    free(p->text);
    p->text = NULL;
}
