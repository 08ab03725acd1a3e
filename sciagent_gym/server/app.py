"""The control server's HTTP interface (standard library only, so it installs in a bare guest).

Every request carries ``Authorization: Bearer <token>``, compared in constant time and checked
before any body is read (an unauthenticated request's body is never read; its connection is
closed). Bodies are JSON except file and tree uploads; screen frames come back raw
(``application/octet-stream``, ``X-Width``/``X-Height`` headers, RGB rows) for speed, or as PNG
with ``?format=png``. Errors are JSON ``{"error": reason}`` with a 4xx status for the client's
mistakes and 500 otherwise.

The server holds against whoever reaches its port: at most ``max_workers`` requests are served
at once (a connection beyond that gets 503 and is closed), every connection times out after
``idle_timeout`` seconds without progress, bodies have a declared length within a limit (413
otherwise, before reading), uploads stream to disk, and every file route is confined to the
machine's home, work and tmp directories, opened without following links, regular files only
(:mod:`sciagent_gym.transfer.files`).

Routes::

    GET  /health                         server, display, paths, cli_isolated
    GET  /screen[?format=png]            a frame now
    POST /settle {quiet,cap,interval,tolerance,canonical}   a frame once the screen is still
    POST /actions {"actions": [dict]}    validated as a whole, then performed in order
    POST /input/release | /input/expose  release held keys/buttons; make windows repaint
    GET  /pointer
    GET  /windows;  POST /windows/activate|close|nudge {"id"}
    GET  /clipboard;  POST /clipboard {"text"};  DELETE /clipboard
    POST /programs/launch {name, argv, env, cwd, log};  POST /programs/kill {name}
    GET  /programs/poll?name=
    POST /programs/call {name, code, args | argv, stdin};  GET /programs/collect?name=
    POST /run {command, timeout, max_output}
    GET  /files?path=[&remove=1]         text (the tail of a log, a macro's answer)
    GET  /files/raw?path=;  PUT /files/raw?path=   bytes
    GET  /tree?path=;  PUT /tree?path=[&clear=1]   a directory as tar
    POST /tool/script {script, timeout};  GET /tool/state   the tool's own state channel
"""

from __future__ import annotations

import hmac
import io
import json
import os
import socket
import stat
import tempfile
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import parse_qs, urlsplit

from sciagent_gym.actions.human import parse_action_dict
from sciagent_gym.actions.types import ActionError
from sciagent_gym.controller.settle import SettleConfig
from sciagent_gym.errors import HTTPError
from sciagent_gym.server.machine import Machine
from sciagent_gym.transfer.files import PathRefused, TreeLimits, TreeTooLarge

MAX_JSON_BYTES = 4 << 20
MAX_UPLOAD_BYTES = 256 << 20
MAX_DOWNLOAD_BYTES = 256 << 20
MAX_TEXT_BYTES = 4 << 20
MAX_TOKEN_BYTES = 4096
#: A body this small is read and dropped after an error so the connection stays usable.
DRAIN_BYTES = 64 << 10
MAX_ACTIONS = 1000
VERSION = "2"
_REFUSAL = json.dumps({"error": "the server is busy: too many connections"}).encode()


def _bad(reason: str) -> HTTPError:
    return HTTPError(HTTPStatus.BAD_REQUEST, reason)


class ControlServer(HTTPServer):
    """One machine behind HTTP, serving at most ``max_workers`` connections at once.

    ``token_file``: where the token came from; it is read again when a request's token does
    not match, and a match there replaces the token in memory. A VM restored from a snapshot
    thus switches to the token its new QEMU hands it (``fw_cfg``) on the host's first request,
    and the snapshot's token stops working.
    """

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 16
    #: Connections served at once (each holds a thread); more are answered 503 and closed.
    max_workers = 16
    #: Seconds a connection may wait for the client (idle, or stalled mid-request).
    idle_timeout = 30.0
    max_upload_bytes = MAX_UPLOAD_BYTES
    max_download_bytes = MAX_DOWNLOAD_BYTES
    tree_limits = TreeLimits()

    def __init__(self, address: tuple[str, int], machine: Machine, token: str,
                 adapter: Any = None, token_file: str | Path | None = None) -> None:
        _check_token(token)
        super().__init__(address, _Handler)
        self.machine, self.token, self.adapter = machine, token, adapter
        self.token_file = Path(token_file) if token_file else None
        self.started = time.time()
        self._slots = threading.BoundedSemaphore(self.max_workers)
        self._token_lock = threading.Lock()

    # -- connections ---------------------------------------------------------------------------
    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self._refuse(request)
            return
        try:
            threading.Thread(target=self._serve, args=(request, client_address),
                             daemon=True).start()
        except BaseException:
            self._slots.release()
            self.shutdown_request(request)
            raise

    def _serve(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            self._slots.release()

    def _refuse(self, request: socket.socket) -> None:
        """503 to a connection over the limit, without a thread (a short blocking send)."""
        try:
            request.settimeout(1.0)
            request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n"
                            b"Content-Type: application/json\r\n"
                            b"Content-Length: %d\r\n\r\n%s" % (len(_REFUSAL), _REFUSAL))
        except OSError:
            pass
        self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that vanished or timed out is not the server's error

    # -- the token -----------------------------------------------------------------------------
    def authorized(self, given: str) -> bool:
        """``given`` is the token (constant-time), or is the token now in ``token_file``."""
        if hmac.compare_digest(given.encode(), self.token.encode()):
            return True
        if self.token_file is None:
            return False
        with self._token_lock:
            try:
                fresh = read_token_file(self.token_file)
            except (OSError, ValueError):
                return False
            if hmac.compare_digest(given.encode(), fresh.encode()):
                self.token = fresh
                return True
            return hmac.compare_digest(given.encode(), self.token.encode())


def _check_token(token: str) -> None:
    if not isinstance(token, str) or len(token) < 16:
        raise ValueError("the control server needs a secret token of at least 16 characters")


def read_token_file(path: Path) -> str:
    """The token in ``path``: a regular file (a FIFO must not block), at most 4 KiB."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path} is not a regular file")
        token = os.read(fd, MAX_TOKEN_BYTES).decode("utf-8", "replace").strip()
    finally:
        os.close(fd)
    _check_token(token)
    return token


class _Handler(BaseHTTPRequestHandler):
    server: ControlServer
    protocol_version = "HTTP/1.1"
    server_version = "sciagent-control/" + VERSION

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib signature)
        pass  # quiet: a step makes several requests

    def setup(self) -> None:
        self.timeout = self.server.idle_timeout  # StreamRequestHandler applies it to the socket
        super().setup()

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            if self.close_connection and getattr(self, "_unread", 0):
                self._linger()

    def _linger(self) -> None:
        """Before closing with an unread body: end our side and drop a little input for a
        moment, so the client reads the reply instead of a reset."""
        try:
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(0.5)
            deadline = time.monotonic() + 0.5
            dropped = 0
            while dropped < DRAIN_BYTES and time.monotonic() < deadline:
                chunk = self.connection.recv(16384)
                if not chunk:
                    break
                dropped += len(chunk)
        except OSError:
            pass

    # -- dispatch ----------------------------------------------------------------------------
    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def _dispatch(self, method: str) -> None:
        self._unread = self._declared_length()
        url = urlsplit(self.path)
        self.query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        try:
            self._authorize()  # before anything reads the body
            route = ROUTES.get(url.path)
            if route is None:
                raise HTTPError(HTTPStatus.NOT_FOUND, f"no route {url.path}")
            if method not in route:
                raise HTTPError(HTTPStatus.METHOD_NOT_ALLOWED,
                                f"{url.path} takes {', '.join(sorted(route))}, not {method}")
            route[method](self)
            self._drain()  # a body the route did not want (never raises)
        except HTTPError as exc:
            self._drain()
            self._json({"error": exc.reason}, exc.status)
        except PathRefused as exc:
            self._drain()
            self._json({"error": str(exc)}, HTTPStatus.FORBIDDEN)
        except TreeTooLarge as exc:
            self._drain()
            self._json({"error": str(exc)}, HTTPStatus.REQUEST_ENTITY_TOO_LARGE)
        except Exception as exc:  # the server outlives any one request
            self._drain()
            self._json({"error": f"{type(exc).__name__}: {exc}"},
                       HTTPStatus.INTERNAL_SERVER_ERROR)

    def _authorize(self) -> None:
        header = self.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme != "Bearer" or not self.server.authorized(given):
            self.close_connection = True  # nothing more from this client, its body unread
            raise HTTPError(HTTPStatus.UNAUTHORIZED, "missing or wrong token")

    def _declared_length(self) -> int:
        """The body's length as declared; -1 when unknown (chunked or malformed)."""
        if self.headers.get("Transfer-Encoding"):
            return -1
        try:
            return max(int(self.headers.get("Content-Length") or 0), -1)
        except ValueError:
            return -1

    # -- request bodies ----------------------------------------------------------------------
    def _length(self, limit: int) -> int:
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            raise HTTPError(HTTPStatus.LENGTH_REQUIRED,
                            "chunked bodies are not accepted: send Content-Length")
        raw = self.headers.get("Content-Length")
        if raw is None:
            if self.command in ("GET", "DELETE"):
                return 0
            raise HTTPError(HTTPStatus.LENGTH_REQUIRED, "Content-Length is required")
        try:
            length = int(raw)
        except ValueError:
            raise _bad(f"bad Content-Length {raw!r}") from None
        if length < 0:
            raise _bad(f"bad Content-Length {raw!r}")
        if length > limit:
            self.close_connection = True  # do not read a body this large
            raise HTTPError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                            f"body of {length} bytes exceeds the limit of {limit}")
        return length

    def _body(self, limit: int = MAX_JSON_BYTES) -> bytes:
        """A small body, read whole (JSON); larger bodies stream through :meth:`_reader`."""
        length = self._length(limit)
        data = self.rfile.read(length) if length else b""
        self._unread -= len(data)
        if len(data) != length:
            self.close_connection = True
            raise _bad(f"body ended {length - len(data)} bytes short")
        return data

    def _reader(self, limit: int) -> tuple[int, Any]:
        """The body's length (within ``limit``) and a ``read(n)`` to stream it."""
        length = self._length(limit)

        def read(n: int) -> bytes:
            chunk = self.rfile.read(max(min(n, self._unread), 0))
            self._unread -= len(chunk)
            return chunk

        return length, read

    def _spool(self, limit: int) -> BinaryIO:
        """The body in an anonymous temporary file (on disk, never whole in RAM)."""
        length, read = self._reader(limit)
        spool = tempfile.TemporaryFile()
        try:
            left = length
            while left:
                chunk = read(min(1 << 20, left))
                if not chunk:
                    self.close_connection = True
                    raise _bad(f"body ended {left} bytes short")
                spool.write(chunk)
                left -= len(chunk)
            spool.seek(0)
        except BaseException:
            spool.close()
            raise
        return spool

    def _drain(self) -> None:
        """Drop a small unread body so the connection can carry the next request; close it
        instead when the body is large, unknown or the client unauthenticated."""
        if not self._unread or self.close_connection:
            return
        if 0 < self._unread <= DRAIN_BYTES:
            try:
                self._unread -= len(self.rfile.read(self._unread))
            except OSError:
                pass
        if self._unread:
            self.close_connection = True

    def _json_body(self) -> dict[str, Any]:
        data = self._body(MAX_JSON_BYTES)
        try:
            value = json.loads(data or b"{}")
        except (ValueError, UnicodeDecodeError) as exc:
            raise _bad(f"body is not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise _bad("body must be a JSON object")
        return value

    def _param(self, name: str) -> str:
        if name not in self.query:
            raise _bad(f"query parameter {name!r} is required")
        return self.query[name]

    # -- replies -----------------------------------------------------------------------------
    def _send(self, status: int, body: bytes, content_type: str,
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _send_file(self, f: BinaryIO, size: int, content_type: str) -> None:
        """Stream exactly ``size`` bytes of ``f`` (zeros if it shrank meanwhile)."""
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(size))
        self.end_headers()
        left = size
        while left:
            chunk = f.read(min(1 << 20, left)) or b"\0" * min(1 << 20, left)
            self.wfile.write(chunk)
            left -= len(chunk)

    def _json(self, value: Any, status: int = HTTPStatus.OK) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def _frame(self, frame, seconds: float) -> None:
        if self.query.get("format") == "png":
            from PIL import Image

            buf = io.BytesIO()
            Image.fromarray(frame).save(buf, "PNG", compress_level=1)
            self._send(HTTPStatus.OK, buf.getvalue(), "image/png")
            return
        height, width = frame.shape[:2]
        self._send(HTTPStatus.OK, frame.tobytes(), "application/octet-stream",
                   {"X-Width": str(width), "X-Height": str(height),
                    "X-Seconds": f"{seconds:.6f}"})


# -- handlers ------------------------------------------------------------------------------------

def _machine(h: _Handler) -> Machine:
    return h.server.machine


def health(h: _Handler) -> None:
    m = _machine(h)
    tool = h.server.adapter.name if h.server.adapter is not None else None
    h._json({"ok": True, "version": VERSION, "display": m.display_name, "width": m.width,
             "height": m.height, "paths": m.paths, "tool": tool,
             "cli_isolated": bool(getattr(m, "cli_isolated", False)),
             "uptime": time.time() - h.server.started})


def screen(h: _Handler) -> None:
    t0 = time.perf_counter()
    frame = _machine(h).grab()
    h._frame(frame, time.perf_counter() - t0)


#: The settle's durations a client may set, in seconds; cap and interval must be above 0.
SETTLE_SECONDS = {"quiet": (0, 10), "cap": (0, 60), "interval": (0, 1), "react": (0, 5),
                  "busy_cap": (0, 10)}
_ABOVE_ZERO = ("cap", "interval")


def settle(h: _Handler) -> None:
    body = h._json_body()
    try:
        config = SettleConfig(**{k: float(body[k]) for k in SETTLE_SECONDS if k in body},
                              **({"tolerance": int(body["tolerance"])}
                                 if "tolerance" in body else {}),
                              **({"mode": str(body["mode"])} if "mode" in body else {}))
    except (TypeError, ValueError) as exc:
        raise _bad(f"bad settle parameters: {exc}") from None
    if config.mode not in ("frame", "damage"):
        raise _bad(f"settle mode {config.mode!r}: frame or damage")
    bad = [k for k, (low, high) in SETTLE_SECONDS.items()
           if not low <= getattr(config, k) <= high
           or (k in _ABOVE_ZERO and getattr(config, k) == 0)]
    if bad:
        raise _bad("settle parameters out of range: " + ", ".join(
            f"{k} {SETTLE_SECONDS[k][0]}..{SETTLE_SECONDS[k][1]}" for k in bad))
    t0 = time.perf_counter()
    frame = _machine(h).settle(config, canonical=bool(body.get("canonical")))
    h._frame(frame, time.perf_counter() - t0)


def actions(h: _Handler) -> None:
    body = h._json_body()
    items = body.get("actions")
    if not isinstance(items, list) or len(items) > MAX_ACTIONS:
        raise _bad(f"'actions' must be a list of at most {MAX_ACTIONS} action dicts")
    m = _machine(h)
    parsed = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise _bad(f"action {i} is not an object")
        try:
            parsed.extend(parse_action_dict(item, (m.width, m.height)))
        except ActionError as exc:
            raise _bad(f"action {i}: {exc}") from None
    m.execute(parsed)
    h._json({"done": len(parsed)})


def release(h: _Handler) -> None:
    h._body(MAX_JSON_BYTES)
    _machine(h).release_all()
    h._json({})


def expose(h: _Handler) -> None:
    h._body(MAX_JSON_BYTES)
    _machine(h).expose_all()
    h._json({})


def pointer(h: _Handler) -> None:
    x, y = _machine(h).pointer()
    h._json({"x": x, "y": y})


def windows(h: _Handler) -> None:
    h._json({"windows": [w.to_dict() for w in _machine(h).windows()]})


def _window_op(op: str):
    def handle(h: _Handler) -> None:
        body = h._json_body()
        wid = body.get("id")
        if not isinstance(wid, int) or isinstance(wid, bool):
            raise _bad("'id' must be an integer window id")
        if wid not in {w.id for w in _machine(h).windows()}:
            raise HTTPError(HTTPStatus.NOT_FOUND, f"no window with id {wid}")
        getattr(_machine(h), op)(wid)
        h._json({})

    return handle


def clipboard_get(h: _Handler) -> None:
    h._json({"text": _machine(h).clipboard.get()})


def clipboard_set(h: _Handler) -> None:
    text = h._json_body().get("text")
    if not isinstance(text, str):
        raise _bad("'text' must be a string")
    _machine(h).clipboard.set(text)
    h._json({})


def clipboard_clear(h: _Handler) -> None:
    _machine(h).clipboard.close()
    h._json({})


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value or "/" in value:
        raise _bad("'name' must be a non-empty string without '/'")
    return value


def launch(h: _Handler) -> None:
    body = h._json_body()
    argv = body.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise _bad("'argv' must be a non-empty list of strings")
    env = body.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise _bad("'env' must map names to strings")
    pid = _machine(h).spawn(_name(body.get("name")), argv, env=env, cwd=body.get("cwd"),
                            log=body.get("log"))
    h._json({"pid": pid})


def kill(h: _Handler) -> None:
    _machine(h).kill(_name(h._json_body().get("name")))
    h._json({})


def call(h: _Handler) -> None:
    """A channel client whose stdout is its reply (the adapters' ``call_client``)."""
    body = h._json_body()
    code, argv, args = body.get("code"), body.get("argv"), body.get("args") or []
    if (code is None) == (argv is None):
        raise _bad("give exactly one of 'code' and 'argv'")
    if code is not None and not isinstance(code, str):
        raise _bad("'code' must be a string")
    if argv is not None and (not isinstance(argv, list) or not argv
                             or not all(isinstance(a, str) for a in argv)):
        raise _bad("'argv' must be a non-empty list of strings")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise _bad("'args' must be a list of strings")
    stdin = body.get("stdin") or ""
    if not isinstance(stdin, str):
        raise _bad("'stdin' must be a string")
    pid = _machine(h).call(_name(body.get("name")), code=code, args=args, argv=argv,
                           stdin=stdin)
    h._json({"pid": pid})


def collect(h: _Handler) -> None:
    h._json(_machine(h).collect(_name(h._param("name"))))


def poll(h: _Handler) -> None:
    h._json(_machine(h).poll(_name(h._param("name"))))


def run(h: _Handler) -> None:
    body = h._json_body()
    command = body.get("command")
    if not isinstance(command, str) or not command:
        raise _bad("'command' must be a non-empty string")
    try:
        timeout = float(body.get("timeout", 30.0))
        max_output = int(body.get("max_output", 8192))
    except (TypeError, ValueError) as exc:
        raise _bad(f"bad timeout or max_output: {exc}") from None
    if not 0 < timeout <= 3600:
        raise _bad("'timeout' must be in (0, 3600] seconds")
    result = _machine(h).run_command(command, timeout=timeout, max_output=max_output)
    h._json({"returncode": result.returncode, "output": result.output,
             "timed_out": result.timed_out, "truncated": result.truncated})


def _path(h: _Handler) -> str:
    path = h._param("path")
    if not path.startswith("/"):
        raise _bad(f"path must be absolute, got {path!r}")
    return path


def file_text(h: _Handler) -> None:
    remove = h.query.get("remove") in ("1", "true")
    try:
        max_bytes = int(h.query.get("max_bytes", 1 << 20))
    except ValueError:
        raise _bad("'max_bytes' must be an integer") from None
    if not 0 < max_bytes <= MAX_TEXT_BYTES:
        raise _bad(f"'max_bytes' must be in 1..{MAX_TEXT_BYTES}")
    h._json({"data": _machine(h).read_file(_path(h), remove=remove, max_bytes=max_bytes)})


def file_get(h: _Handler) -> None:
    path = _path(h)
    try:
        f = _machine(h).read_bytes(path)
    except FileNotFoundError:
        raise HTTPError(HTTPStatus.NOT_FOUND, f"no file {path}") from None
    with f:
        size = os.fstat(f.fileno()).st_size
        if size > h.server.max_download_bytes:
            raise HTTPError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                            f"{path} holds {size} bytes, over the limit of "
                            f"{h.server.max_download_bytes}")
        h._send_file(f, size, "application/octet-stream")


def file_put(h: _Handler) -> None:
    path = _path(h)
    h.server.machine.files.check(path)  # refuse before reading the body
    length, read = h._reader(h.server.max_upload_bytes)
    try:
        _machine(h).write_bytes(path, read, length)
    except EOFError as exc:
        h.close_connection = True
        raise _bad(str(exc)) from None
    except IsADirectoryError:
        raise _bad(f"{path} is a directory (use /tree)") from None
    h._json({})


def tree_get(h: _Handler) -> None:
    path = _path(h)
    with tempfile.TemporaryFile() as spool:
        _machine(h).get_tree(path, spool, h.server.tree_limits)
        size = spool.tell()
        spool.seek(0)
        h._send_file(spool, size, "application/x-tar")


def tree_put(h: _Handler) -> None:
    path = _path(h)
    h.server.machine.files.check(path)
    with h._spool(h.server.max_upload_bytes) as spool:
        try:
            _machine(h).put_tree(path, spool, h.server.tree_limits,
                                 clear=h.query.get("clear") in ("1", "true"))
        except (PathRefused, TreeTooLarge):
            raise
        except ValueError as exc:  # a bad archive: the client's mistake
            raise _bad(str(exc)) from None
    h._json({})


def _adapter(h: _Handler):
    if h.server.adapter is None:
        raise HTTPError(HTTPStatus.NOT_FOUND, "this server was started without --tool")
    return h.server.adapter


def tool_script(h: _Handler) -> None:
    body = h._json_body()
    script = body.get("script")
    if not isinstance(script, str) or not script:
        raise _bad("'script' must be a non-empty string")
    answer = _adapter(h).run_script(_machine(h), script, timeout=float(body.get("timeout", 30)))
    h._json({"output": answer})


def tool_state(h: _Handler) -> None:
    h._json({"state": _adapter(h).dump_state(_machine(h))})


ROUTES: dict[str, dict[str, Any]] = {
    "/health": {"GET": health},
    "/screen": {"GET": screen},
    "/settle": {"POST": settle},
    "/actions": {"POST": actions},
    "/input/release": {"POST": release},
    "/input/expose": {"POST": expose},
    "/pointer": {"GET": pointer},
    "/windows": {"GET": windows},
    "/windows/activate": {"POST": _window_op("activate_window")},
    "/windows/close": {"POST": _window_op("close_window")},
    "/windows/nudge": {"POST": _window_op("nudge_window")},
    "/clipboard": {"GET": clipboard_get, "POST": clipboard_set, "DELETE": clipboard_clear},
    "/programs/launch": {"POST": launch},
    "/programs/kill": {"POST": kill},
    "/programs/poll": {"GET": poll},
    "/programs/call": {"POST": call},
    "/programs/collect": {"GET": collect},
    "/run": {"POST": run},
    "/files": {"GET": file_text},
    "/files/raw": {"GET": file_get, "PUT": file_put},
    "/tree": {"GET": tree_get, "PUT": tree_put},
    "/tool/script": {"POST": tool_script},
    "/tool/state": {"GET": tool_state},
}
