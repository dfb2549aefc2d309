/* op_embed.c: not written yet */
