// SPDX-License-Identifier: GPL-2.0
/*
 * A test of npuipc_harness.h, not of npuipc: a skip never hides a failure.
 * Two of its tests fail on purpose, so it is in no manifest;
 * tests/vm/check_results_test.sh runs it and checks each result.
 */
#include "npuipc_harness.h"

TEST(passes)
{
	EXPECT_EQ(1, 1);
}

TEST(skips)
{
	SKIP(return, "nothing to do");
}

TEST(fails_when_it_skips_after_a_failed_check)
{
	EXPECT_EQ(1, 2);
	SKIP(return, "skipped too late");
}

FIXTURE(skipped_setup) {
	int unused;
};

FIXTURE_SETUP(skipped_setup)
{
	SKIP(return, "setup skipped");
}

FIXTURE_TEARDOWN(skipped_setup)
{
	EXPECT_EQ(0, 1) TH_LOG("the teardown ran after a skipped setup");
}

TEST_F(skipped_setup, runs_neither_body_nor_teardown)
{
	EXPECT_EQ(0, 1) TH_LOG("the body ran after a skipped setup");
}

FIXTURE(failing_teardown) {
	int unused;
};

FIXTURE_SETUP(failing_teardown)
{
}

FIXTURE_TEARDOWN(failing_teardown)
{
	EXPECT_EQ(0, 1) TH_LOG("the teardown's check failed");
}

TEST_F(failing_teardown, fails_when_its_teardown_fails_after_a_skip)
{
	SKIP(return, "body skipped");
}

TEST_HARNESS_MAIN
