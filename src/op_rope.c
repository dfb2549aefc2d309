/* op_rope.c: not written yet */
