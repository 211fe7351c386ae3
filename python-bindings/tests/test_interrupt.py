"""Ctrl-C during heterps.compile stops it: KeyboardInterrupt, the stage
compilers ended, nothing written. Before 2026-12-01 Python saw Ctrl-C only
once the compile had finished."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

import heterps
from conftest import COMPILE, ROOT, SHIPPED, require_models

# A C++ compiler that never finishes by itself: it logs "start", and "end"
# only if its wait ever ends (the one compile-interrupt.test uses).
HANGING_COMPILER = ROOT / "test" / "Tools" / "Inputs" / "hanging_compiler.sh"


def test_ctrl_c_stops_a_compile_in_its_stage_build(tmp_path, monkeypatch):
    require_models()
    log = tmp_path / "runs.log"
    monkeypatch.setenv("CXX", str(HANGING_COMPILER))
    monkeypatch.setenv("STAGE_BUILD_LOG", str(log))

    # Ctrl-C once a compiler runs (the main thread gets it, as from a
    # terminal).
    def interrupt_when_started():
        while not (log.exists() and "start" in log.read_text()):
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_when_started, daemon=True).start()
    bundle = tmp_path / "bundle"
    with pytest.raises(KeyboardInterrupt):
        heterps.compile(str(SHIPPED["mnist-mlp"].file), path=str(bundle),
                        **COMPILE)
    assert not bundle.exists()
    # Nor any directory it was built in.
    assert [p.name for p in tmp_path.iterdir() if "bundle" in p.name] == []
    # The compiler was ended, not waited for.
    assert log.read_text().split() == ["start"]
