#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# usage (in a vm-run --no-module guest):
#   tests/packaging/packaging_guest.sh WORK_DIR [--module-only]
# The second half of packaging_test.sh, as a user does it after installing
# (TAP): the module DKMS built for the running kernel, installed under
# /lib/modules (the guest's overlay; the host's stays untouched), loaded by
# modprobe with options from the installed example modprobe.d file;
# npuipc-smi of the installed package; each consumer project's programs,
# lender and borrower in two processes; then udevd with the installed rule:
# /dev/npuipc/N names, and a member of the render group allocating, sharing
# and waiting while a non-member is refused. With --module-only, the first
# test only: what differs between kernels (make check runs the rest on the
# first kernel).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(cd "$1" && pwd)
version=$(cat "$top/VERSION")
kver=$(uname -r)
root=$(find "$work/stage" -name npuipc-smi -path '*/bin/*' | sed 's|/bin/npuipc-smi$||')
lib=$(dirname "$(find "$root" -name "libnpuipc.so.$version" | head -n1)")
# shellcheck source=tests/tap.sh
. "$top/tests/tap.sh"
module_only=0
[ "${2:-}" != --module-only ] || module_only=1
if [ "$module_only" = 1 ]; then tap_plan 2; else tap_plan 12; fi

# The last test, and with --module-only the second.
unload() {
	modprobe -r npuipc
	! grep -q '^npuipc ' /proc/modules
	result $? "modprobe -r npuipc unloads it"
	tap_status
}

# 1. modprobe with options from modprobe.d
mkdir -p "/lib/modules/$kver/updates/dkms"
cp "$work/dkms/module/$kver/npuipc.ko" "/lib/modules/$kver/updates/dkms/"
# What depmod -a makes of that tree, made on the host (packaging_test.sh).
cp "$work/dkms/depmod/$kver/lib/modules/$kver"/modules.* "/lib/modules/$kver/"
# The installed example, with its example line uncommented.
sed 's/^#options npuipc /options npuipc /' "$root/share/doc/npuipc/examples/npuipc.conf" > /etc/modprobe.d/npuipc.conf
modprobe npuipc 2>&1 | sed 's/^/# /'
params="$(cat /sys/module/npuipc/parameters/num_devices 2>/dev/null) $(cat /sys/module/npuipc/parameters/mem_mib 2>/dev/null)"
path=$(modinfo -n npuipc 2>/dev/null)
[ "$params" = "3 256,512,1024" ] && [ "$path" = "/lib/modules/$kver/updates/dkms/npuipc.ko" ] &&
	[ "$(cat /sys/module/npuipc/version 2>/dev/null)" = "$version" ]
result $? "modprobe npuipc loads the module DKMS built for $kver with the options of /etc/modprobe.d/npuipc.conf"
[ "$last" = 0 ] || echo "# parameters '$params', path '$path'"
if [ "$module_only" = 1 ]; then unload; exit; fi

# 2. npuipc-smi of the installed package
LD_LIBRARY_PATH=$lib "$root/bin/npuipc-smi" > "$work/smi.log" 2>&1
rc=$?
sed 's/^/# /' "$work/smi.log"
[ "$rc" = 0 ] && [ "$(grep -Ec '^[0-9]+ +/dev/dri/renderD[0-9]+ +virtual' "$work/smi.log")" = 3 ]
result $? "the installed npuipc-smi lists the three devices"

# 3-6. each consumer's scenario, two processes sharing through the driver
as_user=()
pair() { # DIR SCENARIO [ENV...]: runs SCENARIO_lender and SCENARIO_borrower (as as_user)
	local bin=$1 scenario=$2 keys lender borrower rc=0
	shift 2
	keys=$(mktemp -d)
	chmod 777 "$keys"
	"${as_user[@]}" env "$@" "$bin/${scenario}_lender" "$keys" > "$keys/lender.log" 2>&1 & lender=$!
	"${as_user[@]}" env "$@" "$bin/${scenario}_borrower" "$keys" > "$keys/borrower.log" 2>&1 & borrower=$!
	wait $lender || rc=1
	wait $borrower || rc=1
	[ "$rc" = 0 ] || sed 's/^/# /' "$keys/lender.log" "$keys/borrower.log"
	rm -rf "$keys"
	return $rc
}
pair "$work/consumers/pkgconfig/build" ipc_memory LD_LIBRARY_PATH="$lib"
result $? "the pkg-config project shares device memory by IPC key between two processes"
pair "$work/consumers/cmake/build" ipc_event LD_LIBRARY_PATH="$lib"
result $? "the CMake project shares an event between two processes"
cann_env=$(bash -c ". '$root/lib/npuipc/cann/set_env.sh' && echo \$LD_LIBRARY_PATH")
pair "$work/consumers/cann/build" ipc_notify LD_LIBRARY_PATH="$cann_env"
result $? "the CANN project, run after set_env.sh, shares a notify between two processes"
pair "$work/consumers/cann/build" vmm LD_LIBRARY_PATH="$cann_env"
result $? "the CANN project's older-sample build shares VMM memory between two processes"

# 7-11. udev: the installed rule on top of Debian's render-node rule, with
# the module loaded while udevd runs (the rule reads npuipc_index as each
# render node appears).
modprobe -r npuipc
cp "$root/lib/udev/rules.d/70-npuipc.rules" /etc/udev/rules.d/
/lib/systemd/systemd-udevd --daemon 2>&1 | sed 's/^/# /'
modprobe npuipc
udevadm settle -t 30
bad=()
for idx in 0 1 2; do
	node=$(readlink -f "/dev/npuipc/$idx")
	minor=${node#/dev/dri/renderD}
	[ "$(cat "/sys/class/drm/renderD$minor/device/npuipc_index" 2>/dev/null)" = "$idx" ] &&
		[ "$(stat -c '%a %G' "$node")" = "660 render" ] || bad+=("/dev/npuipc/$idx -> $node ($(stat -c '%a %G' "$node" 2>&1))")
done
[ ${#bad[@]} = 0 ]
result $? "udev names each render node /dev/npuipc/INDEX, group render, mode 0660"
[ "$last" = 0 ] || { printf '# %s\n' "${bad[@]}"; ls -l /dev/npuipc /dev/dri | sed 's/^/# /'; }

useradd -G render npuipc-member
useradd npuipc-outsider
as_user=(setpriv --reuid=npuipc-member --regid=npuipc-member --init-groups)
"${as_user[@]}" env LD_LIBRARY_PATH="$lib" "$root/bin/npuipc-smi" > "$work/smi-member.log" 2>&1 &&
	[ "$(grep -Ec '^[0-9]+ +/dev/dri/renderD' "$work/smi-member.log")" = 3 ] &&
	pair "$work/consumers/pkgconfig/build" ipc_memory LD_LIBRARY_PATH="$lib"
result $? "a render-group member lists the devices and shares device memory between two of its processes"
pair "$work/consumers/cmake/build" ipc_event LD_LIBRARY_PATH="$lib"
result $? "a render-group member shares an event and waits on it"
# What the member's npuipc-smi shows: its own process, from fdinfo.
keys=$(mktemp -d)
chmod 777 "$keys"
"${as_user[@]}" env LD_LIBRARY_PATH="$lib" "$work/consumers/pkgconfig/build/ipc_memory_lender" "$keys" \
	> /dev/null 2>&1 &
holder=$!
for _ in $(seq 100); do [ -e "$keys/ipc_mem" ] && break; sleep 0.1; done
"${as_user[@]}" env LD_LIBRARY_PATH="$lib" "$root/bin/npuipc-smi" > "$work/smi-own.log" 2>&1
smi_rc=$?
kill "$holder"
wait "$holder" 2>/dev/null
rm -rf "$keys"
sed 's/^/# /' "$work/smi-own.log"
[ "$smi_rc" = 0 ] && grep -Eq "^$holder +ipc_memory_lend +0 +[0-9]+ +[1-9]" "$work/smi-own.log" &&
	grep -q '^(objects, exported buffers and streams: root only' "$work/smi-own.log"
result $? "a member's npuipc-smi shows its own process with its buffers (fdinfo), without debugfs"
as_user=(setpriv --reuid=npuipc-outsider --regid=npuipc-outsider --init-groups)
"${as_user[@]}" env LD_LIBRARY_PATH="$lib" "$root/bin/npuipc-smi" > "$work/smi-outsider.log" 2>&1
smi_rc=$?
keys=$(mktemp -d)
chmod 777 "$keys"
"${as_user[@]}" env LD_LIBRARY_PATH="$lib" "$work/consumers/pkgconfig/build/ipc_memory_lender" "$keys" \
	> "$work/outsider.log" 2>&1
lender_rc=$?
rm -rf "$keys"
sed 's/^/# /' "$work/smi-outsider.log" "$work/outsider.log"
[ "$smi_rc" = 3 ] && [ "$lender_rc" = 1 ] && grep -q 'aclrtSetDevice(0) failed: 107001 .*not accessible to this user' "$work/outsider.log"
result $? "a user outside the render group is refused: npuipc-smi exits 3, aclrtSetDevice fails"
as_user=()
udevadm control --exit

# 12. and the module goes away as modprobe -r asks
unload
