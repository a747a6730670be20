#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host-side self-test of tools/vm-run: the harness every other test trusts
# must pass on exit statuses, and must fail runs whose kernel misbehaved.
# TAP output.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
vm_run="$top/tools/vm-run"
work=$(mktemp -d "$top/build/vm/selftest.XXXXXX")
trap 'rm -rf "$work"' EXIT
n=0
failed=0

# expect_status WANT DESCRIPTION -- VM-RUN-ARGS...
expect_status() {
	local want=$1 desc=$2 got
	shift 3
	"$vm_run" "$@" > "$work/log" 2>&1
	got=$?
	n=$((n + 1))
	if [ "$got" = "$want" ]; then
		echo "ok $n $desc"
	else
		failed=$((failed + 1))
		echo "not ok $n $desc (exit $got, want $want)"
		sed 's/^/# /' "$work/log" | tail -n 40
	fi
}

# expect_log PATTERN DESCRIPTION: the last run's output matches PATTERN.
expect_log() {
	n=$((n + 1))
	if grep -Eq "$1" "$work/log"; then
		echo "ok $n $2"
	else
		failed=$((failed + 1))
		echo "not ok $n $2"
		sed 's/^/# /' "$work/log" | tail -n 40
	fi
}

echo "TAP version 13"
echo "1..11"
expect_status 0 "a succeeding command exits 0" -- -- true
expect_status 7 "the command's exit status is vm-run's" -- -- sh -c 'exit 7'
expect_status 0 "module parameters reach the module" \
	-- --module-args "num_devices=3 mem_mib=64" -- \
	sh -c 'test "$(ls /dev/dri/renderD* | wc -l)" = 3 && grep -qx 64 /sys/module/npuipc/parameters/mem_mib'
expect_status 0 "the guest writes to --out at the host path" \
	-- --no-module --out "$work/out" -- sh -c "echo written > '$work/out/file'"
n=$((n + 1))
if [ "$(cat "$work/out/file" 2>/dev/null)" = written ]; then echo "ok $n the host reads what the guest wrote"; else failed=$((failed + 1)); echo "not ok $n the host reads what the guest wrote"; fi
expect_status 125 "a kernel WARNING fails the run" \
	-- --no-module -- insmod "$top/tests/vm/warn_module/npuipc_warn_test.ko"
expect_log 'KERNEL PROBLEM' "a kernel WARNING is reported with the kernel log"
expect_status 125 "a module that fails to load fails the run" \
	-- --module-args "num_devices=99" -- true
expect_status 125 "a device reference left behind by the command fails the run" \
	-- -- sh -c 'sleep 1000 < /dev/dri/renderD128 > /dev/null 2>&1 &'
expect_status 124 "a hung guest is killed at the timeout" \
	-- --no-module --timeout 30 -- sleep 1000
expect_log 'TIMEOUT' "a timeout is reported as such"
[ "$failed" = 0 ]
