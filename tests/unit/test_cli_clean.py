"""``sciagent-gym clean``: sweeps what dead processes left, lists it with -n, spares the live."""

from __future__ import annotations

import os
import subprocess
import sys

from sciagent_gym.cli.main import main


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _leftovers(tmp_path):
    dead = _dead_pid()
    stale = [tmp_path / f"sciagent-sbx-{dead}-abc", tmp_path / f"sciagent-display-{dead}-x",
             tmp_path / "sciagent-qemu-dead1"]
    live = [tmp_path / f"sciagent-sbx-{os.getpid()}-def", tmp_path / "sciagent-qemu-live1",
            tmp_path / "unrelated-123-x"]
    for d in stale + live:
        (d / "home").mkdir(parents=True)
    (stale[2] / "owner.pid").write_text(str(dead))
    (live[1] / "owner.pid").write_text(str(os.getpid()))
    return stale, live


def test_dry_run_lists_and_touches_nothing(tmp_path, capsys):
    stale, live = _leftovers(tmp_path)
    assert main(["clean", "--tmp", str(tmp_path), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert all(f"would remove {d}" in out for d in stale)
    assert "would remove 3 left by processes that are gone" in out
    assert all(d.exists() for d in stale + live)


def test_removes_only_what_dead_processes_left(tmp_path, capsys):
    stale, live = _leftovers(tmp_path)
    assert main(["clean", "--tmp", str(tmp_path)]) == 0
    assert "removed 3 left by processes that are gone" in capsys.readouterr().out
    assert not any(d.exists() for d in stale)
    assert all(d.exists() for d in live)
