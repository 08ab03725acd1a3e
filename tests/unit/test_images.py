"""Guest images and the QEMU VM wrapper without building or booting anything.

Recipe validation, the Debian mirror read from apt sources, stage keys and skip decisions, the
configure stage on a tiny fake root filesystem, kernel arguments, the QEMU command line, saved
state metadata, and the QMP client against a fake QMP server.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import threading
from pathlib import Path

import pytest

from sciagent_gym.cli.image import add_image_parser
from sciagent_gym.errors import ImageBuildError, QemuError
from sciagent_gym.providers.qemu import accel, stages, store
from sciagent_gym.providers.qemu import vm as qemu_vm
from sciagent_gym.providers.qemu.build import stage_keys, stages_to_run
from sciagent_gym.providers.qemu.mirror import (
    AptSource,
    debian_mirror,
    parse_deb822_sources,
    parse_one_line_sources,
    pick_mirror,
)
from sciagent_gym.providers.qemu.qmp import QMPClient
from sciagent_gym.providers.qemu.recipe import load_recipe, parse_recipe
from sciagent_gym.providers.qemu.rootfs import missing_boot_drivers
from sciagent_gym.providers.qemu.store import BuiltImage
from sciagent_gym.providers.qemu.vm import QemuVM, format_kernel_args

BASE = {"packages": ["linux-image-cloud-amd64", "python3"], "enable": {}, "mask": []}


# -- recipes ----------------------------------------------------------------------------------


def test_imagej_recipe_loads_with_the_base_packages():
    r = load_recipe("imagej")
    assert r.name == "imagej" and r.tool == "imagej" and r.suite == "bookworm"
    assert r.screen == "1280x800"
    for pkg in ("linux-image-cloud-amd64", "systemd-sysv", "xvfb", "openbox", "python3-xlib",
                "imagej", "default-jre"):
        assert pkg in r.all_packages
    assert len(r.all_packages) == len(set(r.all_packages))
    assert "sciagent-server.service" in r.base["enable"]["multi-user.target"]
    assert "apt-daily.timer" in r.base["mask"]


@pytest.mark.parametrize("change, message", [
    ({"name": "Bad Name"}, "'name'"),
    ({"suite": "Bookworm 12"}, "'suite'"),
    ({"packages": ["ok", "Not_A_Package"]}, "not Debian package names"),
    ({"packages": "imagej"}, "list of Debian package names"),
    ({"screen": "big"}, "'screen'"),
    ({"disk_size": "4 GB"}, "'disk_size'"),
    ({"recipe_version": "1"}, "'recipe_version'"),
])
def test_recipe_validation_names_the_bad_field(change, message):
    data = {"name": "t", "suite": "bookworm", "packages": ["imagej"]} | change
    with pytest.raises(ImageBuildError, match=message):
        parse_recipe(data, BASE)


def test_recipe_name_must_match_its_folder(tmp_path):
    with pytest.raises(ImageBuildError, match="differs from its folder"):
        parse_recipe({"name": "a", "suite": "bookworm"}, BASE, folder=tmp_path / "b")


def test_unknown_recipe_lists_the_known_ones(tmp_path):
    for name, meta in (("one", {"name": "one", "image": {"suite": "bookworm"}}),
                       ("two", {"name": "two"})):  # a tool without a guest image
        (tmp_path / name).mkdir()
        (tmp_path / name / "tool.json").write_text(json.dumps(meta))
    for name in ("two", "three"):
        with pytest.raises(ImageBuildError, match=r"known: one\)"):
            load_recipe(name, root=tmp_path)


def test_recipe_comes_from_the_tool_folder_with_its_debian_packages(tmp_path):
    """A tool's guest image is its tool.json's 'image' section; the packages are the tool's."""
    meta = {"name": "newtool", "requires": [
        {"program": "newtool", "package": "newtool-bin"},
        {"program": "Other", "package": "Other (not in Debian)"}],
        "debian": ["newtool-data"], "image": {"suite": "bookworm", "disk_size": "3G"}}
    (tmp_path / "newtool").mkdir()
    (tmp_path / "newtool" / "tool.json").write_text(json.dumps(meta))
    recipe = load_recipe("newtool", root=tmp_path)
    assert recipe.packages == ("newtool-bin", "newtool-data")
    assert recipe.disk_size == "3G" and recipe.tool == "newtool"
    assert "xvfb" in recipe.all_packages  # the shared guest base


# -- Debian mirror ----------------------------------------------------------------------------

DEB822 = """\
Types: deb
# a comment inside the paragraph
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://security.example/debian-security
Suites: bookworm-security
Components: main

Types: deb-src
URIs: http://src.example/debian
Suites: bookworm
Components: main

Types: deb
URIs: http://off.example/debian
Suites: bookworm
Components: main
Enabled: no
"""

ONE_LINE = """\
# deb http://commented.example/debian bookworm main
deb [arch=amd64 signed-by=/k.gpg] https://third.example/apt stable main
deb http://list.example/debian bookworm main non-free-firmware  # trailing comment
"""


def test_deb822_paragraphs_skip_sources_and_disabled_entries():
    found = parse_deb822_sources(DEB822)
    assert [s.uri for s in found] == ["http://mirror.example/debian",
                                     "http://security.example/debian-security"]
    assert found[0].suites == ("bookworm", "bookworm-updates")
    assert found[0].components == ("main", "contrib")


def test_one_line_sources_drop_options_and_comments():
    found = parse_one_line_sources(ONE_LINE)
    assert found == [AptSource("https://third.example/apt", ("stable",), ("main",)),
                     AptSource("http://list.example/debian", ("bookworm",),
                               ("main", "non-free-firmware"))]


def test_pick_mirror_wants_the_suite_itself_with_main():
    sources = [AptSource("http://security.example/x", ("bookworm-security",), ("main",)),
               AptSource("cdrom:[Debian]/", ("bookworm",), ("main",)),
               AptSource("http://contrib.example/x", ("bookworm",), ("contrib",)),
               AptSource("http://main.example/x", ("bookworm",), ("main",))]
    assert pick_mirror(sources, "bookworm") == "http://main.example/x"
    assert pick_mirror(sources[:3], "bookworm") == "http://contrib.example/x"
    assert pick_mirror(sources, "trixie") is None


def test_debian_mirror_reads_both_formats_and_ignores_other_files(tmp_path, monkeypatch):
    monkeypatch.delenv("SCIAGENT_DEBIAN_MIRROR", raising=False)
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "old.list.disabled").write_text(
        "deb http://disabled.example/debian bookworm main\n")
    (tmp_path / "sources.list.d" / "debian.sources").write_text(DEB822)
    assert debian_mirror("bookworm", tmp_path) == "http://mirror.example/debian"
    (tmp_path / "sources.list").write_text(ONE_LINE)
    assert debian_mirror("bookworm", tmp_path) == "http://list.example/debian"
    monkeypatch.setenv("SCIAGENT_DEBIAN_MIRROR", "http://override.example/debian")
    assert debian_mirror("bookworm", tmp_path) == "http://override.example/debian"


def test_no_mirror_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("SCIAGENT_DEBIAN_MIRROR", raising=False)
    with pytest.raises(ImageBuildError, match="SCIAGENT_DEBIAN_MIRROR"):
        debian_mirror("bookworm", tmp_path)


# -- stage keys and skipping ------------------------------------------------------------------


def _trees(tmp_path: Path) -> tuple[dict[str, Path], Path, Path]:
    pkg = tmp_path / "pkg"
    (pkg / "__pycache__").mkdir(parents=True)
    (pkg / "mod.py").write_text("x = 1\n")
    home = tmp_path / "home"
    home.mkdir()
    (home / "prefs.txt").write_text("a\n")
    guest = tmp_path / "guest"
    guest.mkdir()
    (guest / "unit.service").write_text("[Unit]\n")
    return {"pkg": pkg}, home, guest


def test_code_changes_redo_only_configure_and_disk(tmp_path):
    recipe = parse_recipe({"name": "t", "suite": "bookworm", "packages": ["imagej"]}, BASE)
    trees, home, guest = _trees(tmp_path)
    k0 = stage_keys(recipe, trees, home, guest)
    (trees["pkg"] / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"junk")
    assert stage_keys(recipe, trees, home, guest) == k0  # caches do not count
    (trees["pkg"] / "mod.py").write_text("x = 2\n")
    k1 = stage_keys(recipe, trees, home, guest)
    assert k1["debootstrap"] == k0["debootstrap"]
    assert k1["configure"] != k0["configure"] and k1["disk"] != k0["disk"]
    (home / "prefs.txt").write_text("b\n")
    assert stage_keys(recipe, trees, home, guest)["configure"] != k1["configure"]
    bigger = parse_recipe({"name": "t", "suite": "bookworm", "packages": ["imagej", "jq"]}, BASE)
    k2 = stage_keys(bigger, trees, home, guest)
    assert all(k2[s] != k1[s] for s in stages.STAGES)
    resized = parse_recipe({"name": "t", "suite": "bookworm", "packages": ["imagej"],
                            "disk_size": "6G"}, BASE)
    k3 = stage_keys(resized, trees, home, guest)
    assert k3["configure"] == stage_keys(recipe, trees, home, guest)["configure"]
    assert k3["disk"] != k1["disk"]


def test_stages_to_run_decisions():
    keys = {"debootstrap": "a", "configure": "b", "disk": "c"}
    done = {s: {"key": k} for s, k in keys.items()}
    assert stages_to_run(keys, done) == []
    assert stages_to_run(keys, done, force=True) == list(stages.STAGES)
    assert stages_to_run(keys | {"configure": "B"}, done) == ["configure", "disk"]
    assert stages_to_run(keys | {"debootstrap": "A"}, done) == list(stages.STAGES)
    assert stages_to_run(keys, {}) == list(stages.STAGES)
    assert stages_to_run(keys, done, outputs_exist={"disk": False}) == ["disk"]
    assert stages_to_run(keys, done, outputs_exist={"debootstrap": False}) == list(stages.STAGES)


def test_missing_tools_and_root_are_clear_errors(monkeypatch):
    monkeypatch.setattr(stages, "_find_program",
                        lambda prog: None if prog == "debootstrap" else f"/usr/bin/{prog}")
    with pytest.raises(ImageBuildError, match="apt-get install -y debootstrap"):
        stages.require_tools(["debootstrap"])
    monkeypatch.setattr(stages, "_find_program", lambda prog: f"/usr/bin/{prog}")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(ImageBuildError, match="needs root"):
        stages.require_tools(["disk"])


def test_boot_driver_check():
    config = "CONFIG_VIRTIO_PCI=m\nCONFIG_VIRTIO_BLK=m\nCONFIG_EXT4_FS=y\n"
    listing = b"usr/lib/modules/6.1/kernel/drivers/virtio/virtio_pci.ko\0" \
              b"usr/lib/modules/6.1/kernel/drivers/block/virtio_blk.ko\0"
    assert missing_boot_drivers(config, listing) == []
    assert missing_boot_drivers(config, b"") == ["virtio_pci.ko", "virtio_blk.ko"]
    assert missing_boot_drivers(config, None) == []
    assert missing_boot_drivers("CONFIG_EXT4_FS=y\n", None) == ["CONFIG_VIRTIO_PCI",
                                                                 "CONFIG_VIRTIO_BLK"]


@pytest.mark.skipif(os.geteuid() != 0, reason="the configure stage chowns files to uid 1000")
def test_configure_stage_is_idempotent_and_removes_stale_files(tmp_path, monkeypatch):
    monkeypatch.setattr(stages, "_run", lambda *a, **k: None)  # no chroot python here
    rootfs = tmp_path / "img" / "rootfs"
    (rootfs / "etc").mkdir(parents=True)
    (rootfs / "etc" / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
    (rootfs / "etc" / "group").write_text("root:x:0:\n")
    trees, home, guest = _trees(tmp_path)
    (guest / "old.conf").write_text("stale\n")
    base = {"packages": [], "enable": {"multi-user.target": ["unit.service"]},
            "mask": ["apt-daily.timer"]}
    recipe = parse_recipe({"name": "t", "suite": "bookworm"}, base)
    bar = stages.Progress("t", enabled=False)
    for _ in range(2):
        stages._stage_configure(recipe, rootfs.parent, tmp_path / "log", bar, trees=trees,
                                home=home, guest_files=guest)
        (guest / "old.conf").unlink(missing_ok=True)
    passwd = (rootfs / "etc" / "passwd").read_text()
    assert passwd.count("user:x:1000:1000:") == 1 and passwd.startswith("root:")
    assert (rootfs / "etc" / "group").read_text().count("user:x:1000:") == 1
    assert not (rootfs / "old.conf").exists()  # written by the first run only
    assert (rootfs / "unit.service").read_text() == "[Unit]\n"
    assert (rootfs / "home/user/prefs.txt").stat().st_uid == 1000
    assert (rootfs / "home/user/work").is_dir()
    assert (rootfs / "usr/lib/python3/dist-packages/pkg/mod.py").is_file()
    assert not (rootfs / "usr/lib/python3/dist-packages/pkg/__pycache__").exists()
    wants = rootfs / "etc/systemd/system/multi-user.target.wants/unit.service"
    assert os.readlink(wants) == "/lib/systemd/system/unit.service"
    assert os.readlink(rootfs / "etc/systemd/system/apt-daily.timer") == "/dev/null"


def _fake_image(tmp_path: Path, key: str = "k1") -> BuiltImage:
    tmp_path.mkdir(parents=True, exist_ok=True)
    for name in ("base.qcow2", "vmlinuz", "initrd.img"):
        (tmp_path / name).write_bytes(b"x")
    meta = {"name": "fake", "complete": True, "screen": "800x600", "built_at": "now",
            "stages": {"disk": {"key": key, "seconds": 1.0}}}
    (tmp_path / "built.json").write_text(json.dumps(meta))
    return BuiltImage.load(tmp_path)


def test_list_images_and_cli(tmp_path, capsys):
    _fake_image(tmp_path / "fake")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "built.json").write_text(json.dumps({"name": "half"}))
    assert [i.name for i in store.list_images(tmp_path)] == ["fake"]
    parser = argparse.ArgumentParser()
    add_image_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["image", "list", "--json", "--cache", str(tmp_path)])
    assert args.func(args) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["name"] == "fake" and rows[0]["disk_bytes"] == 1
    args = parser.parse_args(["image", "list", "--cache", str(tmp_path)])
    args.func(args)
    assert "fake" in capsys.readouterr().out
    args = parser.parse_args(["image", "build", "imagej", "--force", "--quiet"])
    assert args.force and args.quiet and args.name == "imagej"
    with pytest.raises(ImageBuildError, match="image build half"):
        store.get_image("half", tmp_path)


# -- kernel arguments, command line, saved states ---------------------------------------------


def test_kernel_args_formatting():
    line = format_kernel_args({"sciagent.token": "abc-123_X", "sciagent.screen": "1024x768",
                               "gone": None, "debug": ""})
    assert line == ("root=/dev/vda rw console=ttyS0 quiet sciagent.token=abc-123_X "
                    "sciagent.screen=1024x768 debug")
    for bad in ({"k": "two words"}, {"k": 'q"uote'}, {"": "x"}, {"a=b": "c"}):
        with pytest.raises(ValueError):
            format_kernel_args(bad)


def test_qemu_command_line(tmp_path):
    image = _fake_image(tmp_path)
    vm = QemuVM(image, memory_mb=1024, cpus=1, kernel_args={"sciagent.token": "t0k"})
    # a token given on the kernel command line is not used: each VM draws its own, which
    # reaches the guest through a 0600 file (fw_cfg), never through a command line
    assert vm.token != "t0k" and vm.kernel_args["sciagent.screen"] == "800x600"
    vm._res.directory, vm._port = tmp_path, 12345
    argv = vm.command("tcg")
    joined = " ".join(argv)
    assert vm.token not in joined and "restrict=on" in joined
    assert any(a.startswith("name=opt/sciagent/token,file=") for a in argv)
    assert argv[argv.index("-accel") + 1] == "tcg" and argv[argv.index("-cpu") + 1] == "max"
    assert "hostfwd=tcp:127.0.0.1:12345-:8000" in joined
    assert argv[argv.index("-m") + 1] == "1024"
    append = argv[argv.index("-append") + 1]
    assert "sciagent.screen=800x600" in append and "sciagent.token" not in append
    # relative to QEMU's cwd, the VM folder: a deep folder would overflow the socket address
    assert "unix:qmp.sock,server=on,wait=off" in argv
    assert "-incoming" not in argv
    assert " ".join(vm.command("kvm")).count("-accel kvm -cpu host") == 1
    vm.close()
    vm.close()  # idempotent
    assert not tmp_path.exists()  # close removes the private folder


def test_incoming_takes_the_saved_command_line(tmp_path):
    image = _fake_image(tmp_path / "img")
    state = tmp_path / "s" / "state.bin"
    state.parent.mkdir()
    state.write_bytes(b"stream")
    meta = {"image_key": "k1", "memory_mb": 2048, "cpus": 2, "accel": "tcg",
            "kernel_args": {"sciagent.token": "saved", "sciagent.screen": "800x600"},
            "disk": "state.bin.disk.qcow2"}
    (tmp_path / "s" / "state.bin.json").write_text(json.dumps(meta))
    vm = QemuVM(image, incoming=state)
    assert vm.token != "saved" and vm._requested_accel == "tcg"
    assert vm._backing == state.parent / "state.bin.disk.qcow2"
    vm._res.directory, vm._port = tmp_path, 1
    assert vm.command("tcg")[-2:] == ["-incoming", f"exec:cat {state.resolve()}"]
    with pytest.raises(QemuError, match="memory_mb=2048"):
        QemuVM(image, incoming=state, memory_mb=1024)
    with pytest.raises(QemuError, match="sciagent.token"):
        QemuVM(image, incoming=state, kernel_args={"sciagent.token": "other"})
    other = _fake_image(tmp_path / "img2", key="k2")
    with pytest.raises(QemuError, match="another build"):
        QemuVM(other, incoming=state)
    with pytest.raises(QemuError, match="no saved VM state"):
        QemuVM(image, incoming=tmp_path / "missing.bin")


def test_accel_override_probe_and_cache(tmp_path, monkeypatch):
    image = _fake_image(tmp_path / "img")
    monkeypatch.setenv("SCIAGENT_QEMU_ACCEL", "kvm")
    assert accel.detect_accel(image, tmp_path) == "kvm"
    monkeypatch.setenv("SCIAGENT_QEMU_ACCEL", "fast")
    with pytest.raises(QemuError, match="SCIAGENT_QEMU_ACCEL"):
        accel.detect_accel(image, tmp_path)
    monkeypatch.delenv("SCIAGENT_QEMU_ACCEL")
    monkeypatch.setattr(os, "access", lambda *a: False)
    assert accel.detect_accel(image, tmp_path) == "tcg"
    monkeypatch.setattr(os, "access", lambda *a: True)
    monkeypatch.setattr(accel, "_qemu_version", lambda: "QEMU 7.2")
    calls = []
    monkeypatch.setattr(accel, "probe_kvm", lambda *a: calls.append(a) or False)
    assert accel.detect_accel(image, tmp_path) == "tcg"
    assert accel.detect_accel(image, tmp_path) == "tcg"
    assert len(calls) == 1  # probed once, then read from the cache file
    assert (tmp_path / "accel-probe.json").is_file()


# -- QMP client against a fake server ---------------------------------------------------------


class FakeQMPServer:
    """A fake QEMU monitor: greeting, capabilities, an event before every reply, errors."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        fd = os.open(path.parent, os.O_PATH)  # like QEMU in its cwd: any depth binds
        try:
            self.sock.bind(f"/proc/self/fd/{fd}/{path.name}")
        finally:
            os.close(fd)
        self.sock.listen(1)
        self.received: list[dict] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn, conn.makefile("rwb") as f:
            f.write(b'{"QMP": {"version": {"qemu": {"major": 7}}, "capabilities": []}}\r\n')
            f.flush()
            for line in f:
                msg = json.loads(line)
                self.received.append(msg)
                f.write(b'{"event": "RTC_CHANGE", "data": {"offset": 0}}\r\n')
                reply = self._answer(msg)
                f.write(json.dumps(reply | {"id": msg.get("id")}).encode() + b"\r\n")
                f.flush()
                if msg["execute"] == "quit":
                    return

    @staticmethod
    def _answer(msg: dict) -> dict:
        cmd, args = msg["execute"], msg.get("arguments", {})
        if cmd in ("qmp_capabilities", "quit"):
            return {"return": {}}
        if cmd == "query-status":
            return {"return": {"status": "running", "running": True}}
        if cmd == "human-monitor-command":
            line = args["command-line"]
            if line.startswith("loadvm missing"):
                return {"return": "Error: Snapshot 'missing' does not exist\r\n"}
            return {"return": ""}
        return {"error": {"class": "CommandNotFound", "desc": f"The command {cmd} has not "
                                                               "been found"}}

    def close(self) -> None:
        self.sock.close()


def test_qmp_client_skips_events_and_raises_errors(tmp_path):
    server = FakeQMPServer(tmp_path / "qmp.sock")
    client = QMPClient(tmp_path / "qmp.sock", timeout=5)
    try:
        greeting = client.connect()
        assert greeting["QMP"]["version"]["qemu"]["major"] == 7
        assert client.execute("query-status") == {"status": "running", "running": True}
        assert any(e["event"] == "RTC_CHANGE" for e in client.events)
        with pytest.raises(QemuError, match="CommandNotFound: The command nope"):
            client.execute("nope")
        assert server.received[0]["execute"] == "qmp_capabilities"
        assert server.received[1]["id"] != server.received[2]["id"]
    finally:
        client.close()
        server.close()


def test_qmp_client_reaches_a_socket_deeper_than_a_socket_address_holds(tmp_path):
    deep = tmp_path.joinpath(*["a-rather-long-folder-name"] * 5)
    deep.mkdir(parents=True)
    path = deep / "qmp.sock"
    assert len(str(path)) > 108
    with pytest.raises(OSError):  # what the client did before: the kernel refuses the path
        socket.socket(socket.AF_UNIX).connect(str(path))
    server = FakeQMPServer(path)
    client = QMPClient(path, timeout=5)
    try:
        assert client.connect()["QMP"]["version"]["qemu"]["major"] == 7
        assert client.execute("query-status")["running"] is True
    finally:
        client.close()
        server.close()


def test_hmp_errors_raise_and_close_quits(tmp_path):
    image = _fake_image(tmp_path / "img")
    server = FakeQMPServer(tmp_path / "qmp.sock")
    vm = QemuVM(image)
    client = QMPClient(tmp_path / "qmp.sock", timeout=5)
    client.connect()
    vm._res.qmp = client
    assert vm.status() == "running"
    assert vm.savevm("snap1") >= 0
    with pytest.raises(QemuError, match="does not exist"):
        vm.loadvm("missing")
    with pytest.raises(ValueError):
        vm.savevm("bad name; quit")
    vm.close()
    server.thread.join(5)
    assert server.received[-1]["execute"] == "quit"
    server.close()


def test_sweep_removes_only_folders_of_dead_owners(tmp_path):
    import subprocess

    dead = subprocess.Popen(["true"])
    dead.wait()
    for name, pid in (("sciagent-qemu-dead", dead.pid), ("sciagent-qemu-live", os.getpid())):
        (tmp_path / name).mkdir()
        (tmp_path / name / "owner.pid").write_text(str(pid))
    (tmp_path / "sciagent-qemu-starting").mkdir()  # no pid file yet
    (tmp_path / "other").mkdir()
    assert qemu_vm.sweep_stale_dirs(tmp_path) == [tmp_path / "sciagent-qemu-dead"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "other", "sciagent-qemu-live", "sciagent-qemu-starting"]
