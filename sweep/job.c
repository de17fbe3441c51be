/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A sweep's point job: the protocol of `lbsim run --sweep-job`. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>

#include "sweep/sweep.h"

lbs_status lbs_sweep_job_begin(lbs_sweep_job *j, const char *lock, pid_t parent, const char *output,
			       const volatile sig_atomic_t *interrupted, lbs_error *err)
{
	j->output = output;
	j->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (j->lock_fd < 0)
		return lbs_error_set(err, LBS_EIO, "%s: cannot open the job lock: %s", lock, strerror(errno));
	while (flock(j->lock_fd, LOCK_SH) != 0) {
		if (errno != EINTR || (interrupted && *interrupted))
			return errno == EINTR ? lbs_error_set(err, LBS_EINTR, "interrupted before the run")
					      : lbs_error_set(err, LBS_EIO, "%s: cannot lock: %s", lock,
							      strerror(errno));
	}
	if (parent) {
#ifdef __linux__
		prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
		/* It died before prctl (the shell that exec'd this run may itself
		 * have started orphaned, under init), or it is not our parent. */
		if (getppid() != parent || parent == 1)
			return lbs_error_set(err, LBS_EINTR, "the parent process %ld has gone: not running",
					     (long)parent);
	}
	if (access(output, F_OK) == 0) {
		j->done = true;
		return LBS_OK;
	}
	if ((size_t)snprintf(j->tmp, sizeof j->tmp, "%s.tmp.%ld", output, (long)getpid()) >= sizeof j->tmp)
		return lbs_error_set(err, LBS_EUSAGE, "%s: path too long", output);
	return LBS_OK;
}

lbs_status lbs_sweep_job_end(lbs_sweep_job *j, lbs_status status)
{
	lbs_status st = status;
	if (j->tmp[0]) {
		if (status == LBS_OK && link(j->tmp, j->output) != 0 && errno != EEXIST &&
		    rename(j->tmp, j->output) != 0)
			st = LBS_EIO;
		int saved = errno;
		char journal[4300];
		snprintf(journal, sizeof journal, "%s-journal", j->tmp);
		unlink(j->tmp);
		unlink(journal);
		errno = saved;
	}
	if (j->lock_fd >= 0)
		close(j->lock_fd);
	j->lock_fd = -1;
	return st;
}

