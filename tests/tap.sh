# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# TAP for the shell tests, sourced: tap_plan N prints the header; result
# STATUS DESCRIPTION prints one "ok"/"not ok" line (STATUS 0 passes) and
# keeps STATUS in $last; tap_log FILE shows a file as TAP comments;
# tap_status is the script's exit status (0 when every result passed).
n=0
failures=0
last=0
tap_plan() {
	echo "TAP version 13"
	echo "1..$1"
}
result() {
	last=$1
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failures=$((failures + 1)); fi
}
tap_log() { sed 's/^/# /' "$1"; }
tap_status() { [ "$failures" = 0 ]; }
