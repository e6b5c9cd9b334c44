#!/usr/bin/env python3
"""Stands in for journald in test_journal.cpp: reads the native journal protocol.

Run inside a private mount namespace where /run is a fresh tmpfs. Binds
/run/systemd/journal/socket, starts the command given (kcached) with stderr connected to
STDERR_FILE and JOURNAL_STREAM naming that file, as systemd does for StandardError=journal,
records every entry until the command exits, and writes them to OUT_FILE as JSON.
The protocol: each datagram is one entry of fields; "NAME=value\\n", or for values that may hold
newlines "NAME\\n" + 64-bit little-endian length + value + "\\n" (systemd's journal-send.c).
"""
import json
import os
import socket
import subprocess
import sys


def parse(datagram):
    fields, i = {}, 0
    while i < len(datagram):
        nl = datagram.index(b"\n", i)
        line = datagram[i:nl]
        if b"=" in line:
            name, value = line.split(b"=", 1)
            i = nl + 1
        else:
            name, size = line, int.from_bytes(datagram[nl + 1:nl + 9], "little")
            value = datagram[nl + 9:nl + 9 + size]
            i = nl + 9 + size + 1
        fields[name.decode()] = value.decode("utf-8", "replace")
    return fields


def main():
    stderr_file, out_file, command = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs("/run/systemd/journal", exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("/run/systemd/journal/socket")
    sock.settimeout(0.1)
    err = open(stderr_file, "w")
    st = os.fstat(err.fileno())
    env = dict(os.environ, JOURNAL_STREAM="%d:%d" % (st.st_dev, st.st_ino))
    child = subprocess.Popen(command, stderr=err, stdout=err, env=env)
    entries = []
    while True:
        try:
            entries.append(parse(sock.recv(1 << 20)))
            continue
        except socket.timeout:
            pass
        if child.poll() is not None:
            break
    with open(out_file, "w") as out:
        json.dump({"exit": child.returncode, "entries": entries}, out)


if __name__ == "__main__":
    main()
