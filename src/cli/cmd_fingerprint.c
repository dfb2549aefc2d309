/* cmd_fingerprint.c: `gatelab fingerprint`: this build's training
 * fingerprint (fingerprint.h), each catalog id's hash and the whole. */
#include <stdio.h>

#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "fingerprint.h"

typedef struct {
    const char *keep; /* NULL: train in a temporary directory */
} FingerprintOpts;
static const FingerprintOpts fingerprint_defaults = {NULL};

static const OptRow fingerprint_rows[] = {
    {'k', "keep", OPT_STR, "DIR", 0, 0, NULL,
     "train in the new directory DIR and keep its\nrun files (ID.h5), to check the hashes", 0, 0,
     &fingerprint_defaults.keep},
    {0}};
const OptTable fingerprint_options = {
    .cmd = "fingerprint",
    .operands = "[--keep DIR]",
    .about = "Print this build's training fingerprint: every id of the variant\n"
             "catalog trained a few steps at a fixed tiny setting, its final weights\n"
             "hashed (FNV-1a 64), one line \"ID HASH\" each, then \"training HASH\"\n"
             "over them all. Two builds that print the same last line train every\n"
             "variant to the same bits. A confirmatory sweep pins it in protocol.ini\n"
             "(training =) and refuses to add runs to a study pinned with another\n"
             "(results/README.md). A few seconds on one core.\n",
    .rows = fingerprint_rows,
    OPT_DEFAULTS(fingerprint_defaults),
};

static void print_id(void *user, const char *id, const char *hash) {
    (void)user;
    printf("%s %s\n", id, hash);
    fflush(stdout);
}

int cmd_fingerprint(int argc, char **argv) {
    FingerprintOpts o;
    int at = opt_parse_all(&fingerprint_options, &o, argc, argv);
    if (at < 0) return opt_exit(at);
    if (at != argc) {
        fprintf(stderr, "gatelab fingerprint: takes no arguments (try --help)\n");
        return 2;
    }
    char fp[PROTOCOL_HASH_LEN], err[1200];
    if (training_fingerprint(fp, print_id, NULL, o.keep, err, sizeof err) != 0) {
        fprintf(stderr, "gatelab fingerprint: %s\n", err);
        return 1;
    }
    printf("training %s\n", fp);
    return 0;
}
