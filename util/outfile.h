/* SPDX-License-Identifier: GPL-3.0-or-later */
/* How lbsim writes a file: whole or not at all (doc/results.md, "How output
 * is written"). A file is written to a temporary beside it, created
 * exclusively (never through a symbolic link or over another file), then
 * renamed over it. A temporary is named TARGET.tmp.XXXXXX and is locked
 * (flock) by its writer while it lives, so that the next writer of TARGET
 * removes those a killed lbsim left (no one holds their lock) and never
 * one another lbsim is writing. On SIGINT or SIGTERM, a command that calls
 * lbs_signals_exit removes its temporaries, stops its children and exits
 * with status 130 at once. */
#ifndef LBS_OUTFILE_H
#define LBS_OUTFILE_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "util/error.h"

#define LBS_PATH_MAX 4096

/* A temporary file or folder beside its target. */
typedef struct lbs_tmp {
	char path[LBS_PATH_MAX]; /* TARGET.tmp.XXXXXX; "" when none */
	int fd;                  /* holds the lock; -1 when none */
	int slot;                /* in the table lbs_signals_exit clears; -1 when none */
	bool dir;
} lbs_tmp;

/* Creates a temporary file (dir false, mode 0666 less the umask) or folder
 * (dir true, mode 0700) beside target, exclusively, locked and known to
 * lbs_signals_exit; first removes the stale temporaries of target (see
 * above). t->fd is the file's descriptor (for a folder, the folder's). */
lbs_status lbs_tmp_create(lbs_tmp *t, const char *target, bool dir, lbs_error *err);

/* Renames the temporary file or folder over target (a symbolic link at
 * target is replaced, not followed; a folder target must be absent or
 * empty), then forgets it. */
lbs_status lbs_tmp_commit(lbs_tmp *t, const char *target, lbs_error *err);

/* Removes the temporary (a folder with what is in it) and forgets it; does
 * nothing when there is none. */
void lbs_tmp_remove(lbs_tmp *t);

/* A file written whole or not at all: fopen's "w" through a temporary. */
typedef struct lbs_outfile {
	FILE *f;
	lbs_tmp tmp;
	char target[LBS_PATH_MAX];
} lbs_outfile;

lbs_status lbs_outfile_open(lbs_outfile *o, const char *path, lbs_error *err);

/* Flushes the file to disk and renames it over its target: lbs_outfile_open's
 * path is now the new file, whole. On failure the old file is unchanged and
 * the temporary removed. */
lbs_status lbs_outfile_commit(lbs_outfile *o, lbs_error *err);

/* Drops the file: the target is unchanged, the temporary removed. */
void lbs_outfile_abort(lbs_outfile *o);

/* Writes data to path whole or not at all. */
lbs_status lbs_write_file(const char *path, const void *data, size_t len, lbs_error *err);

/* SIGINT and SIGTERM: remove the temporaries of lbs_tmp_create (and the
 * paths given to lbs_signals_remove), stop the children given to
 * lbs_signals_child (SIGKILL, reaped), and _exit(LBS_EINTR). For commands
 * that have nothing to roll back but their temporaries. */
void lbs_signals_exit(void);

/* A file or folder lbs_signals_exit removes (a folder with what is in
 * it): a slot to give to lbs_signals_forget, or -1 when the table is full. */
int lbs_signals_remove(const char *path, bool dir);
void lbs_signals_forget(int slot);

/* A child process lbs_signals_exit stops; lbs_signals_child_done once it
 * has been reaped. */
void lbs_signals_child(pid_t pid);
void lbs_signals_child_done(pid_t pid);

/* Holds SIGINT and SIGTERM back (while a file is put in place or a
 * transaction commits); lbs_signals_release lets them in again, and
 * lbs_signals_pending says whether one came meanwhile. */
void lbs_signals_hold(sigset_t *old);
bool lbs_signals_pending(void);
void lbs_signals_release(const sigset_t *old);

/* The flag of a command that handles SIGINT and SIGTERM itself (sets it
 * and rolls back): lbs_signals_seen says whether it is set, or whether a
 * signal held back by lbs_signals_hold is pending. Long waits (for a
 * database's lock) give up when it says so. */
void lbs_signals_watch(const volatile sig_atomic_t *flag);
bool lbs_signals_seen(void);

/* Whether path exists as a symbolic link (lstat). */
bool lbs_is_symlink(const char *path);

#endif
