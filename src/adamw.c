/* adamw.c: not written yet */
