#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# usage (inside tools/vm-run --no-module):
#   module_lifecycle.sh NPUIPC_KO CYCLES NPUIPC_HOLD_FD DEVICE_GTEST
# Loads and unloads npuipc.ko many times, checks that parameters shape the
# devices, that bad parameters are refused, and that an open device, or any
# fd the driver made (dma-buf, sync_file, event, notify) outliving every DRM
# fd, keeps the module from unloading until it is closed. TAP output.
ko=$1
cycles=${2:-20}
hold_fd=$3
device_gtest=$4
[ -x "$hold_fd" ] && [ -x "$device_gtest" ] ||
	{ echo "usage: $0 NPUIPC_KO CYCLES NPUIPC_HOLD_FD DEVICE_GTEST" >&2; exit 2; }
n=0
failed=0

ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $*"; }
check() { desc=$1; shift; if "$@"; then ok "$desc"; else not_ok "$desc"; fi; }

render_nodes() { ls /dev/dri/renderD* 2>/dev/null | wc -l; }
loaded() { grep -q '^npuipc ' /proc/modules; }
wait_nodes() { # udev-less devtmpfs creates nodes synchronously, but be fair
	w=0; while [ "$(render_nodes)" != "$1" ] && [ $w -lt 20 ]; do sleep 0.05; w=$((w + 1)); done
	[ "$(render_nodes)" = "$1" ]
}

echo "TAP version 13"
echo "1..21"
modprobe -a $(modinfo -F depends "$ko" | tr ',' ' ')

# libnpuipc with no module loaded: no device, and that is not an error (the
# VM suite, which has the module, skips this test).
check "libnpuipc lists no device, without an error, when npuipc.ko is not loaded" sh -c \
	'"$1" --gtest_filter="DeviceWithoutDriver.*" > /tmp/without-driver.log 2>&1 &&
	 grep -q "^\[  PASSED  \] 1 test" /tmp/without-driver.log && ! grep -q SKIPPED /tmp/without-driver.log' - "$device_gtest"

good=0
i=0
while [ $i -lt "$cycles" ]; do
	i=$((i + 1))
	insmod "$ko" || break
	wait_nodes 2 || break
	rmmod npuipc || break
	wait_nodes 0 || break
	good=$i
done
check "$cycles load/unload cycles each create and remove 2 devices (did $good)" [ "$good" = "$cycles" ]

insmod "$ko" num_devices=5 mem_mib=32
check "num_devices=5 creates five render nodes" wait_nodes 5
rmmod npuipc

insmod "$ko" num_devices=0
check "num_devices=0 loads with no device" wait_nodes 0
rmmod npuipc

# refused ARGS: insmod fails and leaves nothing loaded (a module loaded by
# an earlier case would make every later insmod fail with EEXIST).
refused() { ! insmod "$ko" "$@" 2>/dev/null && ! loaded; }
check "num_devices=17 is refused" refused num_devices=17
check "mem_mib=0 is refused" refused mem_mib=0
check "mem_mib above 64 GiB is refused" refused mem_mib=65537
check "job_timeout_ms above 60000 is refused" refused job_timeout_ms=60001
loaded && rmmod npuipc

insmod "$ko" job_timeout_ms=60000
param=/sys/module/npuipc/parameters/job_timeout_ms
check "job_timeout_ms=60000 loads" grep -qx 60000 $param
check "writing job_timeout_ms above 60000 is refused and changes nothing" \
	sh -c "! echo 60001 > $param 2>/dev/null && grep -qx 60000 $param"
check "writing job_timeout_ms within its range takes effect" sh -c "echo 0 > $param && grep -qx 0 $param"
rmmod npuipc

insmod "$ko"
exec 3< /dev/dri/renderD128
check "rmmod is refused while a device is open" sh -c '! rmmod npuipc 2>/dev/null && grep -q "^npuipc " /proc/modules'
exec 3<&-
check "rmmod succeeds once the last fd is closed" rmmod npuipc

# Freed after an RCU grace period or from a worker: a few tries.
rmmod_soon() { t=0; until rmmod npuipc 2>/dev/null; do t=$((t + 1)); [ $t -lt 50 ] || return 1; sleep 0.1; done; }
# Starts "npuipc_hold_fd KIND" in the background: its PID in $holder, what
# it said once ready in $said.
start_holder() {
	fifo=$(mktemp -u)
	mkfifo "$fifo"
	"$hold_fd" "$1" > "$fifo" &
	holder=$!
	read -r said < "$fifo"
	rm -f "$fifo"
}
for kind in dmabuf sync_file event notify; do
	insmod "$ko"
	start_holder "$kind"
	# Twice, half a second apart: not a reference on its way out.
	check "rmmod is refused while only one $kind fd is left" \
		sh -c '[ "$1" = holding ] && ! rmmod npuipc 2>/dev/null && sleep 0.5 &&
			! rmmod npuipc 2>/dev/null && grep -q "^npuipc " /proc/modules' - "$said"
	kill "$holder"
	wait "$holder" 2>/dev/null
	check "rmmod succeeds once that $kind fd is closed" rmmod_soon
	loaded && rmmod npuipc
done

[ "$failed" = 0 ]
