/* token_file.h: the contents of a data=tokens file as token ids
 * (token_file.c). Two formats, told apart by their first bytes:
 *   - a NumPy .npy file (magic "\x93NUMPY", versions 1-3): a C-order
 *     array of little-endian uint16 ('<u2'), uint32 ('<u4'), int32 ('<i4',
 *     no negative ids), int64 ('<i8', NumPy's and HF tokenizers' default;
 *     no negative ids), uint64 ('<u8') or uint8 ('|u1'), of any shape,
 *     read flat; every id must be at most TOKEN_FILE_MAX_ID (the first one
 *     past it is named by its index); fortran_order must be exactly False;
 *   - anything else: raw little-endian uint16 ids, no header (the
 *     original format), refused when it looks like text.
 * Every refusal is one line naming the file and what does not fit. */
#ifndef GATELAB_TOKEN_FILE_H
#define GATELAB_TOKEN_FILE_H

#include <stddef.h>
#include <stdint.h>

/* The largest id a token file may hold: vocab_size's bound (1048576,
 * config.c) less one for the id and one for BOS. */
#define TOKEN_FILE_MAX_ID (1048576 - 2)

/* Decode buf[bytes] (the whole file at path, for messages) into *out
 * (malloc'd, *n ids) and *max_id (-1 when empty). 0, or -1 and why. */
int token_file_decode(const char *path, const unsigned char *buf, size_t bytes, uint32_t **out,
                      size_t *n, long long *max_id, char *err, size_t errlen);

#endif
