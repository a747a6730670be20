#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# usage (on the host): tests/vm/fabric_pair_test.sh [--driver-only] OUT [MODULE]
# Two emulated servers (tools/vm-pair), each with npuipc.ko (MODULE, default
# vm-run's) loaded with its default parameters, share the fabric window and
# talk over their link; the window is the host's file; a server that fails
# fails the pair. Then the driver takes the window (--bind-window) and the
# fabric kselftests, fabric_daemon_gtest, acl_fabric_gtest and CANN's
# cross-server sample (examples/fabric_server and fabric_client) run on
# both servers at once, each server with its fabric daemon. With
# --driver-only (make check's later kernels), the driver's part only. TAP.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/tap.sh
. "$top/tests/tap.sh"
driver_only=0
if [ "${1:-}" = --driver-only ]; then
	driver_only=1
	shift
fi
out=${1:?usage: fabric_pair_test.sh [--driver-only] OUT [MODULE]}
module=()
[ -z "${2:-}" ] || module=(--module "$2")
rm -rf "$out"
mkdir -p "$out"
tap_plan $((driver_only ? 8 : 11))

# The pair itself (the tool, not the kernel): on the first kernel only.
if [ "$driver_only" = 0 ]; then
	timeout -k 10 600 "$top/tools/vm-pair" --out "$out/share" --timeout 300 -- ${module[@]+"${module[@]}"} --no-broker -- \
		/usr/bin/python3 "$top/tests/vm/fabric_pair_check.py" > "$out/share.log" 2>&1
	rc=$?
	tap_log "$out/share.log"
	result "$rc" "each server reads in the fabric window what the other wrote, told over their link (exit $rc)"

	# The tokens the servers printed are in the host's file, where they wrote them.
	token() { sed -n "s/.*server $1 token \([0-9a-f]*\).*/\1/p" "$out/share.log" | head -n 1; }
	at() { od -An -tx1 -v -j "$1" -N 32 "$out/share/fabric.mem" 2> /dev/null | tr -d ' \n'; }
	ok=1
	[ -n "$(token 0)" ] && [ "$(token 0)" = "$(at 0)" ] || ok=0
	[ -n "$(token 1)" ] && [ "$(token 1)" = "$(at 4096)" ] || ok=0
	result $((1 - ok)) "the window is the host's file: server 0's token at 0, server 1's at 4096"

	timeout -k 10 600 "$top/tools/vm-pair" --out "$out/fails" --timeout 300 -- ${module[@]+"${module[@]}"} --no-broker -- \
		sh -c 'exit $((NPUIPC_SERVER * 3))' > "$out/fails.log" 2>&1
	rc=$?
	tap_log "$out/fails.log"
	[ "$rc" = 3 ]
	result $? "a server that fails fails the pair with its status (exit $rc, server 1's 3)"
fi

# Mock NPUs bound (bind_ivshmem=1) without fabric_sdid: the window is not
# taken for an NPU's memory; its device stays unbound.
timeout -k 10 600 "$top/tools/vm-pair" --out "$out/unbound" --timeout 300 -- \
	${module[@]+"${module[@]}"} --no-broker --module-args bind_ivshmem=1 -- sh -c \
	'dmesg | grep -q "a fabric window: not bound without fabric_sdid" &&
	 [ ! -e /sys/bus/pci/devices/0000:00:10.0/driver ]' > "$out/unbound.log" 2>&1
rc=$?
tap_log "$out/unbound.log"
result "$rc" "with bind_ivshmem=1 and no fabric_sdid the window binds as no mock NPU (exit $rc)"

# The driver's window, the daemons and the aclrt calls: one pair, each
# server with its fabric daemon, running the programs in the same order
# (tests/vm/fabric_pair_suite.sh); each program's log is judged here.
daemon=$top/build/cmake/tools/npuipc-fabricd/npuipc-fabricd
timeout -k 10 900 "$top/tools/vm-pair" --bind-window --fabric-daemon "$daemon" --out "$out/suite" \
	--timeout 600 -- ${module[@]+"${module[@]}"} --no-broker -- \
	"$top/tests/vm/fabric_pair_suite.sh" "$out/suite" "$top/build/cmake" "$top" > "$out/suite.log" 2>&1
rc=$?
tap_log "$out/suite.log"
# ok NAME ID: the program ran on server ID, exited 0, and the pair ended
# clean (vm-run fails a guest whose kernel log shows a warning).
ok() {
	[ "$rc" = 0 ] && [ "$(cat "$out/suite/server$2/$1.rc" 2> /dev/null)" = 0 ]
}
for id in 0 1; do
	log=$out/suite/server$id/npuipc_fabric_test.log
	tap_log "$log" 2> /dev/null
	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$log" 2> /dev/null | head -n 1)
	ok npuipc_fabric_test "$id" &&
		grep -qx "# Totals: pass:${plan:-x} fail:0 xfail:0 xpass:0 skip:0 error:0" "$log"
	result $? "server $id: the driver's fabric window, all ${plan:-?} kselftests passed (pair exit $rc)"
done
for program in fabric_daemon_gtest:"fabric handles through the daemons" \
	acl_fabric_gtest:"the aclrt V2 calls with FABRIC handles"; do
	name=${program%%:*}
	for id in 0 1; do
		log=$out/suite/server$id/$name.log
		tap_log "$log" 2> /dev/null
		ran=$(sed -n 's/^\[==========\] \([0-9]*\) tests from .* ran\..*/\1/p' "$log" 2> /dev/null | head -n 1)
		ok "$name" "$id" && [ -n "$ran" ] && [ "$ran" -gt 0 ] &&
			grep -qx "\[  PASSED  \] $ran tests\." "$log" && ! grep -q '^\[  FAILED  \]' "$log"
		result $? "server $id: ${program#*:}, all ${ran:-?} GoogleTests passed (pair exit $rc)"
	done
done
# CANN's cross-server sample, written against the aclrt API only.
for id in 0 1; do tap_log "$out/suite/server$id/fabric_example.log" 2> /dev/null; done
ok fabric_example 0 && ok fabric_example 1 &&
	grep -q "the client's writes are here" "$out/suite/server0/fabric_example.log" &&
	grep -q "the server's writes are here" "$out/suite/server1/fabric_example.log"
result $? "examples/fabric_server and fabric_client: each reads what the other wrote across servers (pair exit $rc)"
tap_status
