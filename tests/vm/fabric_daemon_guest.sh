#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# usage (in a tools/vm-pair --bind-window guest): fabric_daemon_guest.sh DAEMON TEST
# Starts this server's fabric daemon (gRPC on its link address, the other
# server as its peer), runs TEST against it, stops it, and fails when the
# daemon did not stay up to the end. The daemon's log goes to stderr.
daemon=$1
test=$2
port=7790
me=10.77.0.$((NPUIPC_SERVER + 1))
mkdir -p /run/npuipc
"$daemon" --listen "$me:$port" --peer "$((1 - NPUIPC_SERVER))=$NPUIPC_PEER:$port" &
pid=$!
i=0
while [ ! -S /run/npuipc/fabric.sock ] && [ $i -lt 100 ]; do
	kill -0 $pid 2> /dev/null || { echo "fabric_daemon_guest: the daemon exited" >&2; exit 125; }
	sleep 0.1
	i=$((i + 1))
done
[ -S /run/npuipc/fabric.sock ] || { echo "fabric_daemon_guest: no daemon socket" >&2; exit 125; }
"$test" --gtest_color=no
rc=$?
kill -0 $pid 2> /dev/null || { echo "fabric_daemon_guest: the daemon died during the test" >&2; rc=125; }
kill $pid
wait $pid 2> /dev/null
exit $rc
