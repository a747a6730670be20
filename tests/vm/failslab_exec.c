// SPDX-License-Identifier: GPL-2.0
/*
 * failslab_exec PROGRAM [ARG...]: runs PROGRAM with this task's slab
 * allocations failing at random (/proc/self/make-it-fail, inherited by its
 * children), from /tmp. Built static and run from tmpfs by the failslab
 * pass of make check-debug, so that no failing task ever touches the 9p
 * share: a failed allocation inside the 9p client breaks the share.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd;

	if (argc < 2) {
		fprintf(stderr, "usage: failslab_exec PROGRAM [ARG...]\n");
		return 2;
	}
	if (chdir("/tmp")) {
		perror("failslab_exec: chdir /tmp");
		return 1;
	}
	fd = open("/proc/self/make-it-fail", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "1", 1) != 1) {
		perror("failslab_exec: /proc/self/make-it-fail");
		return 1;
	}
	close(fd);
	execv(argv[1], argv + 1);
	perror("failslab_exec: exec");
	return 127;
}
