"""A local OpenAI-compatible chat-completions server that replies from a script.

It stands in for a model wherever the prompt agent's whole path (HTTP, retries, parsing,
usage accounting) must run without one: the unit tests, and baselines such as
``benchmarks/stbench_baselines.py``, whose scripted "model" replays a known method. Each
request takes the next scripted ``(status, reply)``; a non-200 status is an error response
(with ``Retry-After: 0``) and an empty script answers ``DONE``. Every reply reports 100 prompt
and 7 completion tokens, so token accounting has something fixed to count. A test can hold
requests at a gate (:attr:`ScriptedModelServer.gate`), e.g. to kill a worker mid-rollout
while its episode waits on the model, with no timing guess.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedModelServer:
    """Serves ``POST /v1/chat/completions`` on 127.0.0.1 (a free port) until :meth:`close`."""

    def __init__(self, script: list[tuple[int, str]] | None = None,
                 usage: tuple[int, int] = (100, 7)) -> None:
        self.script: list[tuple[int, str]] = list(script or [])
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        #: Open (set) by default; while a test holds it clear, every request waits (up to
        #: 120 s) before it is answered.
        self.gate = threading.Event()
        self.gate.set()
        #: Released once by each request that finds the gate closed, so a test can wait for
        #: N requests to be held.
        self.arrived = threading.Semaphore(0)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.headers.append(dict(self.headers))
                if not server.gate.is_set():
                    server.arrived.release()
                    server.gate.wait(120)
                try:
                    self._reply(body)
                except OSError:  # the client asking has gone (e.g. a killed worker)
                    pass

            def _reply(self, body: dict[str, Any]) -> None:
                if self.path != "/v1/chat/completions":
                    self.send_error(404)
                    return
                status, reply = server.script.pop(0) if server.script else (200, "DONE")
                if status != 200:
                    self.send_response(status)
                    self.send_header("Retry-After", "0")
                    self.end_headers()
                    self.wfile.write(b'{"error": "scripted failure"}')
                    return
                payload = json.dumps({
                    "id": "x", "object": "chat.completion", "model": body.get("model", ""),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": reply}}],
                    "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                              "total_tokens": usage[0] + usage[1]}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        #: The base URL to give a prompt agent (``/chat/completions`` is appended to it).
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.gate.set()
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedModelServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
