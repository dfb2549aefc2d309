/* util.h: small helpers every module shares: errors, allocation, time. */
#ifndef GATELAB_UTIL_H
#define GATELAB_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Write a one-line error into err[errlen] (printf-style); returns -1 so
 * callers can `return seterr(err, len, "...")`. */
int seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* s as it may stand inside a one-line message: at most len - 4 of its
 * bytes, each outside printable ASCII shown as '?', and "..." when cut.
 * Writes buf[len] (len >= 8) and returns buf. For values read from a
 * user's file (names, kinds) that a message quotes. */
const char *err_shown(char *buf, size_t len, const char *s);

/* calloc of n floats with an overflow check; NULL on failure. */
float *falloc(size_t n);
/* Aligned (64 B) zeroed allocation of bytes; NULL on failure. A block of
 * 2 MiB or more (an arena of activations or gradients, the parameters) is
 * aligned to 2 MiB and asks the kernel for transparent huge pages
 * (madvise: where the system's THP setting is "madvise", only such blocks
 * get them; "never" leaves every block on 4 KiB pages): the products
 * read their operands' rows thousands of bytes apart, and on 4 KiB pages
 * each row is a TLB entry of its own. Free it with free(). */
void *zalloc_aligned(size_t bytes);

/* Monotonic wall clock in seconds. */
double now_seconds(void);

/* Copy src into dst[dstlen]; returns -1 when it does not fit. */
int str_copy(char *dst, size_t dstlen, const char *src);
/* s without its leading and trailing blanks (isspace), in place. */
char *str_trim(char *s);

int file_exists(const char *path);

/* The one character rule for every name that reaches Markdown, CSV, a file
 * name or a shell word: a run (a sweep's [run NAME], a run file's name as
 * `report` finds it), an arm of [primary]. 1 when s is not empty, holds
 * only NAME_RULE's characters and starts with neither '.' nor '-'; else 0. */
int name_plain(const char *s);
#define NAME_RULE "letters, digits and . _ + - (not first: . -)"

/* Every input a command reads (config, preset, token and data files, run
 * files, checkpoints) goes through one of these three first: path, links
 * followed, must be a regular file. It is opened O_NONBLOCK and fstat'ed,
 * so a FIFO is refused at once instead of blocking; then blocking mode is
 * restored. -1 with one line naming the path and what it is ("PATH: is a
 * directory, not a regular file") or the open error ("PATH: cannot open:
 * Permission denied"). input_open returns the descriptor, input_check
 * closes it again (for readers that open by name, e.g. HDF5), input_fopen
 * returns a read-only FILE. */
int input_open(const char *path, char *err, size_t errlen);
int input_check(const char *path, char *err, size_t errlen);
FILE *input_fopen(const char *path, char *err, size_t errlen);
/* The whole of PATH, opened with input_fopen, in one malloc'ed buffer with
 * a NUL after the *len bytes read. A file over max bytes is an error.
 * NULL with one line naming the path. */
char *input_slurp(const char *path, size_t max, size_t *len, char *err, size_t errlen);

/* s with every control character (newline, CR, tab, ...) made a space,
 * so a message that quotes its input stays one line. Returns s. */
char *one_line(char *s);

/* The edit distance (insertions, deletions, substitutions, swaps of two
 * neighbours) between a and b, for "did you mean" hints; words longer than 63 bytes count as
 * (size_t)-1, far from everything. */
size_t str_edits(const char *a, const char *b);

/* mkdir -p: path and every missing directory above it (mode 0777 less
 * the umask). 0 when path is then a directory; -1 with errno set
 * (ENOTDIR when it exists as something else, ENAMETOOLONG over 4095
 * bytes). */
int dir_make(const char *path);

/* s as a file-name piece into out[n]: [A-Za-z0-9._-] kept, every other
 * byte made '_', cut at n - 1 bytes; "run" when s is empty. */
void name_for_file(char *out, size_t n, const char *s);

/* What a file mode is, in words ("a directory", "a FIFO", ...). */
const char *file_kind(unsigned mode);

/* path[n] = the repository file rel (e.g. "tests/reference/x.py"): under
 * the source root configured at build time when it is there, else beside
 * the binary's parent directory (build/.. of /proc/self/exe). -1 if
 * neither exists. Works from any working directory. */
int source_file(const char *rel, char *path, size_t n);

/* FNV-1a 64 of p[n], continuing from h (start a hash at FNV1A64_OFFSET):
 * fnv1a64(fnv1a64(FNV1A64_OFFSET, a, na), b, nb) hashes a then b. */
#define FNV1A64_OFFSET 14695981039346656037ULL
uint64_t fnv1a64(uint64_t h, const void *p, size_t n);
/* The hash a protocol text is known by (docs/runfile.md /protocol):
 * "fnv1a64:" and the 16 lower-case hex digits of FNV-1a 64 over its exact
 * n bytes, into out[PROTOCOL_HASH_LEN]. */
#define PROTOCOL_HASH_LEN 25
void protocol_hash_text(const void *p, size_t n, char out[PROTOCOL_HASH_LEN]);
/* The same hash of the whole file at path (opened with input_fopen),
 * read in 1 MiB pieces so a file of any size is fine. -1 with one line
 * naming the path. */
int input_hash(const char *path, char out[PROTOCOL_HASH_LEN], char *err, size_t errlen);

#endif
