"""``provider="qemu"``: the tool's guest image under QEMU, reset by restoring a VM snapshot.

The first env on a machine boots the built image once, starts the program through the guest's
control server, waits until it is ready and saves that whole machine state (RAM and disk) next
to the image. Every env then starts its own VM from that state on its own copy-on-write overlay
(so several run side by side from one base image), takes an internal snapshot, and each
``reset()`` is a ``loadvm`` of it followed by staging the task's inputs and opening them in the
already running program. All talk to the guest goes through the control server
(:class:`~sciagent_gym.providers.remote.RemoteProvider`), so the env cannot tell the difference.
"""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from sciagent_gym.controller.settle import SettleConfig
from sciagent_gym.providers.qemu.store import BuiltImage, get_image
from sciagent_gym.providers.qemu.vm import QemuVM, private_dir, write_private
from sciagent_gym.providers.remote import RemoteProvider

if TYPE_CHECKING:
    from sciagent_gym.tools import ToolAdapter

SNAPSHOT = "episode-start"
#: Seconds a fresh guest may take until its control server answers (TCG on 2 loaded cores
#: measured 20-40 s).
BOOT_TIMEOUT = 300.0
#: Programs start several times slower under TCG than on the host.
TCG_SLOWDOWN = 5.0


@contextmanager
def _locked(path: Path):
    """An exclusive lock file, so two envs do not build the same start state at once."""
    private_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "r+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def start_state(image: BuiltImage, tool: ToolAdapter, width: int, height: int, *,
                memory_mb: int = 2048, cpus: int = 2, accel: str = "auto",
                settle: SettleConfig | None = None) -> Path:
    """The saved machine state with ``tool`` started and ready (built once, then reused).

    Keyed by the image build, the screen size, RAM and CPUs, since a restored VM keeps all of
    them; a rebuilt image gets a new state. The states folder is 0700 and its files 0600: a
    state holds the guest's whole RAM.
    """
    states = image.directory / "states"
    path = states / f"{tool.name}-{width}x{height}-m{memory_mb}-c{cpus}-{image.key[:12]}.state"
    done = path.with_name(path.name + ".ok")
    with _locked(path.with_name(path.name + ".lock")):
        if done.is_file():
            return path
        t0 = time.monotonic()
        vm = QemuVM(image, memory_mb=memory_mb, cpus=cpus, accel=accel,
                    kernel_args={"sciagent.screen": f"{width}x{height}"})
        try:
            vm.start(timeout=120.0)
            vm.wait_http(timeout=BOOT_TIMEOUT, headers={"Authorization": f"Bearer {vm.token}"})
            booted = time.monotonic()
            guest = RemoteProvider(vm.url, vm.token, width, height, settle)
            guest.ready_scale = TCG_SLOWDOWN if vm.accel == "tcg" else 1.0
            try:
                guest.start_program(tool)
            finally:
                guest.close()
            ready = time.monotonic()
            vm.save_state(path, resume=False)
            write_private(done, f"boot {booted - t0:.1f} s, program {ready - booted:.1f} s, "
                                f"save {time.monotonic() - ready:.1f} s, accel {vm.accel}\n"
                                .encode())
        finally:
            vm.close()
    return path


class QemuProvider(RemoteProvider):
    """One VM per env, started from the tool's saved start state; reset = ``loadvm``."""

    def __init__(self, tool: ToolAdapter, width: int = 1280, height: int = 800,
                 settle: SettleConfig | None = None, image: str | None = None,
                 memory_mb: int = 2048, cpus: int = 2, accel: str = "auto",
                 cache_dir: str | Path | None = None) -> None:
        self._vm: QemuVM | None = None
        built = get_image(image or tool.name, cache_dir)
        t0 = time.monotonic()
        state = start_state(built, tool, width, height, memory_mb=memory_mb, cpus=cpus,
                            accel=accel, settle=settle)
        t1 = time.monotonic()
        self._vm = vm = QemuVM(built, memory_mb=memory_mb, cpus=cpus, accel=accel,
                               incoming=state)
        try:
            vm.start(timeout=120.0)
            super().__init__(vm.url, vm.token, width, height, settle,
                             reset_hook=self._restore_snapshot)
            self.ready_scale = TCG_SLOWDOWN if vm.accel == "tcg" else 1.0
            t2 = time.monotonic()
            vm.savevm(SNAPSHOT)
        except BaseException:
            self.close()
            raise
        self.start_timings = {"start_state": t1 - t0, "resume": t2 - t1,
                              "savevm": time.monotonic() - t2}

    @property
    def vm(self) -> QemuVM:
        return self._vm

    @property
    def accel(self) -> str:
        return self._vm.accel

    def _restore_snapshot(self, _provider: RemoteProvider) -> None:
        self._vm.loadvm(SNAPSHOT)

    def app_log_tail(self) -> str:
        tail = super().app_log_tail()
        if self._vm is not None and not self._vm.alive():
            tail += "\n(the VM itself exited; its serial console ends with:)\n" + \
                self._vm.serial_tail(2000)
        return tail

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self._vm is not None:
                self._vm.close()
                self._vm = None
