/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's kselftest harness (6.1's kselftest_harness.h, which the
 * Makefile takes from Debian's linux-source-6.1), made so that a skip can
 * never hide a failure. Every npuipc kselftest includes this instead.
 *
 * In that harness a skipped test exits as skipped whatever its EXPECTs
 * said: SKIP marks it passed even after a failed check, a failed check in
 * the fixture's teardown after a skip (the leak check) is lost, and a
 * skip in FIXTURE_SETUP still runs the body, whose failures are lost too.
 * Here:
 * - SKIP after a failed check does not skip: the test fails;
 * - a FIXTURE_SETUP that skipped runs neither the body nor the teardown;
 * - a check that fails in FIXTURE_TEARDOWN fails a test that skipped, and
 *   an ASSERT that fails there ends the test instead of running the
 *   teardown again.
 * A SKIP's statement is "return" in every test here: after a skip, a test
 * checks nothing more.
 */
#ifndef NPUIPC_HARNESS_H
#define NPUIPC_HARNESS_H

#include <setjmp.h>

#include "kselftest_harness.h"

static inline void npuipc_harness_skip(struct __test_metadata *t, const char *reason)
{
	snprintf(t->results->reason, sizeof(t->results->reason), "%s", reason);
	if (TH_LOG_ENABLED)
		fprintf(TH_LOG_STREAM, "#      SKIP      %s\n", reason);
	t->skip = 1;
	t->trigger = 0;
}

#undef SKIP
#define SKIP(statement, fmt, ...) do { \
	char __npuipc_reason[256]; \
	snprintf(__npuipc_reason, sizeof(__npuipc_reason), fmt, ##__VA_ARGS__); \
	if (_metadata->passed) \
		npuipc_harness_skip(_metadata, __npuipc_reason); \
	else \
		TH_LOG("not skipped (%s): the test already failed", __npuipc_reason); \
	statement; \
} while (0)

#define NPUIPC_FIXTURE_ARGS(fixture_name) \
	struct __test_metadata __attribute__((unused)) *_metadata, \
	FIXTURE_DATA(fixture_name) __attribute__((unused)) *self, \
	const FIXTURE_VARIANT(fixture_name) __attribute__((unused)) *variant

/* The harness calls fixture_name##_setup; the test's own setup runs inside. */
#undef FIXTURE_SETUP
#define FIXTURE_SETUP(fixture_name) \
	static void fixture_name##_npuipc_setup(NPUIPC_FIXTURE_ARGS(fixture_name)); \
	void fixture_name##_setup(NPUIPC_FIXTURE_ARGS(fixture_name)) \
	{ \
		fixture_name##_npuipc_setup(_metadata, self, variant); \
		if (_metadata->skip) \
			longjmp(_metadata->env, 1); /* no body, no teardown */ \
	} \
	static void fixture_name##_npuipc_setup(NPUIPC_FIXTURE_ARGS(fixture_name))

#undef FIXTURE_TEARDOWN
#define FIXTURE_TEARDOWN(fixture_name) \
	static void fixture_name##_npuipc_teardown(NPUIPC_FIXTURE_ARGS(fixture_name)); \
	void fixture_name##_teardown(NPUIPC_FIXTURE_ARGS(fixture_name)) \
	{ \
		static bool entered; /* each test runs in a child of its own */ \
		if (entered) \
			return; \
		entered = true; \
		fixture_name##_npuipc_teardown(_metadata, self, variant); \
		if (!_metadata->passed) \
			_metadata->skip = 0; \
	} \
	static void fixture_name##_npuipc_teardown(NPUIPC_FIXTURE_ARGS(fixture_name))

#endif /* NPUIPC_HARNESS_H */
