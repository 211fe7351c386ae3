#!/usr/bin/env python3
"""Sends SIGNAL to a running `heterps launch` once its log shows a step.

  stop_launch.py SIGNAL LOG [--group] -- HETERPS launch BUNDLE ...

Starts the command with stderr to LOG, waits (bounded) until LOG holds a
progress line, sends SIGNAL (TERM, INT or KILL) to the launch (with
--group, to its process group, as a terminal's Ctrl-C does), and prints its
exit code and its last line. Then prints how many processes of the job
(those whose command line names BUNDLE) are left: at once where the launch
ended by itself, within 15 s where it was killed (its mpirun ends its
ranks as it dies).
"""
import os
import signal
import subprocess
import sys
import time


def job_processes(bundle):
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % name, "rb") as file:
                words = file.read().split(b"\0")
            with open("/proc/%s/stat" % name) as file:
                zombie = file.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            continue
        if not zombie and bundle.encode() in words:
            found.append(int(name))
    return found


def main():
    name, log = sys.argv[1:3]
    group = "--group" in sys.argv[3:sys.argv.index("--")]
    command = sys.argv[sys.argv.index("--") + 1:]
    bundle = command[2]
    with open(log, "w") as out:
        launch = subprocess.Popen(command, stderr=out, start_new_session=group)
    deadline = time.time() + 120
    while True:
        with open(log) as file:
            if "step " in file.read():
                break
        if launch.poll() is not None or time.time() > deadline:
            launch.kill()
            sys.exit("stop_launch: no step before the launch ended or 120 s passed")
        time.sleep(0.1)
    number = getattr(signal, "SIG" + name)
    if group:
        os.killpg(launch.pid, number)
    else:
        launch.send_signal(number)
    code = launch.wait(timeout=120)
    with open(log) as file:
        lines = file.read().strip().splitlines()
    print("exit %d: %s" % (code, lines[-1] if lines else ""))
    left = job_processes(bundle)
    until = time.time() + 15
    while name == "KILL" and left and time.time() < until:
        time.sleep(0.1)
        left = job_processes(bundle)
    print("job processes left: %d" % len(left))


if __name__ == "__main__":
    main()
