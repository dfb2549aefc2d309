/* op_attention.c: not written yet */
