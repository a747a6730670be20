#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host-side test of tools/check-results.sh (and of tests/run-suite's part of
# the contract): synthetic manifests and result directories, each counted
# into exact passed/failed/skipped figures. No VM; a few seconds. TAP output.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/npuipc-check-results.XXXXXX")
trap 'rm -rf "$work"' EXIT
n=0
bad=0

# shellcheck source=tools/check-results.sh
. "$top/tools/check-results.sh"

reset() { passed=0 failed=0 skipped=0; failures=(); }

# The synthetic runs' own expected skips (the real list is tests/expected-skips).
expected_skips=$work/expected-skips
printf '%s\n' '# STEP PROGRAM TEST LOGGED WHY' \
	'*	t1	t1.c	no device	no device in the synthetic logs' \
	'*	t2	t2.c	no device	no device in the synthetic logs' \
	'*	g1	S.c	no S.c here	skipped by the synthetic log' \
	'vm*	k1	global.needs_vm	no dev*	runs in the vm steps only' > "$expected_skips"

# ... and their own minimum counts (the real list is tests/expected-counts).
expected_counts=$work/expected-counts
printf '%s\n' '# STEP PROGRAM MIN' \
	'*	t1	1' '*	t2	1' '*	g1	1' '*	k1	1' \
	'*	good	1' '*	absent	1' '*	noexec	1' '*	short	1' '*	hang	1' \
	'*	t3	2' 'tagged@*	t4	1' '*	t4	3' > "$expected_counts"

# expect "P F S" DESCRIPTION: the counters since the last reset.
expect() {
	n=$((n + 1))
	if [ "$passed $failed $skipped" = "$1" ]; then
		echo "ok $n $2"
	else
		bad=$((bad + 1))
		echo "not ok $n $2 (got $passed $failed $skipped, want $1)"
		for f in "${failures[@]+"${failures[@]}"}"; do echo "# FAILED: $f"; done
	fi
}

# check DESCRIPTION COMMAND...: COMMAND succeeds.
check() {
	local desc=$1
	shift
	n=$((n + 1))
	if "$@"; then echo "ok $n $desc"; else bad=$((bad + 1)); echo "not ok $n $desc"; fi
}

# result DIR NAME KIND RC: writes NAME's result files from stdin (the log).
result() {
	mkdir -p "$1"
	cat > "$1/$2.log"
	echo "$3" > "$1/$2.kind"
	echo "$4" > "$1/$2.rc"
}

tap_ok() { # NAME: a complete kselftest-style TAP log, 2 passed, 1 skipped
	printf 'TAP version 13\n1..3\n# Starting 3 tests\nok 1 %s.a\nok 2 %s.b\nok 3 %s.c # SKIP no device\n# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:1 error:0\n' "$1" "$1" "$1"
}
gtest_ok() { # a complete GoogleTest log, 2 passed, 1 skipped
	cat <<'EOF'
[==========] Running 3 tests from 1 test suite.
[ RUN      ] S.a
[       OK ] S.a (0 ms)
[ RUN      ] S.b
[       OK ] S.b (1 ms)
[ RUN      ] S.c
s.cpp:9: Skipped
no S.c here

[  SKIPPED ] S.c (0 ms)
[==========] 3 tests from 1 test suite ran. (2 ms total)
[  PASSED  ] 2 tests.
[  SKIPPED ] 1 test, listed below:
[  SKIPPED ] S.c
EOF
}

m=$work/manifest
cat > "$m" <<EOF
ksft $work/bin/t1
ksft $work/bin/t2
gtest $work/bin/g1
EOF

echo "TAP version 13"

# 1. all good
d=$work/good
tap_ok t1 | result "$d" t1 ksft 0
tap_ok t2 | result "$d" t2 ksft 0
gtest_ok | result "$d" g1 gtest 0
reset; add_suite good "$d" 0 "$m"
expect "6 0 3" "all good: every case counted, nothing failed"
check "all good: print_summary succeeds and prints the summary line" \
	bash -c '. "$1"; passed=6 failed=0 skipped=3; print_summary check | tail -n1 | grep -qx "check: 6 passed, 0 failed, 3 skipped"' sh "$top/tools/check-results.sh"

# 2. a missing binary (run-suite's log and status 127)
d=$work/missing
tap_ok t1 | result "$d" t1 ksft 0
echo "run-suite: $work/bin/t2: no such file (not built?)" | result "$d" t2 ksft 127
gtest_ok | result "$d" g1 gtest 0
reset; add_suite missing "$d" 1 "$m"
expect "4 1 2" "a missing binary (rc 127) is one failure"

# 3. a manifest entry with no result files (the suite never started it)
d=$work/norun
tap_ok t1 | result "$d" t1 ksft 0
gtest_ok | result "$d" g1 gtest 0
reset; add_suite norun "$d" 0 "$m"
expect "4 1 2" "a listed program with no result files did not run: one failure"
rm -f "$d/t1.log"
reset; add_suite norun "$d" 0 "$m"
expect "2 2 1" "a .rc without its .log did not run either"

# 4. a failed modprobe: vm-run exits 1 and no program ran
reset; add_suite modprobe "$work/nothing" 1 "$m"
expect "0 4 0" "nothing ran (failed modprobe): each listed program fails, and the step once"
reset; add_suite filtered "$work/nothing" 1 "$m" t2
expect "0 2 0" "with a filter, only the named programs are expected"

# 5. a TAP plan larger than the results (a crash half-way)
d=$work/short
printf 'TAP version 13\n1..4\nok 1 a\nok 2 b\n' | result "$d" t1 ksft 0
reset; add_suite short "$d" 1 "$m" t1
expect "2 1 0" "a short TAP plan is one failure"

# 6. TAP results without a plan
d=$work/noplan
printf 'ok 1 a\nok 2 b\n' | result "$d" t1 ksft 0
reset; add_suite noplan "$d" 0 "$m" t1
expect "2 1 0" "TAP without a plan is one failure"
d=$work/nested
printf 'TAP version 13\n1..1\n    1..2\n    ok 1 inner\n    not ok 2 inner\nok 1 outer\n' | result "$d" t1 ksft 0
reset; add_suite nested "$d" 0 "$m" t1
expect "1 0 0" "indented (nested) TAP lines neither count nor make a plan"

# 7. a GoogleTest log without its summary (the program died)
d=$work/gtest
gtest_ok | head -n 5 | result "$d" g1 gtest 0
reset; add_suite gtest "$d" 0 "$m" g1
expect "2 1 0" "GoogleTest without its final summary is one failure"

# 8. a non-zero exit with no failing case
d=$work/rc
tap_ok t1 | result "$d" t1 ksft 1
reset; add_suite rc "$d" 1 "$m" t1
expect "2 1 1" "exit 1 without a failing case is one failure"
d=$work/rc-case
printf 'TAP version 13\n1..2\nok 1 a\nnot ok 2 b\n' | result "$d" t1 ksft 1
reset; add_suite rc-case "$d" 1 "$m" t1
expect "1 1 0" "exit 1 explained by a failing case adds nothing"

# 9. a program failing in several ways counts once
d=$work/several
printf 'garbage\n' | result "$d" t1 ksft 139
reset; add_suite several "$d" 1 "$m" t1
expect "0 1 0" "no plan, no result and a crash: one failure"
reset; add several tap "$work/several/t1.log" 125 "$(vm_failure 125)"
expect "0 1 0" "... and a vm-run failure on top of it is still one"

# 10. vm-run exit 125 (kernel problem) with complete results
d=$work/kernel
tap_ok t1 | result "$d" t1 ksft 0
tap_ok t2 | result "$d" t2 ksft 0
gtest_ok | result "$d" g1 gtest 0
reset; add_suite kernel "$d" 125 "$m"
expect "6 1 3" "vm-run exit 125 with complete results: the step fails once"
reset; add_suite usage "$work/nothing" 2 "$m" t1
expect "0 2 0" "vm-run usage error (exit 2): the program and the step fail"

# 11. tests/run-suite itself, on the host: a missing binary, a
# non-executable one, a short plan, a hang (bounded) and a good one.
b=$work/bin
mkdir -p "$b"
printf '#!/bin/sh\nprintf "TAP version 13\\n1..2\\nok 1 a\\nok 2 b\\n"\n' > "$b/good"
printf '#!/bin/sh\nprintf "TAP version 13\\n1..3\\nok 1 a\\nok 2 b\\n"\n' > "$b/short"
printf '#!/bin/sh\necho 1..1\nsleep 60\necho ok 1 late\n' > "$b/hang"
printf '#!/bin/sh\necho "1..1"\necho "ok 1 x"\n' > "$b/noexec"
chmod +x "$b/good" "$b/short" "$b/hang"
rm -f "$b/absent"
rs=$work/rs.manifest
printf 'ksft %s\n' "$b/good" "$b/absent" "$b/noexec" "$b/short" "$b/hang" > "$rs"
NPUIPC_SUITE_TIMEOUT=2 "$top/tests/run-suite" "$rs" "$work/rs" > "$work/rs.out" 2>&1
rc=$?
reset; add_suite run-suite "$work/rs" "$rc" "$rs"
expect "4 4 0" "run-suite: missing, non-executable, short plan and hung programs each fail once"
check "run-suite: the missing binary gets a log saying so and status 127" \
	bash -c 'grep -q "no such file" "$1/absent.log" && [ "$(cat "$1/absent.rc")" = 127 ] && [ "$(cat "$1/noexec.rc")" = 127 ]' sh "$work/rs"
check "run-suite: a hung program is killed at NPUIPC_SUITE_TIMEOUT (status 124)" \
	bash -c '[ "$(cat "$1/hang.rc")" = 124 ] && grep -q "killed after 2s" "$1/hang.log"' sh "$work/rs"

# 12. runs that test nothing, each a failure
d=$work/nothing-ran
printf 'TAP version 13\n1..0 # SKIP no npuipc device\n' | result "$d" t1 ksft 0
reset; add_suite nothing-ran "$d" 0 "$m" t1
expect "0 1 0" "a TAP plan 1..0 (stress or fuzz without a device) fails"
d=$work/gtest-zero
printf '[==========] Running 0 tests from 0 test suites.\n[==========] 0 tests from 0 test suites ran. (0 ms total)\n[  PASSED  ] 0 tests.\n' |
	result "$d" g1 gtest 0
reset; add_suite gtest-zero "$d" 0 "$m" g1
expect "0 1 0" "a GoogleTest run of 0 tests fails"
: > "$work/empty.manifest"
reset; add_suite empty "$work/good" 0 "$work/empty.manifest"
expect "6 1 3" "an empty manifest fails (the results it finds still count)"
d=$work/renamed
tap_ok t1 | result "$d" t1 ksft 0
reset; add_suite renamed "$d" 0 "$m" t1 t1_renamed
expect "2 1 1" "a step name that matches no program of the manifest fails"
check "... and says which" bash -c 'printf "%s\n" "$@" | grep -q "t1_renamed is not a program"' sh "${failures[@]}"

# 13. skips: counted only when listed for that step and program
ksft_skips() { # TAP as the kselftest harness prints it: skips named by "#  RUN"
	printf 'TAP version 13\n1..3\n#  RUN           global.runs ...\nok 1 global.runs\n'
	printf '#  RUN           global.needs_vm ...\n#      SKIP      no device\nok 2 # SKIP no device\n'
	printf '#  RUN           global.surprise ...\n#      SKIP      no cgroup\nok 3 # SKIP no cgroup\n'
}
mk=$work/k.manifest
echo "ksft $work/bin/k1" > "$mk"
d=$work/skips
ksft_skips | result "$d" k1 ksft 0
reset; add_suite vm-pci "$d" 0 "$mk"
expect "1 1 1" "a listed skip counts as skipped, an unlisted one fails"
check "... and the failure names the unlisted skip and its reason" \
	bash -c 'printf "%s\n" "$@" | grep -q "unexpected skip: global.surprise (no cgroup)"' sh "${failures[@]}"
reset; add_suite debug "$d" 0 "$mk"
expect "1 2 0" "a skip listed for other steps fails in this one"
d=$work/other-reason
ksft_skips | sed 's/SKIP no device/SKIP no memory/' | result "$d" k1 ksft 0
reset; add_suite vm-pci "$d" 0 "$mk"
expect "1 2 0" "a listed test that skipped for another reason fails"
d=$work/all-skipped
printf 'TAP version 13\n1..2\nok 1 a # SKIP no device\nok 2 b # SKIP no device\n' | result "$d" t1 ksft 0
reset; add_suite all-skipped "$d" 0 "$m" t1
expect "0 2 0" "a TAP log where every test skipped, unlisted, fails"
d=$work/gtest-skip
gtest_ok | sed 's/S\.c/S.d/' | result "$d" g1 gtest 0
reset; add_suite gtest-skip "$d" 0 "$m" g1
expect "2 1 0" "an unlisted GoogleTest skip fails"
d=$work/gtest-skip-reason
gtest_ok | sed 's/^no S.c here$/something else/' | result "$d" g1 gtest 0
reset; add_suite gtest-skip-reason "$d" 0 "$m" g1
expect "2 1 0" "a listed GoogleTest skip with another reason fails"
check "the project's expected skips each name a step, a program, a test, the logged reason and why" \
	bash -c '[ -s "$1" ] && ! grep -Ev "^(#|$)" "$1" | awk -F "\t" "NF != 5" | grep -q .' sh "$top/tests/expected-skips"

# 14. tests/run-suite runs the whole of each program, and never nothing
printf '#!/bin/sh\nprintf "TAP version 13\\n1..1\\nok 1 filter=[%%s] shards=[%%s]\\n" "$GTEST_FILTER" "$GTEST_TOTAL_SHARDS"\n' > "$b/env"
chmod +x "$b/env"
printf 'ksft %s\n' "$b/env" > "$work/env.manifest"
GTEST_FILTER='Nothing.*' GTEST_TOTAL_SHARDS=4 GTEST_FLAGFILE=/dev/null "$top/tests/run-suite" "$work/env.manifest" "$work/env" > /dev/null 2>&1
check "run-suite: a caller's GTEST_FILTER and sharding do not reach the programs" \
	grep -q 'filter=\[\] shards=\[\]' "$work/env/env.log"
"$top/tests/run-suite" "$work/env.manifest" "$work/env-renamed" env_renamed > /dev/null 2>&1
check "run-suite: a name that matches no program fails" test $? != 0
"$top/tests/run-suite" "$work/empty.manifest" "$work/env-empty" > /dev/null 2>&1
check "run-suite: an empty manifest fails" test $? != 0

# 14b. ... and puts back the module parameters a program changed
pd=$work/params
mkdir -p "$pd"
echo 5000 > "$pd/job_timeout_ms"
echo 2 > "$pd/num_devices"
chmod 644 "$pd/job_timeout_ms"
chmod 444 "$pd/num_devices"
printf '#!/bin/sh\necho 1 > "$NPUIPC_PARAMS_DIR/job_timeout_ms"\nprintf "TAP version 13\\n1..1\\nok 1 a\\n"\n' > "$b/forgets"
printf '#!/bin/sh\necho 2 > "$NPUIPC_PARAMS_DIR/job_timeout_ms"\nsleep 30\n' > "$b/killed"
chmod +x "$b/forgets" "$b/killed"
printf 'ksft %s\n' "$b/forgets" > "$work/forgets.manifest"
printf 'ksft %s\n' "$b/killed" > "$work/killed.manifest"
NPUIPC_PARAMS_DIR=$pd "$top/tests/run-suite" "$work/forgets.manifest" "$work/forgets" > /dev/null 2>&1
check "run-suite: a program that exits 0 but leaves a parameter changed fails" \
	bash -c '[ "$(cat "$1/forgets.rc")" = 1 ] && grep -q "parameter job_timeout_ms left at 1; restored to 5000" "$1/forgets.log"' sh "$work/forgets"
check "... and the parameter is back" test "$(cat "$pd/job_timeout_ms")" = 5000
NPUIPC_PARAMS_DIR=$pd NPUIPC_SUITE_TIMEOUT=1 "$top/tests/run-suite" "$work/killed.manifest" "$work/killed" > /dev/null 2>&1
check "run-suite: a program killed at its timeout has the parameter it changed put back" \
	bash -c '[ "$(cat "$1/killed/killed.rc")" = 124 ] && [ "$(cat "$1/params/job_timeout_ms")" = 5000 ] &&
		grep -q "parameter job_timeout_ms left at 2; restored to 5000" "$1/killed/killed.log"' sh "$work"

# 15. minimum counts: fewer results than tests/expected-counts promises fail
printf 't3\nu1\n' | sed "s|^|ksft $work/bin/|" > "$work/fewer.manifest"
d=$work/fewer
printf 'TAP version 13\n1..1\nok 1 a\n' | result "$d" t3 ksft 0
reset; add_suite fewer "$d" 0 "$work/fewer.manifest" t3
expect "1 1 0" "a program reporting fewer results than its minimum fails"
check "... and says how many it promised" \
	bash -c 'printf "%s\n" "$@" | grep -q "1 results, fewer than the 2 of expected-counts"' sh "${failures[@]}"
d=$work/uncounted
printf 'TAP version 13\n1..1\nok 1 a\n' | result "$d" u1 ksft 0
reset; add_suite uncounted "$d" 0 "$work/fewer.manifest" u1
expect "1 1 0" "a program no minimum count names fails"
printf 'TAP version 13\n1..1\nok 1 a\n' | result "$d" "t4@6.12" ksft 0
reset; add "tagged@6.12" tap "$d/t4@6.12.log" 0
expect "1 0 0" "a kernel-tagged log takes its program's count for its step"
reset; add "untagged" tap "$d/t4@6.12.log" 0
expect "1 1 0" "... and the first matching line decides: another step needs more"
check "the project's expected counts each name a step, a program and a number" \
	bash -c '[ -s "$1" ] && ! grep -Ev "^(#|$)" "$1" | awk -F "\t" "NF != 3 || \$3 !~ /^[0-9]+\$/" | grep -q .' \
	sh "$top/tests/expected-counts"
if [ -n "${1:-}" ]; then
	missing=$(cat "$1"/tests-*.txt | while read -r _ path; do
		p=$(basename "$path")
		grep -Eq "^[^#].*	$p	[0-9]+\$" "$top/tests/expected-counts" || echo "$p"
	done)
	check "every program of the manifests has a minimum count${missing:+ (missing: $missing)}" \
		test -z "$missing"
fi

# 16. the kselftests' harness (tests/kselftest/npuipc_harness.h): a skip
# never hides a failure. Its self-test program fails on purpose.
h=${1:-}/tests/kselftest/npuipc_harness_selftest
if [ -n "${1:-}" ]; then
	"$h" > "$work/harness.log" 2>&1
	hrc=$?
	sed 's/^/# /' "$work/harness.log"
	check "harness: a test that passes passes" grep -qx 'ok 1 global.passes' "$work/harness.log"
	check "harness: a skip is a skip" grep -qx 'ok 2 # SKIP nothing to do' "$work/harness.log"
	check "harness: a skip after a failed check fails" \
		grep -qx 'not ok 3 global.fails_when_it_skips_after_a_failed_check' "$work/harness.log"
	check "harness: a setup that skipped runs neither body nor teardown" \
		bash -c 'grep -qx "ok 4 # SKIP setup skipped" "$1" && ! grep -q "ran after a skipped setup" "$1"' sh "$work/harness.log"
	check "harness: a failed check in a teardown fails a test that skipped" \
		grep -qx 'not ok 5 failing_teardown.fails_when_its_teardown_fails_after_a_skip' "$work/harness.log"
	check "harness: the program exits non-zero" test "$hrc" != 0
fi

echo "1..$n"
[ "$bad" = 0 ]

