/* exitclean.h: the files a command must not leave behind when it is
 * interrupted: its temporaries (atomic_write.h) and its lock files
 * (runlock.h). A path is registered while it exists on our behalf and
 * forgotten once it is renamed into place or removed; the interrupt
 * handler (stop.h) removes every registered path before the process
 * exits. Called from one thread (the command's main thread). */
#ifndef GATELAB_EXITCLEAN_H
#define GATELAB_EXITCLEAN_H

#include <signal.h>

/* Register path (copied). 0, or -1 when the path is too long or every slot
 * is taken (the path is then simply not removed on an interrupt). */
int exitclean_add(const char *path);
/* Forget path (every slot holding it); a no-op for a path not registered. */
void exitclean_forget(const char *path);
/* Hold SIGINT and SIGTERM back (the old mask into *old) until
 * exitclean_release, so a path is made and registered as one step: an
 * interrupt never falls between the two. */
void exitclean_hold(sigset_t *old);
void exitclean_release(const sigset_t *old);
/* unlink(2) every registered path; nothing in a forked child (the paths
 * are its parent's). Async-signal-safe. */
void exitclean_run(void);

#endif
