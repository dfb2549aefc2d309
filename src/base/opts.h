/* opts.h: a command's options as one table of rows (git's parse-options is
 * the model). Each row carries the option's letter, long name, type,
 * bounds, default and help; from the rows come getopt_long's table and
 * short-option string, the parsed and range-checked values, and the
 * command's --help, so an option is written in one place only.
 *
 * A command keeps its options in one struct and its defaults in one const
 * copy of it; each row points at its field in that copy (var), and the
 * table names the copy (defaults). The parser stores each value in the
 * same field of the command's own struct, and --help shows the copy's
 * value as the default:
 *     typedef struct { int jobs; const char *out; } Opts;
 *     static const Opts defaults = {4, NULL};
 *     static const OptRow rows[] = {
 *         {'j', "jobs", OPT_INT, "N", 1, 64, NULL, "jobs", 0, 0, &defaults.jobs},
 *         {'o', "out", OPT_STR, "DIR", 0, 0, NULL, "where", 0, 1, &defaults.out}, {0}};
 *     const OptTable x_options = {
 *         .cmd = "x", .operands = "FILE", .rows = rows, OPT_DEFAULTS(defaults)};
 *     ...
 *     Opts o;
 *     int at = opt_parse_all(&x_options, &o, argc, argv);
 *     if (at < 0) return opt_exit(at);
 * then reads its operands from argv[at ...]. A row whose value needs the
 * command's own checks (a list, a pair) has var OPT_SPECIAL; opt_parse
 * returns its key (p.str, p.num set) and the command handles it:
 *     opt_init(&p, &x_options, argc, argv);
 *     for (int c; (c = opt_parse(&p, &o)) != OPT_END;)
 *         switch (c) { case OPT_HELP: return 0; case OPT_BAD: return 2;
 *                      case 'k': ... parse p.str ...; break; }
 * Every refusal is one line on stderr naming the command and the option. */
#ifndef GATELAB_OPTS_H
#define GATELAB_OPTS_H

#include <getopt.h>
#include <stdio.h>

typedef enum {
    OPT_FLAG,   /* no value */
    OPT_STR,    /* a value, checked by the command */
    OPT_INT,    /* an integer in [lo, hi], checked here before any cast */
    OPT_OPTSTR, /* an optional value (--name or --name=VALUE) */
    OPT_LL,     /* OPT_INT into a long long */
} OptType;

/* One option. key is its short letter (a printable ASCII character), or a
 * value >= OPT_LONG for a long-only option; opt_next returns it. var is
 * the option's field in the table's defaults, which the type says how to
 * fill: OPT_FLAG sets an int to 1, OPT_INT stores an int (its bounds
 * within int's), OPT_LL a long long, OPT_STR and OPT_OPTSTR a const char *
 * (OPT_OPTSTR: "" when given without a value). var OPT_SPECIAL: the
 * command handles the key itself. */
typedef struct {
    int key;
    const char *name; /* long name, without the dashes */
    OptType type;
    const char *arg;  /* the value's name in --help ("N", "FILE"); NULL for flags */
    long long lo, hi; /* OPT_INT's and OPT_LL's bounds, inclusive */
    const char *def;  /* the default as --help shows it when it is not the plain
                       * value of var (NULL: var's value: none for a flag or a
                       * NULL string; OPT_NO_DEF: none shown) */
    const char *help; /* the help text; '\n' starts a continuation line */
    int repeat;       /* may be given more than once */
    int in_usage;     /* shown in the usage line (the options a call needs) */
    const void *var;  /* the field in the table's defaults, or OPT_SPECIAL */
} OptRow;

/* A row's var when the command handles its key itself (opt_parse). */
extern const char opt_special[1];
#define OPT_SPECIAL ((const void *)opt_special)
/* A row's def when --help shows no default (var's value is a "not given"). */
#define OPT_NO_DEF ""
/* An OptTable's defaults and size from the command's const defaults, as
 * designated initializers (.defaults, .size). */
#define OPT_DEFAULTS(d) .defaults = &(d), .size = sizeof(d)

/* A row's def text from a numeric macro, for a value var cannot hold (a
 * real number parsed by the command): OPT_DEF(MACT_ABS_MIN) is its digits. */
#define OPT_DEF_(x) #x
#define OPT_DEF(x) OPT_DEF_(x)

#define OPT_LONG 256 /* first key of the long-only options */
#define OPT_MAX 32   /* rows per table, --help included */

/* A command's table. The usage line is "usage: gatelab CMD [in_usage
 * options] OPERANDS"; about follows it, then the options, then footer.
 * Tables name their fields (.cmd = ...), so a field a table leaves out is
 * NULL (0). */
typedef struct {
    const char *cmd;      /* as typed after gatelab: "train", "bench --inspect" */
    const char *operands; /* e.g. "RUN.h5 KIND... [options]" */
    const char *about;    /* paragraphs between the usage line and the options, or NULL */
    const char *footer;   /* text after the options (exit codes ...), or NULL */
    const OptRow *rows;   /* ends with a row whose name is NULL */
    void (*more)(FILE *); /* prints a list the command keeps as a table, after about; or NULL */
    const void *defaults; /* the command's options struct as it starts (OPT_DEFAULTS) */
    size_t size;          /* its size */
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
 * be mixed; "--" ends the options). Resets getopt's state. A row with
 * neither a target in t->defaults nor OPT_SPECIAL (its value would be read
 * and dropped) stops the program here with one line naming it. */
void opt_init(OptParser *p, const OptTable *t, int argc, char **argv);

/* The next option: its row's key with p->str (and p->num for OPT_INT) set;
 * OPT_END when the options are done (operands from p->optind); OPT_HELP
 * after printing the help to stdout (the caller exits 0); OPT_BAD after
 * printing one line (the caller exits 2): an unknown option (with "did
 * you mean --X?" when one is near), a missing value, a number that is not
 * an integer in the row's range, or a second use of an option that is not
 * repeatable. */
int opt_next(OptParser *p);

/* Like opt_next, but a row with a target stores its value in the same
 * field of opts (a struct of the type of t->defaults) and is not
 * returned: only OPT_SPECIAL rows' keys, OPT_END, OPT_HELP and OPT_BAD
 * are. The caller sets opts from t->defaults first. */
int opt_parse(OptParser *p, void *opts);

/* The whole parse of a table without OPT_SPECIAL rows: *opts set from
 * t->defaults, then every option stored. The index of the first operand,
 * or OPT_HELP (help printed) or OPT_BAD (a line printed). */
int opt_parse_all(const OptTable *t, void *opts, int argc, char **argv);

/* A command's exit status for what opt_parse returned: 0 after OPT_HELP,
 * 2 after OPT_BAD. */
int opt_exit(int c);

/* The row's target in opts (a struct of the type of t->defaults), or NULL
 * for a row without one. */
void *opt_target(const OptTable *t, const OptRow *r, void *opts);

/* Whether the option of key was given in what p has parsed so far (for
 * a default that depends on whether a value was chosen). */
int opt_given(const OptParser *p, int key);

/* The command's --help, generated from its rows. */
void opt_help(const OptTable *t, FILE *f);

/* The row of t for long name (n bytes), or NULL. */
const OptRow *opt_find(const OptTable *t, const char *name, size_t n);

/* Parse s as a base-10 integer in [lo, hi], with the range checked on the
 * full 64-bit value before the caller narrows it. 0, or -1 when s is empty,
 * has anything after the digits, overflows, or is out of range. */
int parse_ll_range(const char *s, long long lo, long long hi, long long *out);

#endif
