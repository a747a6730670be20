#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# usage (in each guest of a tools/vm-pair --bind-window --fabric-daemon):
#   fabric_pair_suite.sh OUT BUILD_DIR TOP
# Runs the fabric programs one after the other, as the other server does:
# each meets its counterpart over the link. Each program's output and
# status land in OUT/serverN/PROGRAM.log and .rc, which
# tests/vm/fabric_pair_test.sh judges on the host.
out=$1/server$NPUIPC_SERVER
build=$2
top=$3
mkdir -p "$out"
run() {
	name=$1
	shift
	"$@" > "$out/$name.log" 2>&1
	echo $? > "$out/$name.rc"
}
run npuipc_fabric_test "$build/tests/kselftest/npuipc_fabric_test"
run fabric_daemon_gtest "$build/tests/gtest/fabric_daemon_gtest" --gtest_color=no
run acl_fabric_gtest "$build/tests/gtest/acl_fabric_gtest" --gtest_color=no
run fabric_example "$top/examples/run-fabric-demo" "$build/examples"
