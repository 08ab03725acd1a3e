"""Shared fixtures and the collection rule for end-to-end tests (helpers live in helpers.py).

Tests under ``tests/e2e/`` drive real programs under Xvfb and are marked ``e2e``; tests under
``tests/unit/`` need no program. An e2e test is skipped when the display programs or ImageJ (the
tool the generic e2e tests use) are missing, except under ``SCIAGENT_REQUIRE_APPS=1`` (CI),
where a missing program fails it; tests of another tool say so with ``helpers.requires``.
"""

from __future__ import annotations

import fcntl
import json
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from helpers import DISPLAY_PROGRAMS, REQUIRE_APPS, missing_programs, tool_missing

E2E_DIR = Path(__file__).parent / "e2e"


def pytest_collection_modifyitems(config, items):
    missing = [*missing_programs(*DISPLAY_PROGRAMS), *tool_missing("imagej")]
    for item in items:
        if E2E_DIR in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)
        if missing and not REQUIRE_APPS and "e2e" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=f"not installed: {', '.join(missing)}"))


@pytest.fixture(scope="session", autouse=True)
def sb3_logs_in_the_session_tmp(tmp_path_factory):
    """stable-baselines3 makes a /tmp/SB3-<date> folder for every model's logger unless
    SB3_LOGDIR names one: the tests' models (and the examples they run) log into pytest's
    temporary tree instead, so a test run leaves nothing in /tmp."""
    import os

    old = os.environ.get("SB3_LOGDIR")
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3"))
    yield
    if old is None:
        os.environ.pop("SB3_LOGDIR", None)
    else:
        os.environ["SB3_LOGDIR"] = old


@pytest.fixture(scope="module")
def imagej_env():
    """One ImageJ env for a test module (the display is reused across resets), with the shell
    allowed whatever the task's modality, for the tests of CLI actions."""
    import gymnasium as gym

    import sciagent_gym  # noqa: F401

    env = gym.make("SciGUI-ImageJ-v0", render_mode="rgb_array", modality="gui+cli")
    yield env
    env.close()


@pytest.fixture(scope="module")
def one_vm_at_a_time():
    """QEMU guests under TCG take both cores: modules that boot them take turns, also across
    pytest-xdist workers (an exclusive lock held for the module)."""
    with open(Path(tempfile.gettempdir()) / "sciagent-tests-qemu.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# -- a scripted model server for the prompt agent --------------------------------------------------


class ScriptedModel:
    """Serves /v1/chat/completions; each request takes the next scripted (status, reply)."""

    def __init__(self, script: list[tuple[int, str]]) -> None:
        self.script = list(script)
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                model.requests.append(body)
                model.headers.append(dict(self.headers))
                if self.path != "/v1/chat/completions":
                    self.send_error(404)
                    return
                status, reply = model.script.pop(0) if model.script else (200, "DONE")
                if status != 200:
                    self.send_response(status)
                    self.send_header("Retry-After", "0")
                    self.end_headers()
                    self.wfile.write(b'{"error": "scripted failure"}')
                    return
                payload = json.dumps({
                    "id": "x", "object": "chat.completion", "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": reply}}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 7,
                              "total_tokens": 107}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def model_server():
    servers = []

    def make(script):
        servers.append(ScriptedModel(script))
        return servers[-1]

    yield make
    for s in servers:
        s.close()
