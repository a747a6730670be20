// SPDX-License-Identifier: MIT
/*
 * Conditional tasks of a captured model, as CANN's cond_model sample uses
 * them (model_ri/3_cond_model), with the runtime's own tasks where the
 * sample calls operators: an IF whose word the host sets before each run,
 * a WHILE whose body counts down its word, a SWITCH choosing one of three
 * bodies. Each body is captured from a second stream into the model the
 * conditional task made. The program checks every result.
 * usage: model_cond
 */
#include <stdint.h>

#include "example_util.h"

static aclrtStream stream, sub_stream, exec_stream;

static uint64_t read_word(const void *dev)
{
	uint64_t v = 0;

	CHECK(aclrtMemcpy(&v, sizeof(v), dev, sizeof(v), ACL_MEMCPY_DEVICE_TO_HOST));
	return v;
}

static void write_word(void *dev, uint64_t v)
{
	CHECK(aclrtMemcpy(dev, sizeof(v), &v, sizeof(v), ACL_MEMCPY_HOST_TO_DEVICE));
}

/* Begins the parent's capture and makes its condition. */
static aclmdlRI begin(aclmdlRICondHandle *cond, uint64_t **word)
{
	aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
	aclmdlRI model = NULL;

	CHECK(aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
	CHECK(aclmdlRICaptureGetInfo(stream, &status, &model));
	/* Flag 0: the word keeps what the host writes (ASSIGN_DEFAULT would set
	 * it at each run). */
	CHECK(aclmdlRICondHandleCreate(model, 0, (aclmdlRICondHandleFlag)0, cond));
	CHECK(aclmdlRICondHandleGetCondPtr(*cond, word));
	return model;
}

static void add_cond(aclmdlRICondHandle cond, aclmdlRICondTaskType type, uint32_t size, aclmdlRI *bodies)
{
	aclmdlRICondTaskParams params;

	memset(&params, 0, sizeof(params));
	params.handle = cond;
	params.type = type;
	params.size = size;
	params.modelRIArray = bodies;
	CHECK(aclmdlRIAddCondTask(params, stream, 0));
}

static void run(aclmdlRI model)
{
	CHECK(aclmdlRIExecuteAsync(model, exec_stream));
	CHECK(aclrtSynchronizeStream(exec_stream));
}

static int expect(const char *what, uint64_t got, uint64_t want)
{
	if (got == want)
		return 0;
	fprintf(stderr, "%s: %s is %llu, not %llu\n", example_name, what, (unsigned long long)got,
		(unsigned long long)want);
	return 1;
}

static int if_branches(void *out)
{
	aclmdlRICondHandle cond;
	uint64_t *word;
	aclmdlRI bodies[2] = {NULL, NULL}, model = begin(&cond, &word);
	int i;

	add_cond(cond, ACL_MODEL_RI_COND_TYPE_IF, 2, bodies);
	for (i = 0; i < 2; i++) {
		CHECK(aclmdlRICaptureToModelRIBegin(sub_stream, bodies[i], ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
		CHECK(aclrtValueWrite(out, i == 0 ? 2 : 5, 0, sub_stream)); /* then: 2, else: 5 */
		CHECK(aclmdlRICaptureEnd(sub_stream, &bodies[i]));
	}
	CHECK(aclmdlRICaptureEnd(stream, &model));

	write_word(word, 1);
	run(model);
	if (expect("the IF's result with a true condition", read_word(out), 2))
		return 1;
	write_word(word, 0);
	run(model);
	if (expect("the IF's result with a false condition", read_word(out), 5))
		return 1;
	SAY("IF: the true branch wrote 2, the false one 5");
	CHECK(aclmdlRIDestroy(model));
	return 0;
}

/* constants: int32 1 at byte 0, -1 at byte 8. */
static int while_loop(void *out, void *constants)
{
	aclmdlRICondHandle cond;
	uint64_t *word;
	aclmdlRI bodies[1] = {NULL}, model = begin(&cond, &word);

	add_cond(cond, ACL_MODEL_RI_COND_TYPE_WHILE, 1, bodies);
	CHECK(aclmdlRICaptureToModelRIBegin(sub_stream, bodies[0], ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
	/* The body adds one to the result and takes one from the condition. */
	CHECK(aclrtReduceAsync(out, constants, sizeof(int32_t), ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_INT32,
			       sub_stream, NULL));
	CHECK(aclrtReduceAsync(word, (char *)constants + 8, sizeof(int32_t), ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM,
			       ACL_INT32, sub_stream, NULL));
	CHECK(aclmdlRICaptureEnd(sub_stream, &bodies[0]));
	CHECK(aclmdlRICaptureEnd(stream, &model));

	write_word(out, 0);
	write_word(word, 4);
	run(model);
	if (expect("the WHILE's passes", read_word(out), 4) || expect("the WHILE's condition", read_word(word), 0))
		return 1;
	SAY("WHILE: 4 passes counted the condition down from 4 to 0");
	CHECK(aclmdlRIDestroy(model));
	return 0;
}

static int switch_cases(void *out)
{
	aclmdlRICondHandle cond;
	uint64_t *word;
	aclmdlRI bodies[3] = {NULL, NULL, NULL}, model = begin(&cond, &word);
	uint64_t i;

	add_cond(cond, ACL_MODEL_RI_COND_TYPE_SWITCH, 3, bodies);
	for (i = 0; i < 3; i++) {
		CHECK(aclmdlRICaptureToModelRIBegin(sub_stream, bodies[i], ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
		CHECK(aclrtValueWrite(out, 10 * (i + 1), 0, sub_stream));
		CHECK(aclmdlRICaptureEnd(sub_stream, &bodies[i]));
	}
	CHECK(aclmdlRICaptureEnd(stream, &model));
	for (i = 0; i < 4; i++) {
		write_word(out, 0);
		write_word(word, i);
		run(model);
		if (expect("the SWITCH's result", read_word(out), i < 3 ? 10 * (i + 1) : 0))
			return 1;
	}
	SAY("SWITCH: cases 0, 1, 2 wrote 10, 20, 30; case 3 ran none");
	CHECK(aclmdlRIDestroy(model));
	return 0;
}

int main(void)
{
	static const int32_t one = 1, minus_one = -1;
	void *out, *constants;
	int failed;

	example_name = "model conditions";
	CHECK(aclInit(NULL));
	CHECK(aclrtSetDevice(0));
	CHECK(aclrtCreateStream(&stream));
	CHECK(aclrtCreateStream(&sub_stream));
	CHECK(aclrtCreateStream(&exec_stream));
	CHECK(aclrtMalloc(&out, 64, ACL_MEM_MALLOC_NORMAL_ONLY));
	CHECK(aclrtMalloc(&constants, 64, ACL_MEM_MALLOC_NORMAL_ONLY));
	CHECK(aclrtMemcpy(constants, sizeof(one), &one, sizeof(one), ACL_MEMCPY_HOST_TO_DEVICE));
	CHECK(aclrtMemcpy((char *)constants + 8, sizeof(minus_one), &minus_one, sizeof(minus_one),
			  ACL_MEMCPY_HOST_TO_DEVICE));

	failed = if_branches(out) || while_loop(out, constants) || switch_cases(out);

	CHECK(aclrtFree(constants));
	CHECK(aclrtFree(out));
	CHECK(aclrtDestroyStream(exec_stream));
	CHECK(aclrtDestroyStream(sub_stream));
	CHECK(aclrtDestroyStream(stream));
	CHECK(aclrtResetDevice(0));
	CHECK(aclFinalize());
	return failed;
}
