/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Files written whole or not at all, their temporaries, and what SIGINT and
 * SIGTERM remove (util/outfile.h). What the signal handler calls is
 * async-signal-safe: unlink, rmdir, open, getdents64, kill, waitpid, _exit. */
#include "util/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

/* ---- what a signal removes -------------------------------------------- */

#define SLOTS 16
#define CHILDREN 8

static struct {
	volatile sig_atomic_t used;
	volatile sig_atomic_t dir;
	char path[LBS_PATH_MAX];
} slots[SLOTS];
static volatile pid_t children[CHILDREN];

/* Empties the folder open at fd, down to a few levels. */
static void clear_dir(int fd, int depth)
{
#ifdef SYS_getdents64
	struct dirent64_ {
		uint64_t ino;
		int64_t off;
		unsigned short reclen;
		unsigned char type;
		char name[];
	};
	char buf[2048] __attribute__((aligned(8)));
	for (int pass = 0; pass < 1000; pass++) {
		lseek(fd, 0, SEEK_SET);
		long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
		if (n <= 0)
			return;
		bool any = false;
		for (long at = 0; at < n;) {
			struct dirent64_ *e = (struct dirent64_ *)(void *)(buf + at);
			at += e->reclen;
			if (!strcmp(e->name, ".") || !strcmp(e->name, ".."))
				continue;
			any = true;
			if (unlinkat(fd, e->name, 0) != 0 && (errno == EISDIR || errno == EPERM) && depth < 4) {
				int sub = openat(fd, e->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (sub >= 0) {
					clear_dir(sub, depth + 1);
					close(sub);
				}
				unlinkat(fd, e->name, AT_REMOVEDIR);
			}
		}
		if (!any)
			return;
	}
#else
	int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	DIR *d = copy >= 0 ? fdopendir(copy) : NULL;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(fd, e->d_name, 0) != 0 && depth < 4) {
			int sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				clear_dir(sub, depth + 1);
				close(sub);
			}
			unlinkat(fd, e->d_name, AT_REMOVEDIR);
		}
	}
	if (d)
		closedir(d);
	else if (copy >= 0)
		close(copy);
#endif
}

static void remove_path(const char *path, bool dir)
{
	if (!dir) {
		unlink(path);
		return;
	}
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		clear_dir(fd, 0);
		close(fd);
	}
	rmdir(path);
}

static void on_signal(int sig)
{
	(void)sig;
	for (int i = 0; i < CHILDREN; i++) {
		pid_t pid = children[i];
		if (pid > 0) {
			kill(pid, SIGKILL);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
		}
	}
	for (int i = 0; i < SLOTS; i++)
		if (slots[i].used)
			remove_path(slots[i].path, slots[i].dir);
	_exit(LBS_EINTR);
}

void lbs_signals_exit(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int lbs_signals_remove(const char *path, bool dir)
{
	for (int i = 0; i < SLOTS; i++) {
		if (slots[i].used)
			continue;
		if (strlen(path) >= sizeof slots[i].path)
			return -1;
		memcpy(slots[i].path, path, strlen(path) + 1);
		slots[i].dir = dir;
		slots[i].used = 1; /* last: the handler reads a whole path */
		return i;
	}
	return -1;
}

void lbs_signals_forget(int slot)
{
	if (slot >= 0 && slot < SLOTS)
		slots[slot].used = 0;
}

void lbs_signals_child(pid_t pid)
{
	for (int i = 0; i < CHILDREN; i++)
		if (children[i] <= 0) {
			children[i] = pid;
			return;
		}
}

void lbs_signals_child_done(pid_t pid)
{
	for (int i = 0; i < CHILDREN; i++)
		if (children[i] == pid)
			children[i] = 0;
}

static void term_set(sigset_t *s)
{
	sigemptyset(s);
	sigaddset(s, SIGINT);
	sigaddset(s, SIGTERM);
}

void lbs_signals_hold(sigset_t *old)
{
	sigset_t s;
	term_set(&s);
	sigprocmask(SIG_BLOCK, &s, old);
}

bool lbs_signals_pending(void)
{
	sigset_t s;
	sigemptyset(&s);
	return sigpending(&s) == 0 && (sigismember(&s, SIGINT) == 1 || sigismember(&s, SIGTERM) == 1);
}

void lbs_signals_release(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

static const volatile sig_atomic_t *watched;

void lbs_signals_watch(const volatile sig_atomic_t *flag)
{
	watched = flag;
}

bool lbs_signals_seen(void)
{
	return (watched && *watched) || lbs_signals_pending();
}

bool lbs_is_symlink(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

/* ---- temporaries ---------------------------------------------------- */

#define TMP_MARK ".tmp."
#define TMP_RANDOM 6

/* Removes the temporaries TARGET.tmp.XXXXXX in folder that no process holds
 * locked (their writer was killed), and that are this user's. */
static void remove_stale(const char *folder, const char *base)
{
	int dfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	int copy = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
	DIR *d = copy >= 0 ? fdopendir(copy) : NULL;
	if (!d && copy >= 0)
		close(copy);
	size_t lb = strlen(base), lm = strlen(TMP_MARK);
	for (struct dirent *e; d && (e = readdir(d));) {
		const char *n = e->d_name;
		if (strlen(n) != lb + lm + TMP_RANDOM || strncmp(n, base, lb) || strncmp(n + lb, TMP_MARK, lm))
			continue;
		int fd = openat(dfd, n, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		struct stat a, b;
		if (fstat(fd, &a) == 0 && a.st_uid == geteuid() && (S_ISREG(a.st_mode) || S_ISDIR(a.st_mode)) &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0 && fstatat(dfd, n, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
		    a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
			if (S_ISDIR(a.st_mode)) {
				clear_dir(fd, 0);
				unlinkat(dfd, n, AT_REMOVEDIR);
			} else {
				unlinkat(dfd, n, 0);
			}
		}
		close(fd);
	}
	if (d)
		closedir(d);
	close(dfd);
}

lbs_status lbs_tmp_create(lbs_tmp *t, const char *target, bool dir, lbs_error *err)
{
	memset(t, 0, sizeof *t);
	t->fd = -1;
	t->slot = -1;
	t->dir = dir;
	char folder[LBS_PATH_MAX];
	const char *slash = strrchr(target, '/');
	if (!*target || (slash && !slash[1]))
		return lbs_error_set(err, LBS_EUSAGE, "'%s': not a file name", target);
	if (strlen(target) + strlen(TMP_MARK) + TMP_RANDOM >= sizeof t->path)
		return lbs_error_set(err, LBS_EUSAGE, "%.200s...: the name is too long", target);
	if (!slash)
		lbs_fmt(folder, sizeof folder, ".");
	else if (slash == target)
		lbs_fmt(folder, sizeof folder, "/");
	else
		lbs_fmt(folder, sizeof folder, "%.*s", (int)(slash - target), target);
	remove_stale(folder, slash ? slash + 1 : target);
	mode_t mask = umask(0);
	umask(mask);
	for (int attempt = 0; attempt < 20; attempt++) {
		lbs_fmt(t->path, sizeof t->path, "%s" TMP_MARK "XXXXXX", target);
		int fd = -1;
		if (dir) {
			if (mkdtemp(t->path))
				fd = open(t->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		} else {
			fd = mkostemp(t->path, O_CLOEXEC); /* O_CREAT | O_EXCL: never a link */
			if (fd >= 0)
				fchmod(fd, 0666 & ~mask);
		}
		if (fd < 0) {
			lbs_status st = lbs_error_set(err, LBS_EIO, "%s: cannot write beside it: %s", target,
						      strerror(errno));
			t->path[0] = '\0';
			return st;
		}
		t->slot = lbs_signals_remove(t->path, dir);
		/* Ours only if no one took it for stale between its creation and
		 * the lock. */
		struct stat a, b;
		if (flock(fd, LOCK_EX) == 0 && fstat(fd, &a) == 0 && lstat(t->path, &b) == 0 &&
		    a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
			t->fd = fd;
			return LBS_OK;
		}
		lbs_signals_forget(t->slot);
		t->slot = -1;
		close(fd);
	}
	t->path[0] = '\0';
	return lbs_error_set(err, LBS_EIO, "%s: cannot create a temporary beside it", target);
}

lbs_status lbs_tmp_commit(lbs_tmp *t, const char *target, lbs_error *err)
{
	if (!t->path[0])
		return lbs_error_set(err, LBS_EINTERNAL, "%s: no temporary to put in place", target);
	if (rename(t->path, target) != 0) {
		lbs_status st = lbs_error_set(err, LBS_EIO, "%s: cannot write: %s", target, strerror(errno));
		lbs_tmp_remove(t);
		return st;
	}
	lbs_signals_forget(t->slot); /* after: a signal between them removes nothing */
	t->slot = -1;
	t->path[0] = '\0';
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	return LBS_OK;
}

void lbs_tmp_remove(lbs_tmp *t)
{
	if (t->path[0])
		remove_path(t->path, t->dir);
	lbs_signals_forget(t->slot);
	t->slot = -1;
	t->path[0] = '\0';
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

/* ---- whole files ---------------------------------------------------- */

lbs_status lbs_outfile_open(lbs_outfile *o, const char *path, lbs_error *err)
{
	memset(o, 0, sizeof *o);
	o->tmp.fd = -1;
	o->tmp.slot = -1;
	lbs_fmt(o->target, sizeof o->target, "%s", path);
	lbs_status st = lbs_tmp_create(&o->tmp, path, false, err);
	if (st != LBS_OK)
		return st;
	/* A second descriptor for the stream: the lock stays with the first
	 * until the file is in place. Neither goes to a child (gnuplot), which
	 * would hold the lock after a kill. */
	int fd = fcntl(o->tmp.fd, F_DUPFD_CLOEXEC, 0);
	o->f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!o->f) {
		st = lbs_error_set(err, LBS_EIO, "%s: cannot write: %s", o->tmp.path, strerror(errno));
		if (fd >= 0)
			close(fd);
		lbs_tmp_remove(&o->tmp);
	}
	return st;
}

lbs_status lbs_outfile_commit(lbs_outfile *o, lbs_error *err)
{
	if (!o->f)
		return lbs_error_set(err, LBS_EINTERNAL, "%s: not open", o->target);
	errno = 0;
	bool ok = fflush(o->f) == 0 && !ferror(o->f) && fsync(fileno(o->f)) == 0;
	int saved = errno;
	ok &= fclose(o->f) == 0;
	o->f = NULL;
	if (!ok) {
		lbs_status st = lbs_error_set(err, LBS_EIO, "%s: cannot write: %s", o->target,
					      strerror(saved ? saved : errno));
		lbs_tmp_remove(&o->tmp);
		return st;
	}
	return lbs_tmp_commit(&o->tmp, o->target, err);
}

void lbs_outfile_abort(lbs_outfile *o)
{
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	lbs_tmp_remove(&o->tmp);
}

lbs_status lbs_write_file(const char *path, const void *data, size_t len, lbs_error *err)
{
	lbs_outfile o;
	lbs_status st = lbs_outfile_open(&o, path, err);
	if (st != LBS_OK)
		return st;
	if (fwrite(data, 1, len, o.f) != len) {
		st = lbs_error_set(err, LBS_EIO, "%s: cannot write: %s", path, strerror(errno));
		lbs_outfile_abort(&o);
		return st;
	}
	return lbs_outfile_commit(&o, err);
}
