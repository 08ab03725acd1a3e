"""Which accelerator QEMU runs a guest with: KVM when it really works here, else TCG.

On some machines ``/dev/kvm`` exists but a guest hangs or aborts at boot under it, so KVM is
used only when a disk-less probe boot of the image's kernel reaches its init; the answer is
cached in ``accel-probe.json`` beside the images (per kernel, QEMU version and host kernel).
``SCIAGENT_QEMU_ACCEL=kvm|tcg`` overrides.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from sciagent_gym import processes
from sciagent_gym.errors import QemuError
from sciagent_gym.providers.qemu.store import BuiltImage

QEMU = "qemu-system-x86_64"


def accel_args(accel: str) -> list[str]:
    if accel == "kvm":
        return ["-accel", "kvm", "-cpu", "host"]
    if accel == "tcg":
        return ["-accel", "tcg", "-cpu", "max"]
    raise ValueError(f"accel must be 'kvm' or 'tcg', got {accel!r}")


def _qemu_version(qemu: str = QEMU) -> str:
    try:
        out = subprocess.run([qemu, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise QemuError(f"cannot run {qemu}: install it with 'apt-get install -y "
                        "qemu-system-x86'") from exc
    return out.stdout.splitlines()[0] if out.stdout else "unknown"


def detect_accel(image: BuiltImage, cache_dir: Path | None = None, timeout: float = 15.0) -> str:
    """'kvm' only if /dev/kvm is usable AND the image's kernel really boots under it.

    On some machines KVM exists but hangs or aborts at boot, so it is probed once per machine
    (cached per kernel, QEMU version and host kernel). ``SCIAGENT_QEMU_ACCEL`` overrides.
    """
    forced = os.environ.get("SCIAGENT_QEMU_ACCEL", "").strip().lower()
    if forced in ("kvm", "tcg"):
        return forced
    if forced:
        raise QemuError(f"SCIAGENT_QEMU_ACCEL must be 'kvm' or 'tcg', got {forced!r}")
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "tcg"
    st = image.kernel.stat()
    key = hashlib.sha256(json.dumps([image.kernel.name, st.st_size, int(st.st_mtime),
                                     _qemu_version(), os.uname().release]).encode()).hexdigest()
    cache = (cache_dir or image.directory.parent) / "accel-probe.json"
    try:
        known = json.loads(cache.read_text())
    except (OSError, json.JSONDecodeError):
        known = {}
    if key in known:
        return known[key]
    result = "kvm" if probe_kvm(image.kernel, image.initrd, timeout) else "tcg"
    known[key] = result
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(known, indent=1))
    return result


def probe_kvm(kernel: Path, initrd: Path, timeout: float = 15.0) -> bool:
    """Boot ``kernel`` under KVM without a disk; True if it reaches its init on the console."""
    with tempfile.TemporaryDirectory(prefix="sciagent-kvm-probe-") as tmp:
        log = Path(tmp) / "serial.log"
        proc = processes.spawn([QEMU, "-nodefaults", "-no-user-config", "-display", "none",
                                *accel_args("kvm"), "-m", "256", "-smp", "1",
                                "-kernel", str(kernel), "-initrd", str(initrd),
                                "-append", "console=ttyS0 panic=-1", "-no-reboot",
                                "-serial", f"file:{log}"])
        try:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                text = log.read_text(errors="replace") if log.exists() else ""
                if "Run /init" in text or "Freeing unused kernel" in text:
                    return True
                if proc.poll() is not None:
                    return False
                time.sleep(0.1)
            return False
        finally:
            processes.terminate(proc, timeout=1.0)
