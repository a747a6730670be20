#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# usage (inside tools/vm-run on the debug kernel): debug_suite.sh BUILD OUT MODE
# MODE "suite": every VM test program and those only this kernel can run
#   (tests-debug.txt: fault injection), the stress and the fuzzer, then a
#   kmemleak scan that must find nothing allocated by npuipc.
# MODE "failslab": the kselftests with slab allocations of the test
#   processes failing at random, then with each of npuipc's allocating
#   functions (ALLOW_ERROR_INJECTION in kernel/) failing at its 2nd, 4th
#   and 6th call through fail_function; the tests themselves may fail, but the kernel must stay
#   clean, every device must end idle, and kmemleak must find nothing of
#   npuipc.
# Writes TAP for its own checks to OUT/debug-MODE.log (kind tap; the plan
# comes last, once the number of checks is known).
build=$1
out=$2
mode=$3
here=$(cd "$(dirname "$0")" && pwd)
fuzz_seconds=${NPUIPC_FUZZ_SECONDS:-60}
mkdir -p "$out"
tap="$out/debug-$mode.log"
: > "$tap"
echo tap > "$out/debug-$mode.kind"
n=0
failed=0
result() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n $2" >> "$tap"; else failed=1; echo "not ok $n $2" >> "$tap"; fi; }

kmemleak=/sys/kernel/debug/kmemleak
[ -w $kmemleak ] && echo clear > $kmemleak
# The vgem interoperation tests need it: without it they would fail anyway,
# this says why.
modprobe vgem
result $? "$mode: vgem loaded"

if [ "$mode" = failslab ]; then
	# The failing processes run static copies from tmpfs and log to tmpfs:
	# a failed allocation inside the 9p client could break the host share.
	# The guest's /tmp is an overlay over the host's (9p), so the work
	# directory gets a tmpfs of its own.
	work=/tmp/failslab
	mkdir -p $work "$out/failslab"
	mount -t tmpfs -o mode=0755 tmpfs $work
	result $? "failslab: tmpfs mounted on $work"
	for t in npuipc_device_test npuipc_bo_test npuipc_export_test npuipc_stream_test npuipc_lifetime_test npuipc_limits_test; do
		cp "$build/tests/kselftest/${t}_static" $work/$t
	done
	cp "$build/tests/kselftest/failslab_exec" $work/
	# The first PID namespace of a nesting level creates that level's pid
	# slab cache. Failing that kmem_cache_create() makes 6.1 dump a stack
	# and leak the cache's kobject name (mm/slub.c sysfs_slab_add): core
	# kernel, not npuipc. The device test's namespace then finds it made.
	unshare -p -f true
	result $? "failslab: the PID namespace's slab cache exists before faults start"
	fs=/sys/kernel/debug/failslab
	echo 1 > $fs/probability
	echo 1 > $fs/interval
	# Not -1 (unlimited): the kernel decrements a limited "times" on each
	# injected failure (lib/fault-inject.c), which counts them.
	times_start=1000000000
	echo $times_start > $fs/times
	echo Y > $fs/task-filter
	echo N > $fs/ignore-gfp-wait
	echo 0 > $fs/verbose
	# run_failing SECONDS PROGRAM LOG: make-it-fail is inherited by the
	# test's forked children. A test failing in userspace can block (a
	# child paused until a parent that crashed kills it): bounded.
	run_failing() {
		started=$(date +%s)
		timeout -k 10 "$1" $work/failslab_exec $work/$2 < /dev/null > $work/$3.log 2>&1
		echo "$3: exit $? after $(($(date +%s) - started)) s" >> $work/summary
	}
	# kill_tests: SIGKILL to every test process left, then up to 60 s for
	# them to be gone; fails when one is still there.
	kill_tests() {
		pkill -KILL -f "^$work/"
		for i in $(seq 60); do
			pgrep -f "^$work/" > /dev/null || return 0
			sleep 1
		done
		return 1
	}
	# injected START NOW: what a limited "times" went down by.
	injected() {
		case "$2" in ''|*[!0-9]*) echo 0 ;; *) echo $(($1 - $2)) ;; esac
	}
	for t in npuipc_device_test npuipc_bo_test npuipc_export_test npuipc_stream_test npuipc_lifetime_test npuipc_limits_test; do
		run_failing 300 $t $t
	done
	echo 0 > $fs/probability
	injected=$(injected $times_start "$(cat $fs/times 2>/dev/null)")
	[ "$injected" -gt 0 ]
	result $? "failslab: $injected faults injected"

	# Each allocating function of npuipc fails at its second, fourth and
	# sixth call, with -ENOMEM (NULL for those that return NULL), while
	# the kselftest that calls it most runs: the module's own error paths,
	# which failslab reaches only by chance. Not at random, so that a
	# function the test calls twice (a vgem import maps twice) fails for
	# sure; three times, as a test left waiting by a failure runs into its
	# harness timeout (30 s). The handler runs in the calling task (kprobes
	# on ftrace), so the task filter limits it to the test's processes;
	# what a run leaves behind is killed before the next function's.
	# What failslab's tests left behind has make-it-fail set too: gone
	# first, so that it cannot take the first function's faults.
	kill_tests
	ff=/sys/kernel/debug/fail_function
	echo 100 > $ff/probability
	echo 2 > $ff/interval
	echo Y > $ff/task-filter
	echo 0 > $ff/verbose
	for spec in npuipc_file_open:device npuipc_bo_alloc_pages:bo \
		    npuipc_dmabuf_export:export npuipc_dmabuf_map:export npuipc_gem_prime_import:export \
		    npuipc_file_add_object:stream npuipc_stream_create:stream npuipc_event_create:stream \
		    npuipc_notify_create:stream npuipc_job_alloc:stream npuipc_copy_worker_get:stream \
		    npuipc_object_export_file:stream; do
		fn=${spec%%:*}
		t=npuipc_${spec#*:}_test
		echo 3 > $ff/times
		if echo $fn > $ff/inject; then
			# -ENOMEM as the unsigned long fail_function reads.
			grep -q "^$fn[[:space:]].*NULL$" $ff/injectable || echo 0xfffffffffffffff4 > $ff/$fn/retval
			run_failing 120 $t "$fn-$t"
			echo "!$fn" > $ff/inject
		fi
		injected=$(injected 3 "$(cat $ff/times 2>/dev/null)")
		kill_tests
		[ "$injected" -gt 0 ]
		result $? "fail_function: $fn failed $injected times under $t"
	done
	echo 0 > $ff/probability
	# Crashed tests leave processes behind; they die as a crash would, and
	# then the kernel must have released everything. One that cannot be
	# killed is stuck in the kernel: its stack goes to the log.
	kill_tests
	left=$?
	for p in $(pgrep -f "^$work/"); do
		echo "unkillable test process $p:"; cat /proc/$p/stack
	done
	result $left "failslab: every test process gone after SIGKILL"
	# The tests failing is expected: the run is judged by the kernel.
	cp $work/*.log $work/summary "$out/failslab/"
	cat $work/summary
	grep -h '^# Totals' $work/*.log
else
	"$here/../run-suite" "$build/tests-vm.txt" "$out"
	"$here/../run-suite" "$build/tests-debug.txt" "$out"
	timeout -k 10 600 "$build/tests/stress/npuipc_stress" --procs 32 --seconds 30 < /dev/null > "$out/stress.log" 2>&1
	echo $? > "$out/stress.rc"; echo tap > "$out/stress.kind"
	timeout -k 10 $((fuzz_seconds + 600)) "$build/tests/fuzz/npuipc_fuzz" --procs 4 --seconds "$fuzz_seconds" \
		< /dev/null > "$out/fuzz.log" 2>&1
	echo $? > "$out/fuzz.rc"; echo tap > "$out/fuzz.kind"
	cat "$out/stress.log" "$out/fuzz.log"
fi

# Every leak counter (tests/kselftest/npuipc_test_util.h) of every device.
idle=0
states=0
for d in /sys/kernel/debug/dri/*/npuipc_state; do
	[ -e "$d" ] || continue
	states=$((states + 1))
	for key in mem_used live_objects imports streams events notifies jobs dmabufs object_files; do
		grep -qx "$key: 0" "$d" || { idle=1; grep "^$key:" "$d"; }
	done
done
[ "$states" -gt 0 ] || { idle=1; echo "no npuipc_state in debugfs: no device to check"; }
result $idle "$mode: every npuipc device idle at the end"

if [ -w $kmemleak ]; then
	# kmemleak reports objects unreferenced for 5 s; scan twice to be sure.
	sleep 6
	echo scan > $kmemleak
	sleep 1
	echo scan > $kmemleak
	cat $kmemleak > "$out/kmemleak-$mode.txt"
	leaks=$(grep -c npuipc "$out/kmemleak-$mode.txt")
	[ "$leaks" = 0 ]
	result $? "$mode: kmemleak finds nothing of npuipc ($(grep -c '^unreferenced object' "$out/kmemleak-$mode.txt") unreferenced objects in all)"
else
	result 1 "$mode: kmemleak is available"
fi
echo "1..$n" >> "$tap"
cat "$tap"
echo $failed > "$out/debug-$mode.rc"
[ "$failed" = 0 ]
