/* op_matmul.c: not written yet */
