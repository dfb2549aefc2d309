/* op_norm.c: not written yet */
