// SPDX-License-Identifier: MIT
/*
 * A CANN program's built model with branches, as CANN's label and
 * model-switch samples build theirs: persistent streams bound to a model
 * runtime instance record their work; a label switch on the head stream
 * picks a branch by an index in device memory, and one branch activates a
 * second stream through a stream switch. The model is built once and run
 * once per index; the program checks which branch wrote its output.
 * usage: model_branches
 */
#include <stdint.h>

#include "example_util.h"

enum { SIZE = 64 * 1024, BRANCHES = 3 };

int main(void)
{
	aclrtStream head, side, exec;
	aclrtLabel labels[BRANCHES + 1];
	aclrtLabelList list;
	aclmdlRI model;
	uint32_t *index, *last, *one_dev;
	unsigned char *out, host[SIZE];
	static const uint32_t one = 1, done = BRANCHES;
	uint32_t run, b;
	size_t i;

	example_name = "model branches";
	CHECK(aclInit(NULL));
	CHECK(aclrtSetDevice(0));
	CHECK(aclrtCreateStream(&exec));
	CHECK(aclrtCreateStreamWithConfig(&head, 0, ACL_STREAM_PERSISTENT));
	CHECK(aclrtCreateStreamWithConfig(&side, 0, ACL_STREAM_PERSISTENT));
	/* Device words: the index the program sets, the end's index, and 1. */
	CHECK(aclrtMalloc((void **)&index, 3 * sizeof(uint32_t), ACL_MEM_MALLOC_HUGE_FIRST));
	last = index + 1;
	one_dev = index + 2;
	CHECK(aclrtMemcpy(last, sizeof(done), &done, sizeof(done), ACL_MEMCPY_HOST_TO_DEVICE));
	CHECK(aclrtMemcpy(one_dev, sizeof(one), &one, sizeof(one), ACL_MEMCPY_HOST_TO_DEVICE));
	CHECK(aclrtMalloc((void **)&out, SIZE, ACL_MEM_MALLOC_HUGE_FIRST));

	CHECK(aclmdlRIBuildBegin(&model, 0));
	CHECK(aclmdlRIBindStream(model, head, ACL_MODEL_STREAM_FLAG_HEAD));
	CHECK(aclmdlRIBindStream(model, side, ACL_MODEL_STREAM_FLAG_DEFAULT));
	for (b = 0; b <= BRANCHES; b++)
		CHECK(aclrtCreateLabel(&labels[b]));
	CHECK(aclrtCreateLabelList(labels, BRANCHES + 1, &list));
	/* head: branch by *index; each branch sets its byte and jumps to the end. */
	CHECK(aclrtSwitchLabelByIndex(index, BRANCHES, list, head));
	for (b = 0; b < BRANCHES; b++) {
		CHECK(aclrtSetLabel(labels[b], head));
		CHECK(aclrtMemsetAsync(out, SIZE, 0x10 + b, SIZE, head));
		CHECK(aclrtSwitchLabelByIndex(last, BRANCHES + 1, list, head));
	}
	CHECK(aclrtSetLabel(labels[BRANCHES], head));
	/* Index 1 also runs the side stream, which overwrites the first half. */
	CHECK(aclrtSwitchStream(index, ACL_RT_EQUAL, one_dev, ACL_RT_SWITCH_INT32, side, NULL, head));
	CHECK(aclmdlRIEndTask(model, head));
	CHECK(aclrtMemsetAsync(out, SIZE / 2, 0xEE, SIZE / 2, side));
	CHECK(aclmdlRIBuildEnd(model, NULL));
	SAY("built: two streams, %d branches; nothing has run", BRANCHES);

	for (run = 0; run < BRANCHES; run++) {
		CHECK(aclrtMemset(out, SIZE, 0, SIZE));
		CHECK(aclrtMemcpyAsync(index, sizeof(run), &run, sizeof(run), ACL_MEMCPY_HOST_TO_DEVICE, exec));
		CHECK(aclmdlRIExecuteAsync(model, exec));
		CHECK(aclrtSynchronizeStream(exec));
		CHECK(aclrtMemcpy(host, SIZE, out, SIZE, ACL_MEMCPY_DEVICE_TO_HOST));
		for (i = 0; i < SIZE; i++) {
			unsigned char want = 0x10 + run;

			if (run == one && i < SIZE / 2)
				want = 0xEE;
			if (host[i] != want) {
				fprintf(stderr, "%s: index %u: byte %zu is 0x%x, not 0x%x\n", example_name, run, i,
					host[i], want);
				return 1;
			}
		}
		SAY("index %u: branch %u ran%s", run, run, run == one ? ", and the side stream" : "");
	}
	CHECK(aclmdlRIUnbindStream(model, side));
	CHECK(aclmdlRIUnbindStream(model, head));
	CHECK(aclmdlRIDestroy(model));
	CHECK(aclrtDestroyLabelList(list));
	for (b = 0; b <= BRANCHES; b++)
		CHECK(aclrtDestroyLabel(labels[b]));
	CHECK(aclrtFree(out));
	CHECK(aclrtFree(index));
	CHECK(aclrtDestroyStream(side));
	CHECK(aclrtDestroyStream(head));
	CHECK(aclrtDestroyStream(exec));
	CHECK(aclrtResetDevice(0));
	CHECK(aclFinalize());
	return 0;
}
