/* inspect_input.h: the windows `gatelab inspect` runs, from a token-id file
 * (--tokens: one window per line, whitespace-separated integer ids) or
 * from the text of a file through the snapshot's tokenizer.json (--text). */
#ifndef GATELAB_INSPECT_INPUT_H
#define GATELAB_INSPECT_INPUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int N, T;
    int32_t *ids;        /* [N, T] */
    char tokenizer[256]; /* what made the ids (for the run file) */
} HfWindows;

/* Lines of PATH -> windows. seq_len <= 0: the shortest line (plus the BOS);
 * a longer line is cut, a shorter one is an error naming the line. n_seq
 * <= 0: every line. bos_id >= 0 is put first in each window. Ids must lie
 * in [0, vocab). */
int hf_windows_from_token_file(HfWindows *w, const char *path, int seq_len, int n_seq, int bos_id,
                               int vocab, char *err, size_t errlen);
/* Consecutive windows of a token stream: each is [bos] + T-1 ids (or T
 * ids without a BOS); n_seq <= 0: as many as fit. */
int hf_windows_from_stream(HfWindows *w, const int32_t *ids, size_t n, int seq_len, int n_seq,
                           int bos_id, char *err, size_t errlen);
/* --text: encode PATH with MODEL_DIR/tokenizer.json. bos: -1 auto (what
 * the tokenizer's post-processor adds), 0 no, 1 yes (the tokenizer's BOS,
 * else cfg_bos); *bos_used gets the id put first, or -1. */
int hf_windows_from_text(HfWindows *w, const char *path, const char *model_dir, int seq_len,
                         int n_seq, int bos, int cfg_bos, int vocab, int *bos_used, char *err,
                         size_t errlen);
void hf_windows_free(HfWindows *w);

#endif
