/* opts.h: a command's options as one table of rows (git's parse-options is
 * the model). Each row carries the option's letter, long name, type,
 * bounds, default and help; from the rows come getopt_long's table and
 * short-option string, the parsed and range-checked values, and the
 * command's --help, so an option is written in one place only.
 *
 * A command runs
 *     OptParser p;
 *     opt_init(&p, &table, argc, argv);
 *     for (int c; (c = opt_next(&p)) != OPT_END;)
 *         switch (c) { case OPT_HELP: return 0; case OPT_BAD: return 2;
 *                      case 'o': out = p.str; break;
 *                      case 'j': jobs = (int)p.num; break; ... }
 * and then reads its operands from argv[p.optind ...]. Every refusal is one
 * line on stderr naming the command and the option. */
#ifndef GATELAB_OPTS_H
#define GATELAB_OPTS_H

#include <getopt.h>
#include <stdio.h>

typedef enum {
    OPT_FLAG,   /* no value */
    OPT_STR,    /* a value, checked by the command */
    OPT_INT,    /* an integer in [lo, hi], checked here before any cast */
    OPT_OPTSTR, /* an optional value (--name or --name=VALUE) */
} OptType;

/* One option. key is its short letter (a printable ASCII character), or a
 * value >= OPT_LONG for a long-only option; opt_next returns it. */
typedef struct {
    int key;
    const char *name; /* long name, without the dashes */
    OptType type;
    const char *arg;  /* the value's name in --help ("N", "FILE"); NULL for flags */
    long long lo, hi; /* OPT_INT's bounds, inclusive */
    const char *def;  /* the default as --help shows it; NULL for none */
    const char *help; /* the help text; '\n' starts a continuation line */
    int repeat;       /* may be given more than once */
    int in_usage;     /* shown in the usage line (the options a call needs) */
} OptRow;

/* A row's def from a numeric macro: OPT_DEF(IV_CLIP_K_DEFAULT) is "3". */
#define OPT_DEF_(x) #x
#define OPT_DEF(x) OPT_DEF_(x)

#define OPT_LONG 256 /* first key of the long-only options */
#define OPT_MAX 32   /* rows per table, --help included */

/* A command's table. The usage line is "usage: gatelab CMD [in_usage
 * options] OPERANDS"; about follows it, then the options, then footer. */
typedef struct {
    const char *cmd;      /* as typed after gatelab: "train", "bench --inspect" */
    const char *operands; /* e.g. "RUN.h5 KIND... [options]" */
    const char *about;    /* paragraphs between the usage line and the options, or NULL */
    const char *footer;   /* text after the options (exit codes ...), or NULL */
    const OptRow *rows;   /* ends with a row whose name is NULL */
    void (*more)(FILE *); /* prints a list the command keeps as a table, after about; or NULL */
} OptTable;

/* What opt_next returns besides a row's key. */
enum { OPT_END = -1, OPT_BAD = -2, OPT_HELP = -3 };

typedef struct {
    const OptTable *t;
    int argc;
    char **argv;
    int optind;       /* after OPT_END: the first operand */
    char *str;        /* the value of the option just returned (NULL for a flag) */
    long long num;    /* an OPT_INT's value */
    const char *name; /* the long name of the option just returned */
    unsigned char seen[OPT_MAX];
    struct option lo[OPT_MAX + 1];
    char shortopts[3 * OPT_MAX + 2];
} OptParser;

/* Set p up to parse argv[1..argc-1] with table t (options and operands may
 * be mixed; "--" ends the options). Resets getopt's state. */
void opt_init(OptParser *p, const OptTable *t, int argc, char **argv);

/* The next option: its row's key with p->str (and p->num for OPT_INT) set;
 * OPT_END when the options are done (operands from p->optind); OPT_HELP
 * after printing the help to stdout (the caller exits 0); OPT_BAD after
 * printing one line (the caller exits 2): an unknown option (with "did
 * you mean --X?" when one is near), a missing value, a number that is not
 * an integer in the row's range, or a second use of an option that is not
 * repeatable. */
int opt_next(OptParser *p);

/* The command's --help, generated from its rows. */
void opt_help(const OptTable *t, FILE *f);

/* The row of t for long name (n bytes), or NULL. */
const OptRow *opt_find(const OptTable *t, const char *name, size_t n);

/* Parse s as a base-10 integer in [lo, hi], with the range checked on the
 * full 64-bit value before the caller narrows it. 0, or -1 when s is empty,
 * has anything after the digits, overflows, or is out of range. */
int parse_ll_range(const char *s, long long lo, long long hi, long long *out);

#endif
