#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# usage (in the guest, module loaded, default parameters, or num_devices=0
# bind_ivshmem=1 with two mock PCI NPUs of 256 MiB):
#   tests/vm/npuipc_smi_test.sh NPUIPC_SMI IPC_MEMORY_LENDER NPUIPC_HOLD_FD
# npuipc-smi as its users meet it (TAP): the table and --json of devices,
# memory and objects, a process holding device memory shown with its use,
# a stream with pending jobs and what its head waits on, argument errors,
# and a user who may not open the render nodes told so.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
smi=$1
lender=$2
hold_fd=$3
# shellcheck source=tests/tap.sh
. "$top/tests/tap.sh"
tap_plan 7
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The devices' kind and PCI address column.
if [ "$(cat /sys/module/npuipc/parameters/bind_ivshmem)" = Y ]; then
	kind=pci
	kind_column='pci +[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]'
else
	kind=virtual
	kind_column='virtual +-'
fi

"$smi" > "$out/table" 2>&1
rc=$?
sed 's/^/# /' "$out/table"
[ "$rc" = 0 ] && [ "$(grep -Ec "^[01] +/dev/dri/renderD[0-9]+ +$kind_column +256 MiB +0 MiB +0 +0\$" "$out/table")" = 2 ] &&
	grep -q '^(no exported buffer)$' "$out/table" && grep -q '^module: 0 streams, 0 events' "$out/table" &&
	grep -q '^(no stream with pending jobs)$' "$out/table"
result $? "the table lists both idle devices, module objects, no exported buffer and no pending stream"

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
python3 - "$out/json" "$holder" "$kind" > "$out/check" 2>&1 <<'PY'
import json, re, sys
report = json.load(open(sys.argv[1]))
holder = int(sys.argv[2])
kind = sys.argv[3]
devices = {d["index"]: d for d in report["devices"]}
assert sorted(devices) == [0, 1], devices
assert devices[0]["mem_used"] > 0 and devices[0]["live_objects"] > 0, devices[0]
procs = [p for p in report["processes"] if p["pid"] == holder]
assert procs, report["processes"]
assert any(p["drm-memory-device"] != "0 KiB" and int(p["npuipc-buffers"]) >= 1 for p in procs), procs
if kind == "pci":
    assert all(d["kind"] == "pci" and re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]",
                                                   d["pci_address"]) for d in report["devices"]), report["devices"]
else:
    assert all(d["pci_address"] is None and d["kind"] == "virtual" for d in report["devices"])
assert report["module"]["streams"] >= 0 and "exports" in report
print("holder", holder, "seen:", procs)
PY
check=$?
sed 's/^/# /' "$out/check"
[ "$rc" = 0 ] && [ "$check" = 0 ]
result $? "--json shows the memory in use and the process holding it, with its fdinfo"

# A stream with two jobs behind a notify no one records.
fifo=$(mktemp -u)
mkfifo "$fifo"
"$hold_fd" pending_stream > "$fifo" &
holder=$!
read -r said < "$fifo"
rm -f "$fifo"
"$smi" --json > "$out/pending" 2>&1
rc=$?
"$smi" > "$out/pending-table" 2>&1
kill "$holder"
wait "$holder" 2>/dev/null
python3 - "$out/pending" "$holder" > "$out/check" 2>&1 <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
mine = [s for s in report["streams"] if s["pid"] == int(sys.argv[2])]
assert len(mine) == 1, report["streams"]
s = mine[0]
assert s["device"] == 0 and s["queued"] == 2 and s["error"] == 0, s
assert s["head"].startswith("wait_notify on notify ") and ", parked, timeout 600" in s["head"], s
print("pending stream seen:", s)
PY
check=$?
sed 's/^/# /' "$out/check"
[ "$said" = holding ] && [ "$rc" = 0 ] && [ "$check" = 0 ] &&
	grep -Eq "^0 +$holder +[0-9]+ +[0-9]+ +2 +0  wait_notify on notify " "$out/pending-table"
result $? "a stream with pending jobs is listed with its depth and what its head waits on"
[ "$last" = 0 ] || sed 's/^/# /' "$out/pending-table"

"$smi" --loop 0 > "$out/usage" 2>&1
[ $? = 2 ] && grep -q -- '--loop wants' "$out/usage"
result $? "--loop 0 is a usage error (exit 2)"
"$smi" extra > /dev/null 2>&1
[ $? = 2 ]
result $? "an extra argument is a usage error (exit 2)"

# Three reports, however slow the machine (up to 2 minutes): they take at
# least the two 1 s pauses between them, and it is still reporting after
# them until a signal stops it.
started=$(date +%s%N)
"$smi" --loop 1 > "$out/loop" 2>&1 &
looper=$!
for _ in $(seq 1200); do
	[ "$(grep -c '^INDEX' "$out/loop")" -ge 3 ] && break
	kill -0 "$looper" 2>/dev/null || break
	sleep 0.1
done
took_ms=$((($(date +%s%N) - started) / 1000000))
kill -TERM "$looper" 2>/dev/null
alive=$?
wait "$looper"
rc=$?
echo "# 3 reports in $took_ms ms; stopped by SIGTERM: exit $rc"
[ "$(grep -c '^INDEX' "$out/loop")" -ge 3 ] && [ "$took_ms" -ge 2000 ] && [ "$alive" = 0 ] && [ "$rc" = 143 ]
result $? "--loop 1 reports again every second until stopped"
[ "$last" = 0 ] || tap_log "$out/loop"

# Render nodes are root's (0600, no udevd in the guest): another user is
# told why, with exit status 3.
setpriv --reuid=65534 --regid=65534 --clear-groups "$smi" > "$out/denied" 2>&1
rc=$?
sed 's/^/# /' "$out/denied"
[ "$rc" = 3 ] && grep -q 'Permission denied (join the group owning it' "$out/denied"
result $? "a user who may not open the render nodes gets the reason and exit 3"
tap_status
