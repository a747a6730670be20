#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# usage (in each tools/vm-pair guest): tests/vm/fabric_pair_check.py
# Both servers write into the fabric window and read what the other wrote,
# telling each other over their link: server 0 writes a token at offset 0
# and sends it; server 1 finds it in its own view of the window, writes its
# own token at offset 4096 and sends that back; server 0 finds it too.
import mmap
import os
import secrets
import socket
import sys
import time

PORT = 7001
# The other server may boot late (vm-run boots a stuck guest twice, 120 s
# each): well within vm-run's limit.
CONNECT_S = 240
# A server whose guest died after connecting sends no FIN.
IO_S = 60


def fail(msg):
    print(f"server {os.environ['NPUIPC_SERVER']}: {msg}", flush=True)
    sys.exit(1)


def window():
    fd = os.open(os.environ["NPUIPC_FABRIC_BAR"], os.O_RDWR)
    try:
        return mmap.mmap(fd, 8192)
    finally:
        os.close(fd)


def receive(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            fail("the link closed early")
        data += chunk
    return data


def main():
    server = int(os.environ["NPUIPC_SERVER"])
    mem = window()
    mine = secrets.token_bytes(32)
    print(f"server {server} token {mine.hex()}", flush=True)
    if server == 0:
        mem[0:32] = mine
        with socket.create_server(("10.77.0.1", PORT)) as listener:
            listener.settimeout(CONNECT_S)
            conn, peer = listener.accept()
            conn.settimeout(IO_S)
            with conn:
                conn.sendall(mine)
                theirs = receive(conn, 32)
        if bytes(mem[4096:4128]) != theirs:
            fail("server 1's token is not in the window")
        print(f"server 0: wrote at 0, read server 1's token at 4096 (from {peer[0]})", flush=True)
        return
    deadline = time.monotonic() + CONNECT_S
    while True:
        try:
            conn = socket.create_connection((os.environ["NPUIPC_PEER"], PORT), timeout=5)
            conn.settimeout(IO_S)
            break
        except OSError:
            if time.monotonic() > deadline:
                fail("server 0 never answered on the link")
            time.sleep(0.5)
    with conn:
        theirs = receive(conn, 32)
        if bytes(mem[0:32]) != theirs:
            fail("server 0's token is not in the window")
        mem[4096:4128] = mine
        conn.sendall(mine)
    print("server 1: read server 0's token at 0, wrote at 4096", flush=True)


try:
    main()
except OSError as e:  # timeouts included
    fail(f"the link failed: {e}")
