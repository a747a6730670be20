#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs in a vm-run guest started with --pci-npu 64M --pci-npu 128M: the
# mock PCI NPUs are there with their BAR2 sizes, and the guest can unplug
# and plug one back through QEMU's monitor (tools/vm-qmp). Exits 0 when
# every step did what it should; says which step failed otherwise.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
qmp=$top/tools/vm-qmp

fail() { echo "pci_npu_hotplug: $*"; exit 1; }

# "ADDRESS BAR2-SIZE" of each ivshmem device (1af4:1110), sorted.
npus() {
	local d range
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x1af4:0x1110 ] || continue
		# BAR2's line of the resource file: start end flags.
		range=($(sed -n 3p "$d/resource"))
		echo "$(basename "$d") $((range[1] - range[0] + 1))"
	done | sort
}

# Waits (5 s) until npus prints $1.
wait_npus() {
	local i
	for i in $(seq 50); do
		[ "$(npus)" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

both=$'0000:01:00.0 67108864\n0000:02:00.0 134217728'
[ "$(npus)" = "$both" ] || fail "want two NPUs of 64 and 128 MiB, have: $(npus)"

"$qmp" device_del '{"id": "npu0"}' > /dev/null || fail "device_del npu0 failed"
# device_del returns once QEMU saw the guest let the device go.
[ "$(npus)" = "0000:02:00.0 134217728" ] || fail "npu0 still there after device_del: $(npus)"

# QEMU 7.2 cannot plug an ivshmem device back on the memory backend it
# had (an assertion aborts it): a fresh backend of the same size.
"$qmp" object-add '{"qom-type": "memory-backend-ram", "id": "npumem0.1", "size": 67108864, "share": true}' \
	> /dev/null || fail "object-add failed"
"$qmp" device_add '{"driver": "ivshmem-plain", "id": "npu0", "memdev": "npumem0.1", "bus": "npuport0"}' \
	> /dev/null || fail "device_add npu0 failed"
wait_npus "$both" || fail "npu0 did not come back: $(npus)"

reply=$("$qmp" device_del '{"id": "nosuch"}')
[ $? = 1 ] || fail "device_del of an unknown device did not fail"
case "$reply" in
*DeviceNotFound*) ;;
*) fail "device_del of an unknown device: $reply" ;;
esac
echo "pci_npu_hotplug: unplugged and plugged back npu0"
