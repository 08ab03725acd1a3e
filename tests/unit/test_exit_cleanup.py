"""What the package frees at interpreter exit and on SIGTERM/SIGHUP, in a child interpreter."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _child(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=60)


def test_owners_still_alive_at_exit_are_closed_and_collected_ones_are_not(tmp_path):
    out = _child(f"""
        import gc
        from sciagent_gym import processes

        class Owner:
            def __init__(self, name): self.name = name
            def close(self): open({str(tmp_path)!r} + "/" + self.name, "w").close()
            def cleanup(self): self.close()

        kept = processes.close_at_exit(Owner("kept"))
        other = processes.close_at_exit(Owner("by-cleanup"), "cleanup")
        processes.close_at_exit(Owner("collected"))
        gc.collect()
    """)
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["by-cleanup", "kept"]


def test_sigterm_becomes_system_exit_unless_the_program_handles_it():
    out = _child("""
        import os, signal
        from sciagent_gym import processes

        def mine(*_): pass
        signal.signal(signal.SIGHUP, mine)  # the program's own: kept
        assert processes.exit_cleanly_on_signals()
        assert signal.getsignal(signal.SIGHUP) is mine
        try:
            os.kill(os.getpid(), signal.SIGTERM)  # handled before the next line runs
            print("not reached")
        except SystemExit as exc:
            print("exit", exc.code)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["exit", str(128 + 15)]


def test_only_the_main_thread_installs_handlers():
    out = _child("""
        import signal, threading
        from sciagent_gym import processes

        result = []
        t = threading.Thread(target=lambda: result.append(processes.exit_cleanly_on_signals()))
        t.start(); t.join()
        assert result == [False] and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        assert processes.exit_cleanly_on_signals()
        assert not processes.exit_cleanly_on_signals()  # once
    """)
    assert out.returncode == 0, out.stderr
