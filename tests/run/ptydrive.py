#!/usr/bin/python3
"""ptydrive.py — runs a command on a new pseudo-terminal and answers airlock's prompts.

  ptydrive.py ANSWERS TIMEOUT OUT -- COMMAND ARG...

The command gets the pty as its stdin, stdout, stderr and controlling terminal
(so `airlock run` without --headless prompts on /dev/tty).  Each time a new
prompt ("... asks to ...") appears, the next character of ANSWERS is typed,
alone, 0.45 s later (y / n / a / b); prompts beyond ANSWERS get no answer.  Everything the
terminal showed goes to the file OUT; the last line of stdout is
"prompts N".  Exits with the command's status (128+N for a signal), or 124
when TIMEOUT seconds passed (the command is then killed).  With
PTYDRIVE_REPLY=1 it answers the query ESC [ > 0 q as tmux would.
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
            # PTYDRIVE_REPLY=1: answer a terminal query (XTVERSION, CSI > 0 q) as tmux
            # does, with a reply that holds an "a" - an agent may try to answer its own ask
            if os.environ.get("PTYDRIVE_REPLY") and b"\x1b[>0q" in data:
                os.write(fd, b"\x1bP>|tmux 3.3a\x1b\\")
        prompts = buf.count(b"asks to")
        # answer once the whole prompt line is shown
        if prompts > answered and answered < len(answers) and buf.rstrip().endswith(b">"):
            # airlock takes a key only some time after the prompt shows (a terminal's
            # reply to the agent's query must not answer it), and only a key on its
            # own: the terminal is raw, no Enter
            time.sleep(0.45)
            os.write(fd, answers[answered].encode())
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
