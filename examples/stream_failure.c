// SPDX-License-Identifier: MIT
/*
 * What a CANN program does when a task fails, as CANN's stream samples do:
 * it asks its streams to stop on failure, registers an exception callback,
 * and learns of the failure at its synchronize; then it aborts a stream
 * whose queued work it no longer wants. A mock NPU's task fails as a wait
 * that times out: here a notify that is never recorded.
 * usage: stream_failure
 */
#include "example_util.h"

static int exceptions;
static uint32_t exception_code;

static void on_exception(aclrtExceptionInfo *info)
{
	exceptions++;
	exception_code = aclrtGetErrorCodeFromExceptionInfo(info);
	SAY("exception callback: stream %u, task %u, thread %u, device %u, code %u",
	    aclrtGetStreamIdFromExceptionInfo(info), aclrtGetTaskIdFromExceptionInfo(info),
	    aclrtGetThreadIdFromExceptionInfo(info), aclrtGetDeviceIdFromExceptionInfo(info),
	    exception_code);
}

/* Fails unless @got is @want. */
static void expect(const char *what, aclError got, aclError want)
{
	SAY("%s: %d", what, got);
	if (got != want) {
		fprintf(stderr, "%s: %s returned %d, not %d\n", example_name, what, got, want);
		exit(1);
	}
}

/* Whether @size bytes of device memory at @p are all @byte. */
static int all_bytes(const void *p, size_t size, unsigned char byte)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < size; i++)
		if (b[i] != byte)
			return 0;
	return 1;
}

int main(void)
{
	const size_t size = 4096;
	aclrtStream stream, other, held;
	aclrtNotify never;
	aclrtStreamAttrValue mode;
	void *buf;

	example_name = "stream failure";
	CHECK(aclInit(NULL));
	CHECK(aclrtSetDevice(0));
	CHECK(aclrtExceptionInfoCallbackRegister(on_exception));
	CHECK(aclrtMalloc(&buf, size, ACL_MEM_MALLOC_NORMAL_ONLY));
	CHECK(aclrtMemset(buf, size, 0x11, size));
	CHECK(aclrtCreateNotify(&never, ACL_NOTIFY_DEFAULT));

	/* 1. A stream that aborts: its queued work is dropped, then it works again. */
	CHECK(aclrtCreateStream(&held));
	CHECK(aclrtWaitAndResetNotify(never, held, 30));
	CHECK(aclrtMemsetAsync(buf, size, 0x22, size, held));
	CHECK(aclrtStreamAbort(held));
	CHECK(aclrtSynchronizeStream(held));
	if (!all_bytes(buf, size, 0x11) || exceptions != 0) {
		fprintf(stderr, "%s: the aborted work ran, or was taken for a failure\n", example_name);
		return 1;
	}
	SAY("aborted a stream held by a wait: its memset never ran");

	/* 2. Stop on failure: the whole context stops at the first failed task. */
	CHECK(aclrtCreateStream(&stream));
	CHECK(aclrtCreateStream(&other));
	CHECK(aclrtSetStreamFailureMode(stream, ACL_STOP_ON_FAILURE));
	CHECK(aclrtGetStreamAttribute(other, ACL_STREAM_ATTR_FAILURE_MODE, &mode));
	SAY("failure mode of the context's other stream: %llu", (unsigned long long)mode.failureMode);
	CHECK(aclrtWaitAndResetNotify(never, stream, 1)); /* fails after 1 s */
	CHECK(aclrtMemsetAsync(buf, size, 0x33, size, stream));
	expect("aclrtSynchronizeStream after the failed wait", aclrtSynchronizeStream(stream),
	       ACL_ERROR_RT_TASK_TIMEOUT);
	if (exceptions != 1 || exception_code != ACL_ERROR_RT_TASK_TIMEOUT || !all_bytes(buf, size, 0x11)) {
		fprintf(stderr, "%s: %d exception callbacks, code %u, or the work behind ran\n",
			example_name, exceptions, exception_code);
		return 1;
	}
	expect("a launch on another stream of the stopped context",
	       aclrtMemsetAsync(buf, size, 0x44, size, other), ACL_ERROR_RT_TASK_TIMEOUT);
	expect("aclrtSynchronizeDevice", aclrtSynchronizeDevice(), ACL_ERROR_RT_TASK_TIMEOUT);

	/* The context is done for; resetting the device ends it. */
	CHECK(aclrtExceptionInfoCallbackUnregister(on_exception));
	CHECK(aclrtDestroyNotify(never));
	CHECK(aclrtFree(buf));
	CHECK(aclrtResetDeviceForce(0));
	CHECK(aclFinalize());
	SAY("done");
	return 0;
}
