"""One QEMU virtual machine booting a built guest image, driven over QMP.

Each :class:`QemuVM` gets a private temp folder (0700: a qcow2 overlay over the image, so the
image is never written; the QMP socket; the serial log), a free loopback port forwarded to the
guest's control server on :8000, and a QEMU process started through :func:`processes.spawn`, so
it dies with this interpreter. Snapshots: ``savevm``/``loadvm`` keep VM states inside the
overlay; ``save_state`` writes a migration stream plus a copy of the overlay that other VMs start
from with ``incoming=`` (internal snapshots are kept inside the overlay file itself, so a VM
on a new overlay over the same image cannot see them).

The guest is untrusted (the agent runs commands in it). Its user network is ``restrict=on``:
no route to the internet or to the host (10.0.2.2), only the control port forwarded in. The
control token is never on a command line (``ps`` shows every argv, and the guest's
``/proc/cmdline`` is world-readable): each VM draws its own and hands it over as a ``fw_cfg``
file that only the guest's root can read; the file on the host is 0600 and removed once QEMU
has read it. A VM restored from a saved state starts with the saver's token in its RAM; the
guest's server re-reads fw_cfg when a request's token differs, so the host's first request
switches it to this VM's own token. Saved states hold no token.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import secrets
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciagent_gym import processes
from sciagent_gym.errors import QemuError
from sciagent_gym.providers.qemu.accel import QEMU, accel_args, detect_accel
from sciagent_gym.providers.qemu.qmp import QMPClient
from sciagent_gym.providers.qemu.store import BuiltImage

GUEST_PORT = 8000
_DIR_PREFIX = "sciagent-qemu-"
#: The fw_cfg entry the guest's control server reads its token from (as root).
TOKEN_FW_CFG = "opt/sciagent/token"
BASE_CMDLINE = ("root=/dev/vda", "rw", "console=ttyS0", "quiet")
_ARG_TOKEN = re.compile(r"^[A-Za-z0-9_.:,/@+=-]*$")
_HMP_ERROR = re.compile(r"^(Error|Could not|Unknown command)|\b(Error|error): ", re.M)


# -- helpers ----------------------------------------------------------------------------------


def format_kernel_args(args: Mapping[str, str | None]) -> str:
    """The kernel command line: base arguments then ``key=value`` (``""``: bare flag, None:
    left out). Values may not hold spaces or quotes: the guest reads them word by word."""
    words = list(BASE_CMDLINE)
    for key, value in args.items():
        if value is None:
            continue
        if not key or not _ARG_TOKEN.match(key) or "=" in key:
            raise ValueError(f"bad kernel argument name {key!r}")
        if not _ARG_TOKEN.match(value):
            raise ValueError(f"kernel argument {key}={value!r}: no spaces or quotes allowed")
        words.append(f"{key}={value}" if value != "" else key)
    return " ".join(words)


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- the VM -----------------------------------------------------------------------------------


@dataclass
class _Resources:
    """What a VM holds, apart from the VM object, so a finalizer can release it."""

    directory: Path | None = None
    proc: subprocess.Popen | None = None
    qmp: QMPClient | None = None
    extra: list[Path] = field(default_factory=list)


def _release(res: _Resources) -> None:
    """Quit QEMU politely, then end its process group and remove the private folder."""
    if res.qmp is not None:
        try:
            res.qmp.execute("quit", timeout=2.0)
        except (QemuError, OSError, ValueError):
            pass
        res.qmp.close()
        res.qmp = None
    if res.proc is not None:
        try:
            res.proc.wait(3.0)
        except subprocess.TimeoutExpired:
            pass
        processes.terminate(res.proc, timeout=2.0)
        res.proc = None
    if res.directory is not None:
        shutil.rmtree(res.directory, ignore_errors=True)
        res.directory = None


class QemuVM:
    """One guest VM. ``with QemuVM(image) as vm: vm.wait_http(); ...`` or start()/close()."""

    def __init__(self, image: BuiltImage, *, memory_mb: int = 2048, cpus: int = 2,
                 accel: str = "auto", kernel_args: dict[str, str] | None = None,
                 incoming: Path | None = None, workdir: Path | None = None) -> None:
        self.image = image
        self.memory_mb, self.cpus = memory_mb, cpus
        self.incoming = Path(incoming) if incoming else None
        self.workdir = Path(workdir) if workdir else None
        self._requested_accel = accel
        self._accel: str | None = None
        self._port: int | None = None
        self._backing = image.disk
        self._token = secrets.token_urlsafe(24)  # this VM's own, whatever state it restores
        args: dict[str, str | None] = {"sciagent.screen": image.screen}
        if self.incoming is not None:
            args = self._from_saved_state(args, kernel_args)
        elif kernel_args:  # a token never goes on a command line (see token)
            args.update({k: v for k, v in kernel_args.items() if k != "sciagent.token"})
        self.kernel_args = args
        format_kernel_args(args)  # fail early on a bad argument
        self._res = _Resources()
        self._finalize = weakref.finalize(self, _release, self._res)

    def _from_saved_state(self, args: dict[str, str | None],
                          kernel_args: dict[str, str] | None) -> dict[str, str | None]:
        """A restored guest keeps the command line, RAM size and disk it was saved with."""
        assert self.incoming is not None
        if not self.incoming.is_file():
            raise QemuError(f"no saved VM state at {self.incoming}")
        meta_path = _state_meta_path(self.incoming)
        if not meta_path.is_file():  # a bare migration stream: the base disk, given arguments
            return {**args, **(kernel_args or {})}
        meta = json.loads(meta_path.read_text())
        if meta.get("image_key") != self.image.key:
            raise QemuError(f"{self.incoming} was saved from another build of image "
                            f"{self.image.name!r}: save the state again")
        for name, mine in (("memory_mb", self.memory_mb), ("cpus", self.cpus)):
            if meta[name] != mine:
                raise QemuError(f"{self.incoming} was saved with {name}={meta[name]}, "
                                f"not {mine}: pass the same value")
        saved = {k: v for k, v in meta["kernel_args"].items() if k != "sciagent.token"}
        clash = {k: v for k, v in (kernel_args or {}).items() if saved.get(k) != v}
        if clash:
            raise QemuError(f"a restored VM keeps the kernel command line it was saved with; "
                            f"these differ: {sorted(clash)}")
        if self._requested_accel == "auto":
            self._requested_accel = meta.get("accel", "auto")
        if meta.get("disk"):
            self._backing = self.incoming.parent / meta["disk"]
        return dict(saved)

    # -- properties ---------------------------------------------------------------------------

    @property
    def token(self) -> str:
        """This VM's control token (only ever in memory here and in the guest's fw_cfg)."""
        return self._token

    @property
    def host_port(self) -> int:
        if self._port is None:
            raise QemuError("the VM is not started")
        return self._port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.host_port}"

    @property
    def accel(self) -> str:
        """The accelerator in use ('kvm' or 'tcg'), as QEMU reports it once started."""
        if self._accel is None:
            raise QemuError("the VM is not started")
        return self._accel

    @property
    def directory(self) -> Path | None:
        """The private folder (overlay, QMP socket, logs); None once closed."""
        return self._res.directory

    @property
    def pid(self) -> int | None:
        return self._res.proc.pid if self._res.proc else None

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self, timeout: float = 180.0) -> QemuVM:
        """Create the overlay, start QEMU, connect QMP; for ``incoming``, wait and resume."""
        if self._res.proc is not None:
            return self
        if not self._finalize.alive:
            raise QemuError("this VM was closed; create a new QemuVM")
        accel = self._requested_accel
        if accel == "auto":
            accel = detect_accel(self.image)
        if self.workdir is not None:
            self.workdir.mkdir(parents=True, exist_ok=True)
        self._res.directory = Path(tempfile.mkdtemp(prefix=_DIR_PREFIX, dir=self.workdir))
        d = self._res.directory  # mkdtemp: 0700
        (d / "owner.pid").write_text(str(os.getpid()))
        if "," in str(d):
            self.close()
            raise QemuError(f"QEMU's option syntax cannot take the ',' in {d}: use another "
                            "workdir")
        sweep_stale_dirs(d.parent)
        try:
            write_private(d / "token", self._token.encode())
            _check_run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2",
                        "-b", str(self._backing.resolve()), str(d / "overlay.qcow2")],
                       "creating the overlay disk")
            for attempt in range(3):
                self._port = free_port()
                try:
                    self._launch(accel, timeout)
                    break
                except QemuError as exc:
                    if "host forwarding" not in str(exc) or attempt == 2:
                        raise
            kvm = self.qmp("query-kvm")
            self._accel = "kvm" if kvm.get("enabled") else "tcg"
            (d / "token").unlink()  # QEMU read it at start (its fw_cfg keeps it in memory)
            if self.incoming is not None:
                self._finish_incoming(timeout)
        except BaseException:
            self.close()
            raise
        return self

    def _launch(self, accel: str, timeout: float) -> None:
        d = self._res.directory
        assert d is not None
        for stale in ("qmp.sock", "serial.log", "qemu.log"):
            (d / stale).unlink(missing_ok=True)
        argv = self.command(accel)
        with open(d / "qemu.log", "wb") as errlog:
            # cwd=d: the QMP socket is named relative to it (see command()).
            self._res.proc = processes.spawn(argv, cwd=str(d), stdout=errlog.fileno(),
                                             stderr=errlog.fileno())
        qmp = QMPClient(d / "qmp.sock")
        deadline = time.monotonic() + timeout
        while True:
            code = self._res.proc.poll()
            if code is not None:
                err = (d / "qemu.log").read_text(errors="replace").strip()
                processes.terminate(self._res.proc)
                self._res.proc = None
                raise QemuError(f"QEMU exited at start (code {code}): {err}")
            try:
                qmp.connect()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise QemuError("QEMU did not open its QMP socket") from None
                time.sleep(0.02)
        self._res.qmp = qmp

    def command(self, accel: str) -> list[str]:
        """The QEMU command line of this VM (all paths inside its private folder)."""
        d = self._res.directory
        assert d is not None and self._port is not None
        argv = [QEMU, "-name", f"sciagent-{self.image.name}", "-nodefaults", "-no-user-config",
                "-machine", "pc", *accel_args(accel), "-m", str(self.memory_mb),
                "-smp", str(self.cpus),
                "-kernel", str(self.image.kernel), "-initrd", str(self.image.initrd),
                "-append", format_kernel_args(self.kernel_args),
                "-drive", f"file={d / 'overlay.qcow2'},if=none,id=disk0,format=qcow2",
                "-device", "virtio-blk-pci,drive=disk0",
                # restrict=on: the guest reaches neither the host nor beyond; only the
                # control port comes in, on the host's loopback.
                "-netdev", f"user,id=n0,restrict=on,"
                           f"hostfwd=tcp:127.0.0.1:{self._port}-:{GUEST_PORT}",
                "-device", "virtio-net-pci,netdev=n0",
                "-fw_cfg", f"name={TOKEN_FW_CFG},file={d / 'token'}",
                "-device", "virtio-rng-pci",
                "-display", "none",
                # Relative to QEMU's cwd (d): a unix socket address holds 107 bytes and
                # QEMU silently truncates a longer one, so a deep workdir lost the socket.
                "-qmp", "unix:qmp.sock,server=on,wait=off",
                "-serial", f"file:{d / 'serial.log'}"]
        if self.incoming is not None:
            argv += ["-incoming", f"exec:cat {shlex.quote(str(self.incoming.resolve()))}"]
        return argv

    def _finish_incoming(self, timeout: float) -> None:
        """Wait until the migration stream is loaded, then run (a target stays paused)."""
        deadline = time.monotonic() + timeout
        while True:
            status = self.qmp("query-status")["status"]
            if status != "inmigrate":
                break
            self._check_alive("loading the saved state")
            if time.monotonic() > deadline:
                raise QemuError(f"loading {self.incoming} did not finish in {timeout:.0f} s")
            time.sleep(0.02)
        if status != "running":
            self.qmp("cont")

    def close(self) -> None:
        """Quit QEMU, end its process group, remove the overlay and folder. Idempotent."""
        self._finalize()

    def __enter__(self) -> QemuVM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def alive(self) -> bool:
        return self._res.proc is not None and self._res.proc.poll() is None

    def _check_alive(self, doing: str) -> None:
        if not self.alive():
            raise QemuError(f"QEMU died while {doing}: {self._errors()}")

    def _errors(self) -> str:
        d = self._res.directory
        log = (d / "qemu.log").read_text(errors="replace").strip() if d else ""
        return log or f"(no QEMU messages; serial tail: {self.serial_tail(600)!r})"

    # -- monitor ------------------------------------------------------------------------------

    def qmp(self, command: str, **arguments: Any) -> Any:
        """Run a QMP command (``qmp("query-status")``); raise QemuError on its error."""
        if self._res.qmp is None:
            raise QemuError("the VM is not started")
        timeout = arguments.pop("_timeout", None)
        return self._res.qmp.execute(command, arguments, timeout=timeout)

    def hmp(self, line: str, timeout: float = 120.0) -> str:
        """Run a human-monitor command; raise QemuError when its output reports an error."""
        out = self.qmp("human-monitor-command", _timeout=timeout, **{"command-line": line})
        out = out or ""
        if _HMP_ERROR.search(out):
            raise QemuError(f"{line}: {out.strip()}")
        return out

    def status(self) -> str:
        """QEMU's run state: 'running', 'paused', 'postmigrate', ..."""
        return self.qmp("query-status")["status"]

    def pause(self) -> None:
        self.qmp("stop")

    def resume(self) -> None:
        self.qmp("cont")

    def savevm(self, name: str) -> float:
        """Save the whole VM (RAM, devices, disk) inside the overlay; returns seconds taken."""
        t0 = time.monotonic()
        self.hmp(f"savevm {_snapshot_name(name)}")
        return time.monotonic() - t0

    def loadvm(self, name: str) -> float:
        """Return the VM to snapshot ``name`` (a running VM keeps running); returns seconds."""
        t0 = time.monotonic()
        self.hmp(f"loadvm {_snapshot_name(name)}")
        return time.monotonic() - t0

    def delvm(self, name: str) -> None:
        self.hmp(f"delvm {_snapshot_name(name)}")

    def save_state(self, path: Path, resume: bool = True, timeout: float = 300.0) -> Path:
        """Write the paused VM's state to ``path`` for ``QemuVM(..., incoming=path)``.

        Also writes ``<path>.disk.qcow2`` (the overlay as it is at that instant, the disk the
        saved RAM belongs to) and ``<path>.json`` (command line, RAM size, accelerator, image
        build) beside it. The VM runs again afterwards when it was running and ``resume``.
        """
        path = Path(path).resolve()
        private_dir(path.parent)
        was_running = self.status() == "running"
        if was_running:
            self.pause()
        disk = path.with_name(path.name + ".disk.qcow2")
        self._copy_disk_top(disk, timeout)
        disk.chmod(0o600)
        # QEMU throttles migration to 128 MiB/s by default; a file can take it all at once.
        self.qmp("migrate-set-parameters", **{"max-bandwidth": 64 << 30})
        write_private(path, b"")  # the guest's RAM: 0600 before a byte goes in
        self.qmp("migrate", uri=f"exec:cat > {shlex.quote(str(path))}")
        deadline = time.monotonic() + timeout
        while True:
            info = self.qmp("query-migrate")
            status = info.get("status")
            if status == "completed":
                break
            if status in ("failed", "cancelled"):
                raise QemuError(f"saving the VM state failed: {info.get('error-desc', status)}")
            if time.monotonic() > deadline:
                self.qmp("migrate_cancel")
                raise QemuError(f"saving the VM state took over {timeout:.0f} s")
            time.sleep(0.02)
        meta = {"image": self.image.name, "image_key": self.image.key,
                "memory_mb": self.memory_mb, "cpus": self.cpus, "accel": self.accel,
                "kernel_args": self.kernel_args, "disk": disk.name,
                "saved_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        write_private(_state_meta_path(path), json.dumps(meta, indent=2).encode())
        if was_running and resume:
            self.resume()
        return path

    def _copy_disk_top(self, target: Path, timeout: float) -> None:
        """Copy the overlay's current clusters (not its internal snapshots) into ``target``,
        a qcow2 over the same backing file; the VM is paused, so the copy matches its RAM."""
        target.unlink(missing_ok=True)
        job = f"sciagent-save-{secrets.token_hex(4)}"
        self.qmp("drive-backup", **{"job-id": job, "device": "disk0", "target": str(target),
                                    "sync": "top", "format": "qcow2",
                                    "mode": "absolute-paths"})
        deadline = time.monotonic() + timeout
        while any(j.get("device") == job for j in self.qmp("query-block-jobs")):
            if time.monotonic() > deadline:
                self.qmp("block-job-cancel", device=job, force=True)
                raise QemuError(f"copying the disk for the saved state took over {timeout:.0f} s")
            time.sleep(0.02)
        assert self._res.qmp is not None
        for event in self._res.qmp.events:
            data = event.get("data", {})
            if data.get("device") == job and event.get("event") in (
                    "BLOCK_JOB_COMPLETED", "BLOCK_JOB_CANCELLED") and (
                    "error" in data or event["event"] == "BLOCK_JOB_CANCELLED"):
                raise QemuError(f"copying the disk failed: {data.get('error', 'cancelled')}")

    # -- guest output -------------------------------------------------------------------------

    def serial_tail(self, n_chars: int = 4000) -> str:
        """The last characters the guest wrote to its serial console (kernel, unit failures)."""
        d = self._res.directory
        if d is None or not (d / "serial.log").exists():
            return ""
        with open(d / "serial.log", "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - n_chars * 4))
            return f.read().decode(errors="replace")[-n_chars:]

    def wait_http(self, path: str = "/health", timeout: float = 120.0,
                  headers: Mapping[str, str] | None = None) -> int:
        """Poll ``GET path`` until the guest's server answers anything; return the status.

        Under user networking QEMU accepts the TCP connection itself, so only an HTTP answer
        proves the server is up.
        """
        deadline = time.monotonic() + timeout
        while True:
            self._check_alive("waiting for the guest's server")
            conn = http.client.HTTPConnection("127.0.0.1", self.host_port, timeout=3.0)
            try:
                conn.request("GET", path, headers=dict(headers or {}))
                return conn.getresponse().status
            except (OSError, http.client.HTTPException):
                pass
            finally:
                conn.close()
            if time.monotonic() > deadline:
                raise TimeoutError(f"the guest's server did not answer on {self.url}{path} in "
                                   f"{timeout:.0f} s; serial console tail:\n"
                                   f"{self.serial_tail(1500)}")
            time.sleep(0.1)


def sweep_stale_dirs(parent: Path, dry_run: bool = False) -> list[Path]:
    """Remove VM folders whose owning interpreter is gone (killed with SIGKILL: its QEMU died
    with it through PDEATHSIG, but nobody removed the overlay). Returns what was removed
    (``dry_run``: what would be)."""
    removed = []
    for d in parent.glob(f"{_DIR_PREFIX}*"):
        try:
            pid = int((d / "owner.pid").read_text())
            os.kill(pid, 0)
        except ProcessLookupError:
            if not dry_run:
                shutil.rmtree(d, ignore_errors=True)
            removed.append(d)
        except (OSError, ValueError):  # no pid file yet, or not ours to judge
            continue
    return removed


def private_dir(path: Path) -> Path:
    """``path`` as a directory only its owner can enter (made if missing)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


def write_private(path: Path, data: bytes) -> None:
    """Replace ``path`` by a file of mode 0600 holding ``data`` (a link there is replaced,
    not followed)."""
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _state_meta_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def _snapshot_name(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ValueError(f"snapshot names are letters, digits, '_', '.', '-': got {name!r}")
    return name


def _check_run(argv: list[str], what: str) -> None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except FileNotFoundError as exc:
        raise QemuError(f"{what}: {argv[0]} not found; install it with 'apt-get install -y "
                        "qemu-utils qemu-system-x86'") from exc
    if out.returncode != 0:
        raise QemuError(f"{what} failed: {(out.stderr or out.stdout).strip()}")
