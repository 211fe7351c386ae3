"""Runs a command, sends it SIGNAL once LOG holds "start", and prints how it
ended: `interrupt_when_started.py SIGNAL LOG COMMAND...`."""

import signal
import subprocess
import sys
import time
from pathlib import Path

number = getattr(signal, sys.argv[1])
log = Path(sys.argv[2])
process = subprocess.Popen(sys.argv[3:])
while not (log.exists() and "start" in log.read_text()):
    if process.poll() is not None:
        sys.exit(f"the command ended before it started a compiler: {process.returncode}")
    time.sleep(0.05)
process.send_signal(number)
code = process.wait()
print(f"ended by signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}")
