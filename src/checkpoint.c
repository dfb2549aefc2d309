/* checkpoint.c: not written yet */
