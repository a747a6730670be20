#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# usage (in the guest, module loaded): tests/vm/samples_test.sh SAMPLE...
# The runtime feature samples of examples/ (TAP): each must exit 0, having
# checked what it saw; its output is kept as TAP comments.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/tap.sh
. "$top/tests/tap.sh"
tap_plan $#
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for sample in "$@"; do
	timeout -k 5 60 "$sample" > "$out" 2>&1
	rc=$?
	tap_log "$out"
	result "$rc" "$(basename "$sample") runs to its end (exit $rc)"
done
tap_status
