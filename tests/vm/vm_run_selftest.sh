#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host-side self-test of tools/vm-run: the harness every other test trusts
# must pass on exit statuses, and must fail runs whose kernel misbehaved.
# TAP output.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
vm_run="$top/tools/vm-run"
# The module the guests load (make check passes its 6.1 build).
# Absolute: one guest runs from another working directory.
module=$(realpath "${NPUIPC_MODULE:-$top/kernel/npuipc.ko}")
work=$(mktemp -d "$top/build/vm/selftest.XXXXXX")
# Trees and output under the host's /var/tmp and /tmp, which the guest sees
# through its overlay (Documentation/testing.md, "How the guest sees the host").
vartmp=$(mktemp -d /var/tmp/npuipc-selftest.XXXXXX)
tmp=$(mktemp -d /tmp/npuipc-selftest.XXXXXX)
trap 'rm -rf "$work" "$vartmp" "$tmp"' EXIT
n=0
failed=0

# expect_cmd WANT DESCRIPTION -- COMMAND...: COMMAND exits WANT.
expect_cmd() {
	local want=$1 desc=$2 got
	shift 3
	"$@" > "$work/log" 2>&1
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

# expect_status WANT DESCRIPTION -- VM-RUN-ARGS...
expect_status() {
	local want=$1 desc=$2
	shift 3
	expect_cmd "$want" "$desc" -- "$vm_run" "$@"
}

# in_dir DIR COMMAND...: runs COMMAND from DIR.
in_dir() { (cd "$1" && shift && exec "$@"); }

# expect_true DESCRIPTION COMMAND...: COMMAND (on the host) succeeds.
expect_true() {
	local desc=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n $desc"
	else
		failed=$((failed + 1))
		echo "not ok $n $desc"
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
echo "1..18"
# One guest for what a run needs to work (each boot costs seconds): a copy
# of the harness in a tree under /var/tmp (it builds its own initramfs in
# its build/vm and boots with the project's module) runs a command under
# /var/tmp, from there, with --out under /tmp. The guest reads the host's
# /tmp and /var/tmp, writes through to the host only under --out, and its
# other writes stay in the guest (Documentation/testing.md, "How the guest
# sees the host"); module parameters reach the module; the command exits 7
# only when its own checks pass, and vm-run's status is the command's.
echo from-host > "$tmp/host-file"
mkdir -p "$tmp/out"
cat > "$vartmp/cmd.sh" <<END
#!/bin/sh
echo "cwd: \$(pwd)"
echo "host file: \$(cat '$tmp/host-file')"
echo written > '$tmp/out/file' &&
echo guest > '$vartmp/guest-only' &&
echo guest > '$tmp/guest-only' &&
test "\$(ls /dev/dri/renderD* | wc -l)" = 3 && grep -qx 64 /sys/module/npuipc/parameters/mem_mib &&
grep -q "npuipc.guest=\$1 " /proc/cmdline && exit 7
END
chmod +x "$vartmp/cmd.sh"
copy=$vartmp/tree
mkdir -p "$copy/tools" "$copy/kernel" "$copy/build/vm"
# The harness is vm-run, its guest side, and how it finds a kernel. (The
# KVM probe's verdict is the machine's: the copy shares it.)
cp "$top/tools/vm-run" "$top/tools/vm-guest" "$top/tools/vm-initramfs-init" "$top/tools/kernels" "$copy/tools/"
cp "$top/kernel/kernels.conf" "$copy/kernel/"
cp "$top"/build/vm/kvm-probe-* "$copy/build/vm/" 2>/dev/null
expect_cmd 7 "the command's exit status is vm-run's, from a copy of tools/ under /var/tmp: its guest runs with --module, module parameters reach the module" \
	-- in_dir "$vartmp" "$copy/tools/vm-run" --module "$module" --module-args "num_devices=3 mem_mib=64" \
	--out "$tmp/out" -- "$vartmp/cmd.sh" "$copy/tools/vm-guest"
expect_log "^cwd: $vartmp\$" "the command runs in its working directory under /var/tmp"
expect_log "^host file: from-host\$" "the guest reads the host's /tmp"
expect_true "the host reads what the guest wrote to --out under /tmp" \
	test "$(cat "$tmp/out/file" 2>/dev/null)" = written
expect_true "a guest write elsewhere under /var/tmp stays in the guest" test ! -e "$vartmp/guest-only"
expect_true "a guest write elsewhere under /tmp stays in the guest" test ! -e "$tmp/guest-only"
expect_true "the copy built its own initramfs under its build/vm" \
	bash -c 'ls "$1"/build/vm/initramfs-*.cpio.gz > /dev/null 2>&1' sh "$copy"

expect_status 125 "a kernel WARNING fails the run" \
	-- --no-module -- insmod "$top/tests/vm/warn_module/npuipc_warn_test.ko"
expect_log 'KERNEL PROBLEM' "a kernel WARNING is reported with the kernel log"
expect_status 125 "a module that fails to load fails the run" \
	-- --module "$module" --module-args "num_devices=99" -- true
expect_status 125 "a device reference left behind by the command fails the run" \
	-- --module "$module" -- sh -c 'sleep 1000 < /dev/dri/renderD128 > /dev/null 2>&1 &'
# A boot limit of 1 s: every first boot counts as stuck, so the retry
# must boot the guest again and the command still run once.
NPUIPC_VM_BOOT_TIMEOUT=1 expect_status 0 "a guest stuck in early boot is booted once more" \
	-- --no-module --out "$work/retry" -- sh -c "echo once >> '$work/retry/runs'"
expect_log 'booting it once more' "the retried boot is reported"
n=$((n + 1))
if [ "$(cat "$work/retry/runs" 2>/dev/null)" = once ]; then echo "ok $n the command of a retried boot ran once"; else failed=$((failed + 1)); echo "not ok $n the command of a retried boot ran once"; fi
expect_status 124 "a hung guest is killed at the timeout" \
	-- --no-module --timeout 20 -- sleep 1000
expect_log 'TIMEOUT' "a timeout is reported as such"

# Mock PCI NPUs: ivshmem devices on a q35 machine, unplugged and plugged
# back by the guest through QEMU's monitor.
expect_status 2 "--pci-npu refuses a size that is not a power of two" \
	-- --no-module --pci-npu 3M -- true
expect_status 0 "--pci-npu devices have their BAR2 sizes, and the guest unplugs and plugs them through tools/vm-qmp" \
	-- --no-module --pci-npu 64M --pci-npu 128M -- "$top/tests/vm/pci_npu_hotplug_guest.sh"
[ "$failed" = 0 ]
