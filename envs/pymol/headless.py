"""Headless PyMOL (``pymol2`` under the system ``python3``) outside the sandbox: gold values
computed by PyMOL itself from the files a generator wrote (:func:`run_headless`, cached per
script), and a sandboxed run over an agent's file (:func:`run_headless_file`).
"""

from __future__ import annotations

import functools
import json
import secrets
import subprocess
import tempfile
from pathlib import Path
from typing import Any

SYSTEM_PYTHON = "/usr/bin/python3"
_MARK = "@@SCIAGENT-JSON@@"
_PRELUDE = """\
import json
from pymol2 import PyMOL
_p = PyMOL()
_p.start()
cmd = _p.cmd
"""


class GoldError(RuntimeError):
    """Headless PyMOL could not compute a gold value."""


def run_headless(code: str, timeout: float = 120.0) -> Any:
    """Run ``code`` in a headless PyMOL (``cmd`` defined); returns what it leaves in ``out``."""
    return json.loads(_run_headless_cached(code, timeout))


@functools.lru_cache(maxsize=256)
def _run_headless_cached(code: str, timeout: float) -> str:
    script = f"{_PRELUDE}out = None\n{code}\nprint({_MARK!r} + json.dumps(out))\n"
    with tempfile.TemporaryDirectory(prefix="sciagent-pymol-gold-") as home:
        try:
            res = subprocess.run([SYSTEM_PYTHON, "-I", "-c", script], capture_output=True,
                                 text=True, timeout=timeout, cwd=home,
                                 env={"PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8"})
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GoldError(f"headless PyMOL did not run: {exc}") from None
    for line in res.stdout.splitlines():
        if line.startswith(_MARK):
            return line[len(_MARK):]
    raise GoldError(f"headless PyMOL gave no answer (exit {res.returncode}): "
                    f"{(res.stderr or res.stdout)[-800:]}")


#: Where the agent's file appears inside the sandbox that reads it.
INSIDE_FILE = "/input/file"
#: The answer marker comes on stdin, read before the file is touched: the file cannot know it.
_FILE_PRELUDE = """\
import sys
_mark = sys.stdin.readline().strip()
sys.stdin.close()
import json
from pymol2 import PyMOL
_p = PyMOL()
_p.start()
cmd = _p.cmd
"""


def run_headless_file(code: str, path: str, timeout: float = 120.0,
                      max_output: int = 4 << 20) -> Any:
    """Run ``code`` in a headless PyMOL with the agent's file at ``sys.argv[1]``; returns
    what it leaves in ``out`` (not cached: the file is an agent's output).

    The file is untrusted, so PyMOL runs in a throwaway sandbox (no network, an unprivileged
    uid, the file shown read-only; :func:`sciagent_gym.evaluation.isolated.run_sandboxed`),
    and only the output line that starts with a random per-call marker counts as the answer.
    """
    from sciagent_gym.sdk import SandboxError, run_sandboxed

    marker = secrets.token_hex(16)
    script = f"{_FILE_PRELUDE}out = None\n{code}\nprint(_mark + json.dumps(out), flush=True)\n"
    try:
        res = run_sandboxed([SYSTEM_PYTHON, "-I", "-c", script, INSIDE_FILE],
                            files={INSIDE_FILE: Path(path)}, stdin=f"{marker}\n".encode(),
                            timeout=timeout, max_output=max_output)
    except (SandboxError, OSError) as exc:
        raise GoldError(f"headless PyMOL did not run: {exc}") from None
    return _answer(res, marker, timeout)


#: A headless PyMOL started ahead of need: PyMOL started, then the answer marker and the
#: agent's data (at most MAX_STDIN bytes, in ``_data``) read from stdin; it leaves without
#: the interpreter's teardown once it has answered.
_STDIN_PRELUDE = """\
import sys
import json
from pymol2 import PyMOL
_p = PyMOL()
_p.start()
cmd = _p.cmd
_mark = sys.stdin.buffer.readline().decode("ascii", "replace").strip()
_data = sys.stdin.buffer.read(MAX_STDIN + 1)
sys.stdin.close()
if len(_data) > MAX_STDIN:
    sys.exit("more than %d bytes of input" % MAX_STDIN)
"""
#: Largest input :func:`run_headless_stdin` hands over.
MAX_STDIN = 64 << 20


def run_headless_stdin(code: str, data: bytes, timeout: float = 120.0,
                       max_output: int = 4 << 20, warm: object | None = None) -> Any:
    """As :func:`run_headless_file`, with the agent's data in ``_data`` (given on stdin, after
    the marker) instead of a file; with ``warm`` (an owner, e.g. the env's provider) run by a
    PyMOL started ahead of need for that owner (``run_sandboxed``'s ``warm``), the next one
    started as it ends."""
    from sciagent_gym.sdk import SandboxError, run_sandboxed

    if len(data) > MAX_STDIN:
        raise GoldError(f"the input is larger than {MAX_STDIN} bytes")
    marker = secrets.token_hex(16)
    script = (f"MAX_STDIN = {MAX_STDIN}\n{_STDIN_PRELUDE}out = None\n{code}\n"
              "print(_mark + json.dumps(out), flush=True)\nimport os\nos._exit(0)\n")
    try:
        res = run_sandboxed([SYSTEM_PYTHON, "-I", "-c", script],
                            stdin=f"{marker}\n".encode() + data, timeout=timeout,
                            max_output=max_output, warm=warm)
    except (SandboxError, OSError) as exc:
        raise GoldError(f"headless PyMOL did not run: {exc}") from None
    return _answer(res, marker, timeout)


def _answer(res: Any, marker: str, timeout: float) -> Any:
    """What the run left behind ``marker`` (its last such line); GoldError otherwise."""
    if res.timed_out:
        raise GoldError(f"headless PyMOL did not finish within {timeout:g} s")
    for line in reversed(res.output.splitlines()):
        if line.startswith(marker):
            try:
                return json.loads(line[len(marker):])
            except ValueError as exc:
                raise GoldError(f"headless PyMOL gave a malformed answer: {exc}") from None
    raise GoldError(f"headless PyMOL gave no answer (exit {res.returncode}): "
                    f"{res.output[-800:]}")
