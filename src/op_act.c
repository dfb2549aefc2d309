/* op_act.c: not written yet */
