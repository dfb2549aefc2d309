/* cmd_train.c: not written yet */
