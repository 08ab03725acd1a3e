"""The control server, the remote provider and the QEMU provider against a hostile agent or
peer: one test per attack that worked on the code before these defences.

Fast: the server runs in this process on loopback over a machine without an X display (a
fake, named so; its files, programs and commands are Machine's own), the remote peers are tiny
fake HTTP servers, QEMU is never started (its command line and saved states are checked with a
fake monitor).
"""

from __future__ import annotations

import http.server
import io
import json
import os
import resource
import secrets
import shutil
import socket
import stat
import tarfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import requests

from sciagent_gym.providers.remote.client import ControlClient, ControlError
from sciagent_gym.server.app import ControlServer
from sciagent_gym.server.machine import Machine

TOKEN = secrets.token_urlsafe(24)


class FakeDisplayMachine(Machine):
    """Machine's files, programs and commands with no X display (a fake for these tests)."""

    def __init__(self, home: str) -> None:
        self.display_name, self.width, self.height = "fake", 64, 48
        self._init_files(home, None, None)

    def grab(self) -> np.ndarray:
        return np.zeros((self.height, self.width, 3), np.uint8)

    def close(self) -> None:
        self.kill_all()


def _start(server: ControlServer) -> str:
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def served(tmp_path):
    """A control server on loopback for a fake-display machine; yields (url, machine, server)."""
    machine = FakeDisplayMachine(str(tmp_path / "home"))
    server = ControlServer(("127.0.0.1", 0), machine, TOKEN)
    server.idle_timeout = 1.0
    url = _start(server)
    yield url, machine, server
    server.shutdown()
    server.server_close()
    machine.close()


def _raw(url: str, request: bytes, timeout: float = 5.0) -> bytes:
    """Send raw bytes and return what comes back until the server closes (or ``timeout``)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(request)
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    return out


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


# -- the server: connections, bodies, authentication ----------------------------------------


def test_idle_connections_are_bounded_and_dropped(tmp_path):
    """Unauthenticated idle connections piled up as threads forever: now at most max_workers
    are held, extra ones get 503 at once, and idle ones are closed after idle_timeout."""
    class SmallServer(ControlServer):
        max_workers = 4
        idle_timeout = 1.0

    machine = FakeDisplayMachine(str(tmp_path / "home"))
    server = SmallServer(("127.0.0.1", 0), machine, TOKEN)
    url = _start(server)
    host, port = "127.0.0.1", server.server_address[1]
    threads_before = threading.active_count()
    idle = [socket.create_connection((host, port), timeout=5) for _ in range(12)]
    try:
        time.sleep(0.3)
        assert threading.active_count() - threads_before <= 4
        refused = 0
        for sock in idle[4:]:
            sock.settimeout(2)
            reply = sock.recv(4096)
            refused += reply.startswith(b"HTTP/1.1 503")
        assert refused == 8
        t0 = time.monotonic()
        for sock in idle[:4]:
            sock.settimeout(5)
            assert sock.recv(4096) == b""  # closed by the server, idle too long
        assert time.monotonic() - t0 < 3
        reply = requests.get(f"{url}/health", headers=_auth(), timeout=5)
        assert reply.status_code == 200
    finally:
        for sock in idle:
            sock.close()
        server.shutdown()
        server.server_close()


def test_the_client_waits_out_a_busy_server(tmp_path):
    """The worker bound must not break the host: a request refused as busy is retried."""
    class OneWorker(ControlServer):
        max_workers = 1
        idle_timeout = 0.5

    machine = FakeDisplayMachine(str(tmp_path / "home"))
    server = OneWorker(("127.0.0.1", 0), machine, TOKEN)
    url = _start(server)
    try:
        with socket.create_connection(server.server_address, timeout=5):
            time.sleep(0.1)  # it holds the only worker until idle_timeout
            assert ControlClient(url, TOKEN, timeout=5).health()["ok"]
    finally:
        server.shutdown()
        server.server_close()


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.parametrize("route", ["/files/raw", "/tree"])
def test_a_1gib_body_is_refused_before_it_is_read(served, route):
    url, machine, _ = served
    before = _rss_mib()
    t0 = time.monotonic()
    path = f"{machine.work}/big.bin"
    reply = _raw(url, (f"PUT {route}?path={path} HTTP/1.1\r\nHost: x\r\n"
                       f"Authorization: Bearer {TOKEN}\r\nContent-Length: {1 << 30}\r\n\r\n"
                       ).encode() + b"x" * 1000)
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert time.monotonic() - t0 < 3
    assert _rss_mib() - before < 50
    assert not Path(path).exists()


def test_an_upload_streams_to_disk_within_the_limit(served):
    url, machine, server = served
    server.max_upload_bytes = 8 << 20
    data = os.urandom(6 << 20)
    reply = requests.put(f"{url}/files/raw", params={"path": f"{machine.work}/in.bin"},
                         data=data, headers=_auth(), timeout=10)
    assert reply.status_code == 200 and Path(machine.work, "in.bin").read_bytes() == data
    reply = requests.put(f"{url}/files/raw", params={"path": f"{machine.work}/in2.bin"},
                         data=data + data, headers=_auth(), timeout=10)
    assert reply.status_code == 413 and not Path(machine.work, "in2.bin").exists()


def test_an_unauthenticated_body_is_never_read(served):
    """The server used to read (drain) the body of a request it refused: a client that
    declared a body and sent none held the thread forever."""
    url, _, _ = served
    t0 = time.monotonic()
    reply = _raw(url, b"POST /actions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\n"
                      b"Content-Length: 1000\r\n\r\n", timeout=5)
    assert reply.startswith(b"HTTP/1.1 401"), reply[:200]
    assert time.monotonic() - t0 < 2.5  # answered and closed, not waiting for the body


def test_a_stalled_request_times_out(served):
    """An authorized client that stops mid-body frees its thread after idle_timeout."""
    url, machine, _ = served
    t0 = time.monotonic()
    _raw(url, (f"PUT /files/raw?path={machine.work}/x HTTP/1.1\r\nHost: x\r\n"
               f"Authorization: Bearer {TOKEN}\r\nContent-Length: 100\r\n\r\nabc").encode(),
         timeout=10)
    assert time.monotonic() - t0 < 5
    assert not Path(machine.work, "x").exists()


# -- the server: file routes confined to the home ------------------------------------------


def test_file_routes_refuse_paths_outside_the_home(served, tmp_path):
    url, machine, _ = served
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("gold")
    home = machine.home
    for path in ("/etc/passwd", f"{home}/../outside/secret.txt", str(outside / "secret.txt"),
                 f"{home}/work/../../outside/secret.txt"):
        for route in ("/files", "/files/raw"):
            reply = requests.get(f"{url}{route}", params={"path": path}, headers=_auth(),
                                 timeout=5)
            assert reply.status_code == 403, (route, path, reply.text)
        reply = requests.get(f"{url}/tree", params={"path": path}, headers=_auth(), timeout=5)
        assert reply.status_code == 403
    reply = requests.put(f"{url}/files/raw", params={"path": str(outside / "planted")},
                         data=b"x", headers=_auth(), timeout=5)
    assert reply.status_code == 403 and not (outside / "planted").exists()


def test_symlinks_planted_in_the_work_directory_lead_nowhere(served, tmp_path):
    url, machine, _ = served
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("gold")
    work = Path(machine.work)
    (work / "leak.txt").symlink_to(outside / "secret.txt")
    (work / "door").symlink_to(outside)
    for path in (f"{work}/leak.txt", f"{work}/door/secret.txt"):
        for route in ("/files", "/files/raw"):
            reply = requests.get(f"{url}{route}", params={"path": path}, headers=_auth(),
                                 timeout=5)
            assert reply.status_code == 403, (route, path, reply.text)
            assert "gold" not in reply.text
    # Writing through a symlinked directory is refused; over a symlinked file replaces it.
    reply = requests.put(f"{url}/files/raw", params={"path": f"{work}/door/planted"},
                         data=b"x", headers=_auth(), timeout=5)
    assert reply.status_code == 403 and not (outside / "planted").exists()
    reply = requests.put(f"{url}/files/raw", params={"path": f"{work}/leak.txt"},
                         data=b"mine", headers=_auth(), timeout=5)
    assert reply.status_code == 200
    assert (outside / "secret.txt").read_text() == "gold"
    assert not (work / "leak.txt").is_symlink() and (work / "leak.txt").read_bytes() == b"mine"
    # A tree download leaves the link out instead of following it.
    reply = requests.get(f"{url}/tree", params={"path": str(work)}, headers=_auth(), timeout=5)
    names = tarfile.open(fileobj=io.BytesIO(reply.content)).getnames()
    assert reply.status_code == 200 and "door" not in names and "leak.txt" in names
    assert b"gold" not in reply.content


def test_tree_uploads_take_only_files_and_directories(served, tmp_path):
    url, machine, _ = served
    for name, kind, target in (("link", tarfile.SYMTYPE, "/etc"),
                               ("inside", tarfile.SYMTYPE, "sub"),
                               ("hard", tarfile.LNKTYPE, "/etc/passwd"),
                               ("dev", tarfile.CHRTYPE, ""),
                               ("../escaped.txt", tarfile.REGTYPE, "")):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, target
            tar.addfile(info, io.BytesIO(b"") if kind == tarfile.REGTYPE else None)
        reply = requests.put(f"{url}/tree", params={"path": machine.work},
                             data=buf.getvalue(), headers=_auth(), timeout=5)
        assert reply.status_code == 403, (name, reply.text)
        assert not (Path(machine.work) / name).is_symlink()
    assert not (Path(machine.home).parent / "escaped.txt").exists()


def test_a_fifo_is_refused_at_once(served):
    """A FIFO where a file is expected made the server's plain open() block forever."""
    url, machine, _ = served
    fifo = Path(machine.work) / "answer.txt"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    for route in ("/files", "/files/raw"):
        reply = requests.get(f"{url}{route}", params={"path": str(fifo)}, headers=_auth(),
                             timeout=5)
        assert reply.status_code == 403 and "regular" in reply.json()["error"]
    reply = requests.get(f"{url}/tree", params={"path": machine.work}, headers=_auth(),
                         timeout=5)
    assert reply.status_code == 200
    assert tarfile.open(fileobj=io.BytesIO(reply.content)).getnames() == []
    assert time.monotonic() - t0 < 3


def test_the_token_file_rotates_the_token(tmp_path):
    """A VM restored from a snapshot kept the snapshot's token: now the server re-reads its
    token file on a mismatch, adopts the new token and drops the old one."""
    machine = FakeDisplayMachine(str(tmp_path / "home"))
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    server = ControlServer(("127.0.0.1", 0), machine, TOKEN, token_file=token_file)
    url = _start(server)
    try:
        fresh = secrets.token_urlsafe(24)
        token_file.write_text(fresh)
        assert ControlClient(url, fresh).health()["ok"]
        with pytest.raises(ControlError, match="HTTP 401"):
            ControlClient(url, TOKEN).health()
        os.unlink(token_file)
        os.mkfifo(token_file)  # a FIFO in its place must not hang the check
        with pytest.raises(ControlError, match="HTTP 401"):
            ControlClient(url, "x" * 32, timeout=5).health()
        assert ControlClient(url, fresh).health()["ok"]
    finally:
        server.shutdown()
        server.server_close()


def test_health_says_commands_are_not_isolated_without_zones(served):
    url, _, _ = served
    assert ControlClient(url, TOKEN).health()["cli_isolated"] is False


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="dropping to another uid needs root and util-linux")
def test_agent_commands_run_as_another_uid_without_network(tmp_path):
    """In a guest the agent's commands ran as the server's own user, with its network: now
    they run as another uid, no capabilities, no_new_privs, only a loopback interface, their
    own PID namespace, and a clean environment."""
    from sciagent_gym.server.zones import Account, UserZones

    machine = FakeDisplayMachine(str(tmp_path / "home"))
    tools = {t: shutil.which(t) for t in ("unshare", "prlimit", "setpriv", "env")}
    zones = UserZones(Account("daemon", 1, 1, "/nonexistent"),
                      Account("nobody", 65534, 65534, "/nonexistent"), 1, tools)
    machine.zones = zones
    os.environ["SCIAGENT_TOKEN_TEST"] = TOKEN
    try:
        out = machine.run_command(
            "echo uid=$(id -u); grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; "
            "echo net=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '); "
            "echo procs=$(ls /proc | grep -c '^[0-9]'); env", timeout=20).output
    finally:
        del os.environ["SCIAGENT_TOKEN_TEST"]
        machine.close()
    assert "uid=65534\n" in out, out
    assert "CapEff:\t0000000000000000" in out and "NoNewPrivs:\t1" in out, out
    assert "net=lo\n" in out, out  # its own network namespace: loopback only
    procs = int(out.split("procs=")[1].split()[0])
    assert procs < 10, out  # its own PID namespace
    assert TOKEN not in out and "SCIAGENT" not in out


# -- the remote provider against a hostile server -------------------------------------------


class FakeControlServer(http.server.ThreadingHTTPServer):
    """A fake peer answering each path with canned (status, headers, body)."""

    daemon_threads = True

    def __init__(self, replies: dict[str, tuple[int, dict[str, str], bytes]]) -> None:
        self.replies = replies

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, headers, body = replies.get(self.path.split("?")[0],
                                                    (404, {}, b"{}"))
                self.send_response(status)
                headers = {"Content-Length": str(len(body)), **headers}
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass

            do_POST = do_PUT = do_DELETE = do_GET

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server_address[1]}"

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


def _health(**changes) -> dict:
    base = {"ok": True, "version": "2", "display": ":0", "width": 64, "height": 48,
            "paths": {"home": "/h", "work": "/h/work", "tmp": "/h/tmp"}, "tool": None,
            "uptime": 1.0}
    return {**base, **changes}


def _json_reply(value) -> tuple[int, dict[str, str], bytes]:
    return 200, {"Content-Type": "application/json"}, json.dumps(value).encode()


@pytest.mark.parametrize(("health", "match"), [
    (_health(width="64"), "width"),
    (_health(paths={"home": "/h", "work": "relative", "tmp": "/t"}), "absolute"),
    (_health(paths=["/h"]), "paths"),
    (_health(cli_isolated="yes"), "cli_isolated"),
    ([1, 2], "not a JSON object"),
])
def test_malformed_health_replies_are_refused(health, match):
    peer = FakeControlServer({"/health": _json_reply(health)})
    try:
        with pytest.raises(ControlError, match=match):
            ControlClient(peer.url, TOKEN).health()
    finally:
        peer.stop()


def test_oversized_and_misshapen_replies_are_refused():
    frame = b"\0" * (64 * 48 * 3)
    peer = FakeControlServer({
        "/screen": (200, {"X-Width": "65", "X-Height": "48"}, frame),
        "/pointer": _json_reply({"x": "1", "y": 2}),
        "/windows": _json_reply({"windows": [{"id": 1, "title": "t"}]}),
        "/run": _json_reply({"returncode": 0, "output": ["x"], "timed_out": False,
                             "truncated": False}),
        "/clipboard": (200, {"Content-Length": str(1 << 30)}, b"{}"),
        "/files": (200, {"Content-Encoding": "gzip"}, b"{}"),
    })
    client = ControlClient(peer.url, TOKEN, timeout=5)
    client.screen_size = (64, 48)
    try:
        with pytest.raises(ControlError, match="65x48 frame"):
            client.screen()
        with pytest.raises(ControlError, match="pointer.x"):
            client.pointer()
        with pytest.raises(ControlError, match="window"):
            client.windows()
        with pytest.raises(ControlError, match="run.output"):
            client.run("ls")
        t0 = time.monotonic()
        with pytest.raises(ControlError, match="exceeds"):
            client.get_clipboard()
        assert time.monotonic() - t0 < 2
        with pytest.raises(ControlError, match="gzip"):
            client.read_text("/h/tmp/answer")
    finally:
        client.close()
        peer.stop()


def _tar(*members: tuple[str, bytes | str]) -> bytes:
    """Members (name, data) files or (name, "->target") symlinks."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            if isinstance(data, str):
                info.type, info.linkname = tarfile.SYMTYPE, data.removeprefix("->")
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.mark.parametrize(("archive", "match"), [
    (_tar(("ok.txt", b"fine"), ("link", "->ok.txt")), "not a regular file"),
    (_tar(("ok.txt", b"fine"), ("up", "->/etc/passwd")), "not a regular file"),
    (_tar(("../escape.txt", b"out")), "outside"),
    (_tar(("big.bin", b"x" * (3 << 20))), "exceeds|over the limit"),
])
def test_tree_downloads_are_bounded_and_stay_in_the_mirror(tmp_path, archive, match):
    peer = FakeControlServer({"/tree": (200, {"Content-Type": "application/x-tar"}, archive)})
    client = ControlClient(peer.url, TOKEN, timeout=5)
    client.tree_limits = type(client.tree_limits)(max_file_bytes=1 << 20,
                                                  max_total_bytes=2 << 20)
    mirror = tmp_path / "mirror" / "work"
    try:
        with pytest.raises(ControlError, match=match):
            client.get_tree("/h/work", mirror)
    finally:
        client.close()
        peer.stop()
    assert not (tmp_path / "mirror" / "escape.txt").exists()
    assert not [p for p in mirror.rglob("*") if p.is_symlink()] if mirror.exists() else True


def test_cli_isolated_only_when_the_server_declares_it():
    """The remote provider reported cli_isolated=True for any server, so CLI actions ran on
    servers that execute them as their own user next to the token."""
    from sciagent_gym.providers.remote import RemoteProvider

    for declared, expected in ((None, False), (False, False), (True, True)):
        health = _health() if declared is None else _health(cli_isolated=declared)
        peer = FakeControlServer({"/health": _json_reply(health)})
        try:
            provider = RemoteProvider(peer.url, TOKEN, 64, 48, connect_timeout=5)
            try:
                assert provider.cli_isolated is expected, declared
            finally:
                provider.close()
        finally:
            peer.stop()


# -- QEMU: command line, token delivery, file modes ------------------------------------------


def _fake_image(tmp_path: Path):
    from sciagent_gym.providers.qemu.store import BuiltImage

    tmp_path.mkdir(parents=True, exist_ok=True)
    for name in ("base.qcow2", "vmlinuz", "initrd.img"):
        (tmp_path / name).write_bytes(b"x")
    meta = {"name": "fake", "complete": True, "screen": "800x600", "built_at": "now",
            "stages": {"disk": {"key": "k1", "seconds": 1.0}}}
    (tmp_path / "built.json").write_text(json.dumps(meta))
    return BuiltImage.load(tmp_path)


class FakeQMP:
    """Answers the monitor commands start() and save_state() send, as a paused VM would."""

    def __init__(self) -> None:
        self.commands: list[str] = []

    def execute(self, command, arguments=None, timeout=None):
        self.commands.append(command)
        args = dict(arguments or {})
        if command == "query-kvm":
            return {"enabled": False}
        if command == "query-status":
            return {"status": "paused"}
        if command == "drive-backup":
            Path(args["target"]).write_bytes(b"qcow2")
        if command == "query-migrate":
            return {"status": "completed"}
        if command == "query-block-jobs":
            return []
        return {}

    @property
    def events(self):
        return []

    def close(self):
        pass


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_qemu_command_line_has_a_restricted_network_and_no_token(tmp_path, monkeypatch):
    """The token was on QEMU's command line (kernel -append: visible in ps and in the guest's
    world-readable /proc/cmdline) and the user network reached the internet and the host."""
    from sciagent_gym.providers.qemu import vm as qemu_vm
    from sciagent_gym.providers.qemu.vm import QemuVM

    image = _fake_image(tmp_path / "img")
    seen = {}

    def fake_launch(self, accel, timeout):
        d = self._res.directory
        argv = self.command(accel)
        seen.update(argv=argv, dir_mode=_mode(d), token_mode=_mode(d / "token"),
                    token=(d / "token").read_text())
        self._res.qmp = FakeQMP()

    monkeypatch.setattr(qemu_vm, "_check_run", lambda argv, what: None)
    monkeypatch.setattr(QemuVM, "_launch", fake_launch)
    vm = QemuVM(image, accel="tcg", workdir=tmp_path / "vms").start()
    try:
        argv = seen["argv"]
        assert vm.token and all(vm.token not in arg for arg in argv)
        netdev = argv[argv.index("-netdev") + 1]
        assert "restrict=on" in netdev.split(",")
        assert [a for a in netdev.split(",") if a.startswith("hostfwd")] == [
            f"hostfwd=tcp:127.0.0.1:{vm.host_port}-:8000"]
        assert argv[argv.index("-fw_cfg") + 1] == (f"name=opt/sciagent/token,"
                                                   f"file={vm.directory / 'token'}")
        assert "token" not in argv[argv.index("-append") + 1]
        assert seen["token"] == vm.token and seen["token_mode"] == 0o600
        assert seen["dir_mode"] == 0o700
        assert not (vm.directory / "token").exists()  # removed once QEMU has read it
        other = QemuVM(image, accel="tcg")
        assert other.token != vm.token  # every VM draws its own
    finally:
        vm.close()


def test_saved_states_hold_no_token_and_are_private(tmp_path, monkeypatch):
    from sciagent_gym.providers.qemu import provider as qemu
    from sciagent_gym.providers.qemu import vm as qemu_vm
    from sciagent_gym.providers.qemu.vm import QemuVM

    image = _fake_image(tmp_path / "img")
    monkeypatch.setattr(qemu_vm, "_check_run", lambda argv, what: None)
    monkeypatch.setattr(QemuVM, "_launch", lambda self, accel, timeout: setattr(
        self._res, "qmp", FakeQMP()))
    old_umask = os.umask(0o022)
    try:
        with QemuVM(image, accel="tcg", workdir=tmp_path / "vms") as vm:
            states = tmp_path / "states"
            path = vm.save_state(states / "ready.state", resume=False)
            token = vm.token
        with qemu._locked(states / "ready.state.lock"):
            pass
    finally:
        os.umask(old_umask)
    meta_path = states / "ready.state.json"
    assert token not in meta_path.read_text()
    assert "token" not in json.loads(meta_path.read_text())["kernel_args"]
    assert _mode(states) == 0o700
    for p in (path, meta_path, states / "ready.state.disk.qcow2", states / "ready.state.lock"):
        assert _mode(p) == 0o600, p
    assert QemuVM(image, incoming=path).token != token  # its own, not the saver's
