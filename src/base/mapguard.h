/* mapguard.h: files read through mmap (safetensors weights) can be
 * truncated or rewritten by another process while a command runs. A read
 * of a page past the file's new end raises SIGBUS, which would end the
 * command silently (exit 135). While a mapping is registered here, SIGBUS
 * at an address inside it ends the command with one line naming the file
 * instead, after removing its temporaries and locks (exitclean.h): exit 1.
 * mapguard_check also catches a file rewritten in place without a fault
 * (its size, inode or modification time changed since it was mapped). */
#ifndef GATELAB_MAPGUARD_H
#define GATELAB_MAPGUARD_H

#include <stddef.h>
#include <sys/stat.h>

/* Register the mapping [base, base + len) of path, whose fstat at mapping
 * time was st. 0, or -1 when every slot is taken (then it is unguarded). */
int mapguard_add(const void *base, size_t len, const char *path, const struct stat *st);
/* Forget the mapping at base (before munmap). */
void mapguard_remove(const void *base);
/* 0 when every registered file is still the one that was mapped; -1 with
 * one line naming the first that changed. */
int mapguard_check(char *err, size_t errlen);

#endif
