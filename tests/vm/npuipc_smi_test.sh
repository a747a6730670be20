#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# usage (in the guest, module loaded, default parameters):
#   tests/vm/npuipc_smi_test.sh NPUIPC_SMI IPC_MEMORY_LENDER
# npuipc-smi as its users meet it (TAP): the table and --json of devices,
# memory and objects, a process holding device memory shown with its use,
# argument errors, and a user who may not open the render nodes told so.
set -u
smi=$1
lender=$2
n=0
failures=0
echo "TAP version 13"
echo "1..6"
result() {
	last=$1
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failures=$((failures + 1)); fi
}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$smi" > "$out/table" 2>&1
rc=$?
sed 's/^/# /' "$out/table"
[ "$rc" = 0 ] && [ "$(grep -Ec '^[01] +/dev/dri/renderD[0-9]+ +virtual +- +256 MiB +0 MiB +0 +0$' "$out/table")" = 2 ] &&
	grep -q '^(no exported buffer)$' "$out/table" && grep -q '^module: 0 streams, 0 events' "$out/table"
result $? "the table lists both idle devices, module objects and no exported buffer"

# A process holding 2 MiB of device memory on device 0 (the lender of the
# IPC memory scenario waits for a borrower that never comes).
keys=$(mktemp -d)
"$lender" "$keys" > "$out/lender" 2>&1 &
holder=$!
for _ in $(seq 100); do [ -e "$keys/ipc_mem" ] && break; sleep 0.1; done
"$smi" --json > "$out/json" 2>&1
rc=$?
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
rm -rf "$keys"
python3 - "$out/json" "$holder" > "$out/check" 2>&1 <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
holder = int(sys.argv[2])
devices = {d["index"]: d for d in report["devices"]}
assert sorted(devices) == [0, 1], devices
assert devices[0]["mem_used"] > 0 and devices[0]["live_objects"] > 0, devices[0]
procs = [p for p in report["processes"] if p["pid"] == holder]
assert procs, report["processes"]
assert any(p["drm-memory-device"] != "0 KiB" and int(p["npuipc-buffers"]) >= 1 for p in procs), procs
assert all(d["pci_address"] is None and d["kind"] == "virtual" for d in report["devices"])
assert report["module"]["streams"] >= 0 and "exports" in report
print("holder", holder, "seen:", procs)
PY
check=$?
sed 's/^/# /' "$out/check"
[ "$rc" = 0 ] && [ "$check" = 0 ]
result $? "--json shows the memory in use and the process holding it, with its fdinfo"

"$smi" --loop 0 > "$out/usage" 2>&1
[ $? = 2 ] && grep -q -- '--loop wants' "$out/usage"
result $? "--loop 0 is a usage error (exit 2)"
"$smi" extra > /dev/null 2>&1
[ $? = 2 ]
result $? "an extra argument is a usage error (exit 2)"

timeout 5 "$smi" --loop 1 > "$out/loop" 2>&1
[ $? = 124 ] && [ "$(grep -c '^INDEX' "$out/loop")" -ge 3 ]
result $? "--loop 1 reports again every second until stopped"

# Render nodes are root's (0600, no udevd in the guest): another user is
# told why, with exit status 3.
setpriv --reuid=65534 --regid=65534 --clear-groups "$smi" > "$out/denied" 2>&1
rc=$?
sed 's/^/# /' "$out/denied"
[ "$rc" = 3 ] && grep -q 'Permission denied (join the group owning it' "$out/denied"
result $? "a user who may not open the render nodes gets the reason and exit 3"
[ "$failures" = 0 ]
