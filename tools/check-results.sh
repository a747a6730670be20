# SPDX-License-Identifier: GPL-2.0
# Sourced by tools/check and tools/check-debug: counts test results from
# TAP and GoogleTest logs and prints the one-line summary.

passed=0 failed=0 skipped=0
failures=()

count_tap() { # FILE
	local p f s
	p=$(grep -E '^ok ' "$1" | grep -vc '# SKIP')
	s=$(grep -Ec '^ok .*# SKIP' "$1")
	f=$(grep -Ec '^not ok ' "$1")
	echo "$p $f $s"
}

count_gtest() { # FILE
	local p f s
	p=$(grep -Ec '^\[       OK \] .* \([0-9]+ ms\)$' "$1")
	f=$(grep -Ec '^\[  FAILED  \] .* \([0-9]+ ms\)$' "$1")
	s=$(grep -Ec '^\[  SKIPPED \] .* \([0-9]+ ms\)$' "$1")
	echo "$p $f $s"
}

# add STEP KIND LOG RC: counts one program's results; a program that
# failed without a failing test case counts as one failure itself.
add() {
	local step=$1 kind=$2 log=$3 rc=$4 p f s
	if [ "$kind" = gtest ]; then read -r p f s < <(count_gtest "$log")
	else read -r p f s < <(count_tap "$log"); fi
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		f=1
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	[ "$f" = 0 ] || failures+=("$step: $(basename "$log" .log) ($f failed, exit $rc)")
}

# add_suite STEP DIR VMRC: counts a tests/run-suite output directory; a
# vm-run failure of its own (kernel problem, timeout) is one more failure.
add_suite() {
	local step=$1 dir=$2 vmrc=$3 rcfile name
	for rcfile in "$dir"/*.rc; do
		[ -e "$rcfile" ] || continue
		name=${rcfile%.rc}
		add "$step" "$(cat "$name.kind")" "$name.log" "$(cat "$rcfile")"
	done
	if [ "$vmrc" = 124 ] || [ "$vmrc" = 125 ]; then
		failed=$((failed + 1))
		failures+=("$step: vm-run failed with exit $vmrc (see above)")
	fi
}

# print_summary NAME: the failures, then "NAME: N passed, N failed, N skipped";
# returns non-zero on any failure or when nothing passed.
print_summary() {
	echo
	for f in "${failures[@]+"${failures[@]}"}"; do echo "FAILED: $f"; done
	echo "$1: $passed passed, $failed failed, $skipped skipped"
	[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
}
