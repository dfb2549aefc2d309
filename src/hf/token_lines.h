/* token_lines.h: the --tokens FILE of `gatelab inspect`: one window per
 * line, whitespace-separated (space or tab) decimal token ids, for any
 * tokenizer. Blank lines are skipped. Every id must lie in [0, vocab_size);
 * anything else (a sign, a letter, an id out of range, an overlong line) is
 * a one-line error naming the file, the line and the token. */
#ifndef GATELAB_TOKEN_LINES_H
#define GATELAB_TOKEN_LINES_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int32_t *ids;  /* all windows back to back */
    size_t *start; /* [n_windows + 1]: window w is ids[start[w], start[w+1]) */
    size_t n_windows;
    size_t n_ids;
} TokenLines;

/* Read PATH. max_len > 0 caps the ids of one window. 0, or -1 with a
 * message. */
int token_lines_read(TokenLines *out, const char *path, int32_t vocab_size, size_t max_len,
                     char *err, size_t errlen);
/* The same from memory (name for messages). */
int token_lines_parse(TokenLines *out, const char *text, size_t len, const char *name,
                      int32_t vocab_size, size_t max_len, char *err, size_t errlen);
void token_lines_free(TokenLines *tl);

#endif
