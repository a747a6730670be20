// SPDX-License-Identifier: GPL-2.0
/*
 * usage: npuipc_hold_fd dmabuf|sync_file|event|notify|pending_stream
 * Makes one fd of that kind from device 0, closes the DRM fd (every handle
 * with it), says "holding" on stdout, and keeps the fd until killed: what
 * module_lifecycle.sh needs to show that such an fd alone keeps npuipc.ko
 * loaded. pending_stream keeps the DRM fd instead, with a stream holding
 * two jobs behind a notify no one records (for npuipc_smi_test.sh).
 */
#include <signal.h>

#include "npuipc_test_util.h"

int main(int argc, char **argv)
{
	const char *kind = argc == 2 ? argv[1] : "";
	uint32_t handle, stream;
	int fd, held = -1;

	fd = npuipc_open_device(0);
	if (fd < 0) {
		fprintf(stderr, "npuipc_hold_fd: no npuipc device\n");
		return 1;
	}
	if (!strcmp(kind, "dmabuf")) {
		if (!npuipc_bo_create(fd, 4096, NPUIPC_PAGE_CLASS_NORMAL, &handle))
			npuipc_bo_export(fd, handle, 0, 4096, 0, &held);
	} else if (!strcmp(kind, "sync_file")) {
		struct drm_npuipc_job fill = { .kind = NPUIPC_JOB_FILL, .size = 4096, .value = 1 };

		if (!npuipc_bo_create(fd, 4096, NPUIPC_PAGE_CLASS_NORMAL, &handle) &&
		    !npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &stream)) {
			fill.dst = handle;
			npuipc_submit(fd, stream, &fill, 1, &held);
		}
	} else if (!strcmp(kind, "event") || !strcmp(kind, "notify")) {
		if (!npuipc_obj_create(fd, !strcmp(kind, "event") ? NPUIPC_OBJ_EVENT :
				       NPUIPC_OBJ_NOTIFY, &handle))
			npuipc_obj_export(fd, handle, 0, &held);
	} else if (!strcmp(kind, "pending_stream")) {
		struct drm_npuipc_job jobs[2] = {
			{ .kind = NPUIPC_JOB_WAIT_NOTIFY, .timeout_ns = 60 * 1000000000ULL },
			{ .kind = NPUIPC_JOB_FILL, .size = 4096, .value = 1 },
		};

		if (!npuipc_bo_create(fd, 4096, NPUIPC_PAGE_CLASS_NORMAL, &jobs[1].dst) &&
		    !npuipc_obj_create(fd, NPUIPC_OBJ_NOTIFY, &jobs[0].object) &&
		    !npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &stream) &&
		    !npuipc_submit(fd, stream, jobs, 2, NULL))
			held = fd;
	} else {
		fprintf(stderr, "usage: npuipc_hold_fd dmabuf|sync_file|event|notify|pending_stream\n");
		return 2;
	}
	if (held < 0) {
		fprintf(stderr, "npuipc_hold_fd: cannot make a %s fd\n", kind);
		return 1;
	}
	if (held != fd)
		close(fd);
	printf("holding\n");
	fflush(stdout);
	for (;;)
		pause();
}
