"""The ImageJ guest for real: build (cached between runs), boot, snapshot, restore, clean up.

Needs root, debootstrap and QEMU. The first run builds the image (~2 min: debootstrap); later
runs reuse it from the cache (``sciagent-gym image build imagej`` does the same by hand). Under
TCG a cold boot takes 20-30 s; the whole module then runs in about a minute.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import urllib.request
from pathlib import Path

import pytest
from helpers import REQUIRE_APPS, our_processes

from sciagent_gym.providers.qemu.build import build_image
from sciagent_gym.providers.qemu.vm import QemuVM

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("one_vm_at_a_time")]


def _missing() -> list[str]:
    missing = [p for p in ("qemu-system-x86_64", "qemu-img") if shutil.which(p) is None]
    if not any(Path(d, "debootstrap").exists() for d in ("/usr/sbin", "/sbin")):
        missing.append("debootstrap")
    if os.geteuid() != 0:
        missing.append("root (to build the image)")
    return missing


@pytest.fixture(scope="module")
def image():
    missing = _missing()
    if missing and not REQUIRE_APPS:
        pytest.skip(f"cannot build or boot a guest here: {missing}")
    t0 = time.monotonic()
    built = build_image("imagej", progress=False)
    print(f"\nimage ready in {time.monotonic() - t0:.1f} s; stages "
          f"{ {k: v['seconds'] for k, v in built.meta['stages'].items()} }; "
          f"base.qcow2 {built.disk_bytes / 2**20:.0f} MiB")
    return built


def _health(vm: QemuVM, token: str | None) -> tuple[int, dict | None]:
    req = urllib.request.Request(f"{vm.url}/health")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, None


def _run(vm: QemuVM, command: str) -> str:
    """A shell command in the guest through the control server (a fresh connection each time:
    kept-alive connections do not survive a loadvm)."""
    from sciagent_gym.providers.remote.client import ControlClient

    return ControlClient(vm.url, vm.token).run(command, timeout=30).output


def _check_isolation(vm: QemuVM, health: dict) -> None:
    """The agent's commands run as 'agent' without network and cannot find the token; the
    guest's network reaches nothing on the host (restrict=on)."""
    import socket

    from sciagent_gym.providers.remote.client import ControlClient

    assert health["cli_isolated"] is True
    out = _run(vm, "id -un; cat /proc/cmdline; tail -n +3 /proc/net/dev | cut -d: -f1; "
                   "cat /sys/firmware/qemu_fw_cfg/by_name/opt/sciagent/token/raw; env; "
                   "ls /home/user/tmp")
    assert out.split()[0] == "agent" and vm.token not in out, out
    assert "Permission denied" in out and "eth0" not in out and "ens" not in out, out
    # A program (user 'user', the guest's own network) tries the host's loopback.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        client = ControlClient(vm.url, vm.token)
        probe = (f"import socket\ntry:\n socket.create_connection(('10.0.2.2', {port}), 5)"
                 "\n print('reached')\nexcept OSError as e:\n print('blocked', e)\n")
        log = f"{health['paths']['tmp']}/probe.log"
        client.launch("probe", ["python3", "-c", probe], log=log)
        deadline = time.monotonic() + 60
        while client.poll("probe")["running"] and time.monotonic() < deadline:
            time.sleep(0.2)
        result = client.read_text(log) or ""
    assert "blocked" in result and "reached" not in result, result


@pytest.mark.timeout(900)
def test_boot_snapshot_restore_and_clean_close(image, tmp_path):
    t0 = time.monotonic()
    # deeper than a unix socket address holds (107 bytes), as pytest's folders became
    # from its 100th session on: QEMU truncated the QMP path and start() timed out
    workdir = tmp_path.joinpath(*["vms-in-a-deep-work-folder"] * 4)
    assert len(str(workdir / "sciagent-qemu-12345678" / "qmp.sock")) > 108
    vm = QemuVM(image, workdir=workdir).start()
    private = vm.directory
    assert private is not None and (private / "overlay.qcow2").is_file()
    try:
        assert vm.accel in ("kvm", "tcg") and vm.alive()
        assert vm.wait_http("/health", timeout=180) == 401  # up, and refuses without a token
        boot = time.monotonic() - t0
        status, body = _health(vm, vm.token)
        assert status == 200 and body["ok"] and body["width"] == 1280, (status, body)
        _check_isolation(vm, body)

        _run(vm, "echo saved > /home/user/work/marker")
        save_s = vm.savevm("clean")
        _run(vm, "echo changed > /home/user/work/marker")
        load_s = vm.loadvm("clean")
        t1 = time.monotonic()
        assert vm.wait_http(timeout=30) == 401
        answer_s = time.monotonic() - t1
        assert vm.status() == "running"
        assert _run(vm, "cat /home/user/work/marker").strip() == "saved"

        state = tmp_path / "state" / "ready.bin"
        t2 = time.monotonic()
        vm.save_state(state)
        state_s = time.monotonic() - t2
        assert vm.status() == "running" and _run(vm, "echo still") == "still\n"
    finally:
        vm.close()
    assert not vm.alive() and vm.directory is None and not private.exists()
    assert our_processes(str(private)) == []

    t3 = time.monotonic()
    with QemuVM(image, incoming=state, workdir=tmp_path / "vms") as worker:
        assert worker.token != vm.token  # each VM its own token, never the saved one
        assert worker.wait_http(timeout=60) == 401
        assert _health(worker, worker.token)[0] == 200  # the guest re-keys from its fw_cfg
        assert _health(worker, vm.token)[0] == 401  # and the saver's token is dead
        incoming_s = time.monotonic() - t3
        assert _run(worker, "cat /home/user/work/marker").strip() == "saved"
        worker.savevm("w")
        worker.loadvm("w")
        assert worker.wait_http(timeout=30) == 401
        worker_dir = worker.directory
    assert not worker_dir.exists() and our_processes(str(worker_dir)) == []
    assert list((tmp_path / "vms").iterdir()) == []
    print(f"\naccel {vm.accel}: boot to HTTP {boot:.1f} s, savevm {save_s:.2f} s, loadvm "
          f"{load_s:.2f} s (+{answer_s:.2f} s to answer), save_state {state_s:.2f} s "
          f"({state.stat().st_size / 2**20:.0f} MiB + disk "
          f"{state.with_name('ready.bin.disk.qcow2').stat().st_size / 2**20:.1f} MiB), "
          f"incoming to HTTP {incoming_s:.2f} s")
