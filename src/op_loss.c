/* op_loss.c: not written yet */
