# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tools/check, tools/check-debug and tests/vm/check_results_test.sh:
# counts test results from TAP and GoogleTest logs and prints the one-line
# summary. Nothing is lost: every program a manifest lists counts, as
# passed, failed or skipped test cases, or as a failure of its own.
#
# Rules (Documentation/testing.md, "How results are counted"):
# - each test case counts once: TAP "ok" / "ok ... # SKIP" / "not ok" lines
#   at the start of a line (indented, nested lines do not count);
#   GoogleTest "[       OK ]" / "[  SKIPPED ]" / "[  FAILED  ]" lines;
# - a program counts ONE more failure, however many of these hold: it exited
#   non-zero without a failing case; its TAP log has no plan line "1..N",
#   more than one, a plan N that is not the number of results, or a
#   "Bail out!"; its GoogleTest log lacks the final summary
#   ("[==========] N tests from ... ran." and "[  PASSED  ] N tests.") or N
#   is not the number of results; its log is missing; a harness failure
#   (vm-run 2, 124 or 125) is attributed to it;
# - a program a manifest lists with no .rc or no .log did not run: one failure;
# - a program also counts one more failure when it reported no test case at
#   all (a TAP plan 1..0, a GoogleTest run of 0 tests);
# - a program also counts one more failure when it reported fewer results
#   (passed, failed and skipped cases) than the expected-counts file
#   ($expected_counts, default tests/expected-counts) gives it for that
#   step, or when that file gives it none: a test lost to a rename, an #if
#   or a filter fails the run;
# - a skipped case counts as skipped only when the expected-skips file
#   ($expected_skips, default tests/expected-skips) names it, with the reason
#   it logged, for that step and program; any other skip is a failure of
#   its own;
# - a suite's vm-run that exits 2 (usage), 124 (timeout) or 125 (kernel,
#   guest or module failure), or exits non-zero leaving no result at all, is
#   one more failure of the step; so is a manifest that lists no program, and
#   each program name a step asks for that its manifest does not list.

passed=0 failed=0 skipped=0
failures=()
expected_skips=${NPUIPC_EXPECTED_SKIPS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/expected-skips}
expected_counts=${NPUIPC_EXPECTED_COUNTS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/expected-counts}

count_tap() { # FILE: "passed failed skipped"
	local p f s
	p=$(grep -E '^ok( |$)' "$1" | grep -vc '# SKIP')
	s=$(grep -Ec '^ok( .*)?# SKIP' "$1")
	f=$(grep -Ec '^not ok( |$)' "$1")
	echo "$p $f $s"
}

count_gtest() { # FILE: "passed failed skipped"
	local p f s
	p=$(grep -Ec '^\[       OK \] .* \([0-9]+ ms\)$' "$1")
	f=$(grep -Ec '^\[  FAILED  \] .* \([0-9]+ ms\)$' "$1")
	s=$(grep -Ec '^\[  SKIPPED \] .* \([0-9]+ ms\)$' "$1")
	echo "$p $f $s"
}

# skipped_cases KIND FILE: "NAME<tab>REASON" for each skipped case. A TAP
# skip line of the kselftest harness names no test ("ok 3 # SKIP why"):
# its name is the one its "#  RUN" line announced. GoogleTest logs its
# reason on the line after "FILE:LINE: Skipped".
skipped_cases() {
	if [ "$1" = gtest ]; then
		awk '
		/^\[ RUN      \] / { why = "" }
		/: Skipped$/ { if ((getline line) > 0) why = line }
		/^\[  SKIPPED \] .* \([0-9]+ ms\)$/ {
			name = $0
			sub(/^\[  SKIPPED \] /, "", name)
			sub(/ \([0-9]+ ms\)$/, "", name)
			print name "\t" why
			why = ""
		}' "$2"
	else
		awk '
		/^#  RUN / { run = $3; next }
		/^ok( |$)/ && /# SKIP/ {
			line = $0
			sub(/^ok( [0-9]+)? ?/, "", line)
			name = line; sub(/ *# SKIP.*$/, "", name)
			why = line; sub(/^.*# SKIP */, "", why)
			if (name == "") name = run
			if (name == "") name = "?"
			print name "\t" why
		}' "$2"
	fi
}

# skip_expected STEP PROGRAM NAME LOGGED: whether the expected-skips file
# lists the skip: tab-separated "STEP PROGRAM NAME LOGGED WHY" lines, STEP
# and LOGGED (the reason the test logged) shell patterns, WHY not empty.
skip_expected() {
	local step prog name logged why
	[ -r "$expected_skips" ] || return 1
	while IFS=$'\t' read -r step prog name logged why; do
		case "$step" in '' | '#'*) continue ;; esac
		# shellcheck disable=SC2053
		[[ $1 == $step ]] && [ "$2" = "$prog" ] && [ "$3" = "$name" ] &&
			[[ $4 == $logged ]] && [ -n "$why" ] && return 0
	done < "$expected_skips"
	return 1
}

# expected_count STEP PROGRAM: the fewest results PROGRAM (its log's name,
# without a kernel tag "@SERIES") may report in STEP, from the first
# tab-separated "STEP PROGRAM MIN" line of the expected-counts file that
# matches (STEP a shell pattern); nothing when none does.
expected_count() {
	local step prog min
	[ -r "$expected_counts" ] || return 0
	while IFS=$'\t' read -r step prog min; do
		case "$step" in '' | '#'*) continue ;; esac
		# shellcheck disable=SC2053
		if [[ $1 == $step ]] && [ "${2%@*}" = "$prog" ]; then
			echo "$min"
			return 0
		fi
	done < "$expected_counts"
}

# short_run STEP PROGRAM RESULTS: prints why RESULTS are too few.
short_run() {
	local min
	min=$(expected_count "$1" "$2")
	if [ -z "$min" ]; then
		echo "no minimum count in $(basename "$expected_counts") for step $1"
	elif [ "$3" -lt "$min" ]; then
		echo "$3 results, fewer than the $min of $(basename "$expected_counts")"
	fi
}

# incomplete_tap FILE RESULTS: prints why a TAP log is not a complete run.
incomplete_tap() {
	local plans n
	plans=$(grep -Eo '^1\.\.[0-9]+' "$1" | cut -c4-)
	n=$(printf '%s\n' "$plans" | grep -c .)
	if [ "$n" = 0 ]; then
		echo "no TAP plan"
	elif [ "$n" != 1 ]; then
		echo "$n TAP plans"
	elif [ "$plans" != "$2" ]; then
		echo "TAP plan 1..$plans but $2 results"
	elif grep -q '^Bail out!' "$1"; then
		echo "TAP bail out"
	fi
}

# incomplete_gtest FILE RESULTS: prints why a GoogleTest log is not a complete run.
incomplete_gtest() {
	local ran
	ran=$(sed -En 's/^\[==========\] ([0-9]+) tests? from .* ran\..*/\1/p' "$1" | tail -n1)
	if [ -z "$ran" ] || ! grep -Eq '^\[  PASSED  \] [0-9]+ tests?\.' "$1"; then
		echo "no GoogleTest summary"
	elif [ "$ran" != "$2" ]; then
		echo "GoogleTest ran $ran tests but $2 results"
	fi
}

# vm_failure RC: prints what a vm-run exit status says went wrong with the
# harness itself (nothing for a command's own status).
vm_failure() {
	case "$1" in
	2) echo "vm-run usage error (exit 2)" ;;
	124) echo "vm-run timeout (exit 124)" ;;
	125) echo "vm-run: kernel, guest or module failure (exit 125)" ;;
	esac
}

# add STEP KIND LOG RC [REASON]: counts one program's results (KIND gtest,
# else TAP) and at most one failure of the program itself (see the rules
# above; REASON, when not empty, is a harness failure of this program).
add() {
	local step=$1 kind=$2 log=$3 rc=$4 reason=${5:-} p=0 f=0 s=0 why=()
	local prog
	prog=$(basename "$log" .log)
	if [ ! -f "$log" ]; then
		why+=("no log")
	else
		if [ "$kind" = gtest ]; then
			read -r p f s < <(count_gtest "$log")
			why+=("$(incomplete_gtest "$log" $((p + f + s)))")
		else
			read -r p f s < <(count_tap "$log")
			why+=("$(incomplete_tap "$log" $((p + f + s)))")
		fi
		[ "$rc" = 0 ] || [ "$f" != 0 ] || why+=("exit $rc without a failing case")
		[ $((p + f + s)) != 0 ] || why+=("no test ran")
		why+=("$(short_run "$step" "$prog" $((p + f + s)))")
	fi
	why+=("$reason")
	local w extra="" name cause unexpected=()
	if [ "$s" != 0 ]; then
		while IFS=$'\t' read -r name cause; do
			skip_expected "$step" "$prog" "$name" "$cause" && continue
			s=$((s - 1)) f=$((f + 1))
			unexpected+=("$name${cause:+ ($cause)}")
		done < <(skipped_cases "$kind" "$log")
	fi
	for w in "${why[@]}"; do [ -z "$w" ] || extra="${extra:+$extra; }$w"; done
	[ -z "$extra" ] || f=$((f + 1))
	for w in "${unexpected[@]+"${unexpected[@]}"}"; do extra="${extra:+$extra; }unexpected skip: $w"; done
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	[ "$f" = 0 ] || failures+=("$step: $prog ($f failed, exit $rc${extra:+; $extra})")
}

# add_suite STEP DIR VMRC MANIFEST [FILTER...]: counts a tests/run-suite
# output directory. Every program MANIFEST lists ("KIND PATH" lines; only
# those named by a FILTER when any is given) counts: from DIR/NAME.rc and
# DIR/NAME.log, or as one failure when either is missing. Result files of
# programs the manifest does not list are counted too. VMRC is the exit
# status of what ran the suite (vm-run, or run-suite on the host).
add_suite() {
	local step=$1 dir=$2 vmrc=$3 manifest=$4 kind path name f wanted rcfile
	shift 4
	local -A listed=()
	local any=0
	if [ ! -r "$manifest" ]; then
		failed=$((failed + 1))
		failures+=("$step: manifest $manifest not readable")
	elif ! grep -Eq '^[^ ]+ +[^ ]' "$manifest"; then
		failed=$((failed + 1))
		failures+=("$step: manifest $manifest lists no program")
	else
		while read -r kind path; do
			[ -n "$path" ] || continue
			name=$(basename "$path")
			if [ $# -gt 0 ]; then
				wanted=0
				for f in "$@"; do [ "$f" = "$name" ] && wanted=1; done
				[ "$wanted" = 1 ] || continue
			fi
			[ -z "${listed[$name]+x}" ] || continue
			listed[$name]=1
			if [ -f "$dir/$name.rc" ] && [ -f "$dir/$name.log" ]; then
				any=1
				add "$step" "$kind" "$dir/$name.log" "$(cat "$dir/$name.rc")"
			else
				failed=$((failed + 1))
				failures+=("$step: $name did not run (no $name.rc or $name.log)")
			fi
		done < "$manifest"
		for f in "$@"; do
			[ -n "${listed[$f]+x}" ] && continue
			failed=$((failed + 1))
			failures+=("$step: $f is not a program of $manifest")
		done
	fi
	for rcfile in "$dir"/*.rc; do
		[ -e "$rcfile" ] || continue
		name=$(basename "$rcfile" .rc)
		[ -z "${listed[$name]+x}" ] || continue
		any=1
		kind=$(cat "$dir/$name.kind" 2>/dev/null || echo tap)
		add "$step" "$kind" "$dir/$name.log" "$(cat "$rcfile")"
	done
	local why
	why=$(vm_failure "$vmrc")
	if [ -z "$why" ] && [ "$vmrc" != 0 ] && [ "$any" = 0 ]; then
		why="exit $vmrc with no result at all"
	fi
	if [ -n "$why" ]; then
		failed=$((failed + 1))
		failures+=("$step: $why (see above)")
	fi
}

# print_summary NAME [KVER...]: the failures, then "NAME: N passed, N failed,
# N skipped", followed by " on KVER KVER" when the run names its kernels;
# returns non-zero on any failure or when nothing passed.
print_summary() {
	local name=$1 on=""
	shift
	[ $# = 0 ] || on=" on $*"
	echo
	for f in "${failures[@]+"${failures[@]}"}"; do echo "FAILED: $f"; done
	echo "$name: $passed passed, $failed failed, $skipped skipped$on"
	[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
}
