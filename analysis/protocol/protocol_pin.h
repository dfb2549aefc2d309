/* protocol_pin.h: what a confirmatory sweep pins in OUT/protocol.ini
 * beside its [primary] section, so that the report can check the
 * protocol against git and against the runs it finds (docs/sweeps.md,
 * "Confirmatory sweeps"):
 *
 *   # the [primary] section of FILE (gatelab sweep wrote this file)
 *   [primary]            ; the sweep file's [primary], key = value lines
 *   [source]             ; sweep_file, sweep_commit, sweep_dirty, uncommitted
 *   [pin]
 *   repo = /abs/top      ; the repository the files are in ("" when none)
 *   file = COMMIT HASH REL  ; the sweep file, then each include, then each
 *                           ; preset: its last commit ("none": never),
 *                           ; protocol_hash_text of its bytes, its path in
 *                           ; the repository (absolute outside one)
 *   gatelab = VERSION (git DESCRIBE)   ; the build that ran the sweep
 *   rules = RULES                      ; proto_rules() of that build
 *   [runs]
 *   run = NAME SEED SEED ...           ; the expanded run list, names x
 *                                      ; seeds (a name may take several
 *                                      ; lines)
 *
 * The report (protocol_check.h) holds each file's hash to `git cat-file
 * blob COMMIT:REL`, the [primary] lines to the committed sweep file's,
 * the rules to its own and the run list to the run files present. */
#ifndef GATELAB_PROTOCOL_PIN_H
#define GATELAB_PROTOCOL_PIN_H

#include <stddef.h>

#include "util.h" /* PROTOCOL_HASH_LEN */

/* The first line of every protocol.ini the sweep writes, up to the file
 * name: a file that does not start so was not written by `gatelab sweep`
 * and is never replaced. */
#define PIN_HEADER "# the [primary] section of "
#define PIN_PATH_MAX 1024
#define PIN_LINE_SEEDS 150 /* a `run =` line's seeds, in characters */

/* The version of the confirmatory analysis's rules (the tests, the
 * family, the direction and untestable rules of confirm_tests.c and
 * report_confirm.c): raise it whenever they change what a report says
 * about the same runs. */
#define PIN_RULES_VERSION "confirm-rules 2"
#define CONFIRM_ALPHA 0.05 /* the confirmatory tests' significance level */

/* "confirm-rules 2, alpha 0.05": the rules and the significance level
 * this build applies, into out[n]. */
void pin_rules(char *out, size_t n);
/* "0.1.0 (git DESCRIBE)": the build, as run files record it. */
const char *pin_build(void);

typedef struct {
    char commit[64];
    char hash[PROTOCOL_HASH_LEN];
    char rel[PIN_PATH_MAX];
} PinFile;

typedef struct {
    char name[96];
    unsigned long long seed;
} PinRun;

/* A protocol.ini's [source], [pin] and [runs] ("unknown", -1 and empty
 * where the file lacks them: written by a build that pinned nothing). */
typedef struct {
    char sweep_file[PIN_PATH_MAX], sweep_commit[64];
    int sweep_dirty, uncommitted;
    int has_pin, has_runs;
    char repo[PIN_PATH_MAX];
    char unchecked[PIN_PATH_MAX + 96]; /* why no repository was pinned ("": none said) */
    char gatelab[160], rules[160];
    /* the sweep's build's training fingerprint (src/cli/fingerprint.h;
     * "": not pinned) */
    char training[64];
    int n_files, n_runs;
    PinFile *files;
    PinRun *runs;
    char *primary; /* its families as pin_primary gives them */
} ProtocolPin;

/* Reads the protocol file path (its text, when not NULL, instead of the
 * file). 0, or -1 with one line naming the file and line. */
int pin_read(const char *path, const char *text, ProtocolPin *p, char *err, size_t errlen);
void pin_free(ProtocolPin *p);

/* The [primary] and [secondary] sections of an INI text as "key = value\n"
 * lines ([secondary]'s keys as "secondary.KEY"), comments and layout
 * dropped (malloc'd; "" when it has none), or NULL with a reason. name is
 * the name errors give. */
char *pin_primary(const char *name, const char *text, char *err, size_t errlen);

#endif
