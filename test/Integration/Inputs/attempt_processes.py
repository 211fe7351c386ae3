"""The processes of a job's attempt, for the tests that kill parts of one.

Every process a supervisor starts for an attempt (the launch, mpirun, the
ranks) carries the job's heartbeat directory in HETERPS_HEARTBEAT_DIR,
whatever its process group; the supervisor names it by its real path.
"""
import os


def attempt_processes(heartbeats):
    """{pid: argv} of this machine's processes whose environment names
    `heartbeats`."""
    entry = ("HETERPS_HEARTBEAT_DIR=" + os.path.realpath(heartbeats)).encode()
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % name, "rb") as file:
                if entry not in file.read().split(b"\0"):
                    continue
            with open("/proc/%s/cmdline" % name, "rb") as file:
                found[int(name)] = file.read().split(b"\0")
        except OSError:
            pass
    return found


def alive(pid):
    """Whether `pid` runs (a zombie has ended)."""
    try:
        with open("/proc/%d/stat" % pid) as file:
            return file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
