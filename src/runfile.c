/* runfile.c: not written yet */
