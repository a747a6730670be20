#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# usage (on the host): tests/vm/fabric_lifetime_test.sh OUT [MODULE]
# The lifetime of fabric memory across servers: fabric_lifetime_gtest on
# both servers of a tools/vm-pair --bind-window at once, each test starting
# the servers' fabric daemons itself (server 0 owns, server 1 imports): an
# owner's freed memory kept for its importer; an owner's daemon that
# restarts, an importer's daemon that dies, a link cut, and last the
# owner's server powered off, each revoking the import (SIGBUS, -ENODEV)
# before the owner's range is allocated again. Server 0 ends powered off,
# so the pair's status is server 0's, vm-run's 125 for a guest that
# reported none. TAP.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/tap.sh
. "$top/tests/tap.sh"
out=${1:?usage: fabric_lifetime_test.sh OUT [MODULE]}
module=()
[ -z "${2:-}" ] || module=(--module "$2")
rm -rf "$out"
mkdir -p "$out"
tap_plan 2

build=$top/build/cmake
timeout -k 10 600 "$top/tools/vm-pair" --bind-window --out "$out/pair" --timeout 300 -- \
	${module[@]+"${module[@]}"} --no-broker -- \
	env NPUIPC_FABRICD="$build/tools/npuipc-fabricd/npuipc-fabricd" \
	"$build/tests/gtest/fabric_lifetime_gtest" --gtest_color=no > "$out/pair.log" 2>&1
rc=$?
tap_log "$out/pair.log"
tests=(AnOwnersFreedMemoryStaysTheImportersUntilItLetsGo AnImportIsRevokedWhenItsOwnersDaemonRestarts
	AnImportIsRevokedWhenItsDaemonDiesAndTheOwnerKeepsTheRangeUntilTheGrantRunsOut
	ALinkCutRevokesTheImportBeforeTheOwnerReusesTheRange AnImportIsRevokedWhenItsOwnersServerDies)
log0=$out/pair/server0.log
log1=$out/pair/server1.log
problem='vm-run: (KERNEL PROBLEM|KERNEL TAINTED|TIMEOUT)'

ok=1
grep -qx "\[  PASSED  \] ${#tests[@]} tests\." "$log1" && ! grep -q '^\[  FAILED  \]' "$log1" &&
	! grep -Eq "$problem" "$log1" || ok=0
result $((1 - ok)) "server 1 (importer): all ${#tests[@]} lifetime GoogleTests passed, its kernel clean (pair exit $rc)"

ok=1
[ "$rc" = 125 ] || ok=0
for t in "${tests[@]:0:4}"; do
	grep -q "^\[       OK \] FabricLifetime\.$t " "$log0" || ok=0
done
grep -qx "server 0 powers off now" "$log0" && ! grep -q '^\[  FAILED  \]' "$log0" &&
	grep -q "vm-run: the guest ended without reporting a status" "$log0" &&
	! grep -Eq "$problem" "$log0" || ok=0
result $((1 - ok)) "server 0 (owner): the first 4 lifetime GoogleTests passed, then it powered off as the last asks (pair exit $rc, 125 expected)"
tap_status
