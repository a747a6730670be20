/* SPDX-License-Identifier: MIT */
/*
 * What the seed's samples leave out: exchanging keys through files, and the
 * handshake CANN asks for (the lender keeps an object alive until the
 * borrower has it). Each step a process takes is printed with its name.
 */
#ifndef NPUIPC_EXAMPLE_UTIL_H
#define NPUIPC_EXAMPLE_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <acl/acl.h>

static const char *example_name = "example";

#define CHECK(call)                                                                   \
	do {                                                                          \
		aclError err_ = (call);                                               \
		if (err_ != ACL_SUCCESS) {                                            \
			const char *msg_ = aclGetRecentErrMsg();                      \
			fprintf(stderr, "%s: %s failed: %d (%s)\n", example_name, #call, \
				err_, msg_ ? msg_ : "no message");                    \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

#define SAY(...)                                                                      \
	do {                                                                          \
		printf("[%s] ", example_name);                                        \
		printf(__VA_ARGS__);                                                  \
		printf("\n");                                                         \
		fflush(stdout);                                                       \
	} while (0)

/* Writes @len bytes to @dir/@name atomically (a rename), like the seed's writeFile. */
static inline void write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char tmp[512], path[512];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(tmp, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0 || rename(tmp, path) != 0) {
		fprintf(stderr, "%s: cannot write %s\n", example_name, path);
		exit(1);
	}
}

/* Waits (at most 30 s) for @dir/@name, then reads @len bytes of it. */
static inline void read_file(const char *dir, const char *name, void *data, size_t len)
{
	char path[512];
	FILE *f = NULL;
	int i;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (i = 0; i < 3000 && !(f = fopen(path, "rb")); i++)
		usleep(10000);
	if (!f || fread(data, 1, len, f) != len) {
		fprintf(stderr, "%s: no %s after 30 s\n", example_name, path);
		exit(1);
	}
	fclose(f);
}

#endif /* NPUIPC_EXAMPLE_UTIL_H */
