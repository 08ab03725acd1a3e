"""What the package frees at interpreter exit and on SIGTERM/SIGHUP, in a child interpreter."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


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


def test_a_signal_that_lands_on_another_thread_still_wakes_a_sleeping_main_thread():
    # What the kernel sometimes does with a process signal: a worker thread gets it, Python's
    # C handler only flags it, and a main thread asleep in time.sleep would sleep on.
    out = _child("""
        import signal, threading, time
        from sciagent_gym import processes

        assert processes.exit_cleanly_on_signals()
        ready = threading.Event()
        def worker():
            ready.set()
            time.sleep(120)
        t = threading.Thread(target=worker, daemon=True)
        t.start(); ready.wait()
        t0 = time.monotonic()
        try:
            # delivered to the worker, not to main (which may still notice it at once, before
            # it sleeps: then the handler runs between bytecodes, inside this try)
            signal.pthread_kill(t.ident, signal.SIGTERM)
            time.sleep(45)
            print("slept on")
        except SystemExit as exc:
            print("exit", exc.code, time.monotonic() - t0 < 30)  # woken, not slept out
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["exit", str(128 + 15), "True"]


def test_a_relayed_copy_of_a_signal_does_not_interrupt_the_cleanup_it_started():
    out = _child("""
        import os, signal, time
        from sciagent_gym import processes

        assert processes.exit_cleanly_on_signals()
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        except SystemExit as exc:
            print("exit", exc.code)
            time.sleep(0.5)  # the relay's copy arrives during "cleanup": it must not raise
            print("cleaned")
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["exit", "143", "cleaned"]


def test_a_task_dropped_without_cleanup_leaves_no_gold_directory(tmp_path):
    # tests and crashed rollouts drop staged tasks without cleanup(): its reference images are
    # removed when the task is collected, and at exit for one still alive then
    out = _child(f"""
        import gc, glob, os, numpy as np
        from sciagent_gym.tasks.spec import parse_spec
        from sciagent_gym.tasks.task import Task

        spec = parse_spec({{"id": "t/s", "tool": "t", "title": "T", "instruction": "Do it.",
                           "difficulty": "easy", "oracle": ["DONE"],
                           "negatives": {{"n": ["DONE"]}},
                           "setup": {{"generate": [{{"fn": "img", "as": "g"}}]}},
                           "evaluator": {{"criteria": [{{"name": "x", "getter": "answer_text",
                                                        "check": {{"op": "equals",
                                                                   "expected": "a"}}}}]}}}})
        gens = {{"img": lambda work, rng: {{"image": np.zeros((4, 4), np.uint8)}}}}
        def staged(n):
            task = Task(spec, n, gens, {{"work": "/w", "home": "/h", "tmp": "/t"}})
            work = {str(tmp_path)!r} + f"/w{{n}}"
            os.makedirs(work)
            task.stage(__import__("pathlib").Path(work))
            return task
        dropped = staged(0).gold_dir
        gc.collect()
        print("collected", os.path.exists(dropped))
        kept = staged(1)
        with open({str(tmp_path / "kept")!r}, "w") as fh:
            fh.write(str(kept.gold_dir))
        print("alive", os.path.exists(kept.gold_dir))
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["collected", "False", "alive", "True"]
    kept = Path((tmp_path / "kept").read_text())
    assert kept.name.startswith("sciagent-gold-") and not kept.exists()  # gone at exit
