#!/usr/bin/python3
"""ptydrive.py — runs a command on a new pseudo-terminal and answers airlock's prompts.

  ptydrive.py ANSWERS TIMEOUT OUT -- COMMAND ARG...

The command gets the pty as its stdin, stdout, stderr and controlling terminal
(so `airlock run` without --headless prompts on /dev/tty).  Each time a new
prompt ("... asks to ...") appears, the next character of ANSWERS is typed
(y / n / a / b); prompts beyond ANSWERS get no answer.  Everything the
terminal showed goes to the file OUT; the last line of stdout is
"prompts N".  Exits with the command's status (128+N for a signal), or 124
when TIMEOUT seconds passed (the command is then killed).
"""
import os
import pty
import select
import signal
import sys
import time


def main():
    answers, timeout, outpath = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    argv = sys.argv[5:] if sys.argv[4] == "--" else sys.argv[4:]
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    buf = b""
    answered = 0
    deadline = time.time() + timeout
    timed_out = False
    while True:
        left = deadline - time.time()
        if left <= 0:
            timed_out = True
            break
        r, _, _ = select.select([fd], [], [], min(left, 0.2))
        if r:
            try:
                data = os.read(fd, 4096)
            except OSError:
                data = b""
            if not data:
                break
            buf += data
        prompts = buf.count(b"asks to")
        # answer once the whole prompt line is shown
        if prompts > answered and answered < len(answers) and buf.rstrip().endswith(b">"):
            time.sleep(0.05)
            # the terminal is in canonical mode (airlock does not make it raw): the
            # answer is read once Enter is typed, as a person would
            os.write(fd, answers[answered].encode() + b"\r")
            answered += 1
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, st = os.waitpid(pid, 0)
    with open(outpath, "wb") as f:
        f.write(buf)
    print("prompts %d" % buf.count(b"asks to"))
    if timed_out:
        return 124
    if os.WIFSIGNALED(st):
        return 128 + os.WTERMSIG(st)
    return os.WEXITSTATUS(st)


if __name__ == "__main__":
    sys.exit(main())
