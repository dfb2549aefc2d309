/* params.c: not written yet */
