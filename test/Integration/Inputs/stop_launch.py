#!/usr/bin/env python3
"""Sends SIGNAL to a running `heterps launch` once its log shows a step.

  stop_launch.py SIGNAL LOG -- HETERPS launch ...

Starts the command with stderr to LOG, waits (bounded) until LOG holds a
progress line, sends SIGNAL (TERM or INT) to the launch, and prints its exit
code and its last line.
"""
import signal
import subprocess
import sys
import time


def main():
    name, log = sys.argv[1:3]
    command = sys.argv[sys.argv.index("--") + 1:]
    with open(log, "w") as out:
        launch = subprocess.Popen(command, stderr=out)
    deadline = time.time() + 120
    while True:
        with open(log) as file:
            if "step " in file.read():
                break
        if launch.poll() is not None or time.time() > deadline:
            launch.kill()
            sys.exit("stop_launch: no step before the launch ended or 120 s passed")
        time.sleep(0.1)
    launch.send_signal(getattr(signal, "SIG" + name))
    code = launch.wait(timeout=120)
    with open(log) as file:
        last = file.read().strip().splitlines()[-1]
    print("exit %d: %s" % (code, last))


if __name__ == "__main__":
    main()
