"""Drives `sessiontool recover` on a pseudo-terminal as a person would: waits for the numbered
list, picks a session, gives a checkpoint tag, and prints everything the terminal showed.

usage: recover_pick.py SESSIONTOOL HOME PROJECT CHOICE TAG
"""
import os
import pty
import select
import sys
import time

binary, home, project, choice, tag = sys.argv[1:6]


def read_until(fd, needle, timeout=20.0):
    seen = b""
    end = time.time() + timeout
    while needle.encode() not in seen:
        left = end - time.time()
        if left <= 0:
            raise SystemExit("timed out waiting for %r; screen so far:\n%s" % (needle, seen.decode(errors="replace")))
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen


pid, fd = pty.fork()
if pid == 0:
    os.chdir(home)
    os.execv(binary, [binary, "recover", "--project", project, "--home", home])
screen = read_until(fd, "empty to quit): ")
os.write(fd, (choice + "\n").encode())
screen += read_until(fd, "tag (empty: no): ")
os.write(fd, (tag + "\n").encode())
rest = b""
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    rest += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.write((screen + rest).decode(errors="replace").replace("\r\n", "\n"))
sys.exit(os.waitstatus_to_exitcode(status))
