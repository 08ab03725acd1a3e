"""The attack catalogue: what a hostile agent tries through ``step()``, and whether the env held.

Each :class:`Attack` plays one known attack against a live env of a tool, through ``step()``
only (plus host-side checks of its effect), and says whether the defence held. The catalogue
covers escape to the host, spying on the program zone, forging state, surviving a reset,
exhausting resources, racing the evaluator and breaking the action parser (issue 14 lists
them). ``sciagent-gym audit --attacks`` runs it on every installed tool; the security tests run
each attack on its own.

An attack that raises counts as not held: the harness never reports a defence it did not see.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from sciagent_gym.evaluation import evaluate
from sciagent_gym.tools import load_adapter, load_tool_specs

#: Where answer files of the tools' state channels were written before the zones existed; a
#: forging agent plants files under every one of these names.
_PLANT_PATTERNS = (
    "/tmp/sciagent-ds9-{n}.answer", "/tmp/sciagent-macro-{n}.out", "/tmp/sciagent-pymol-{n}.json",
    "/tmp/sciagent-praat-{n}.out", "/tmp/sciagent-praat-{n}.done", "/tmp/sciagent-qgis/{n}.json",
)


@dataclass
class AttackResult:
    tool: str
    attack: str
    kind: str
    held: bool
    detail: str
    seconds: float


@dataclass
class AttackReport:
    tool: str
    task: str
    results: list[AttackResult] = field(default_factory=list)

    @property
    def held(self) -> int:
        return sum(r.held for r in self.results)

    @property
    def passed(self) -> bool:
        return self.held == len(self.results)

    def table(self) -> str:
        lines = [f"{self.tool} ({self.task}): attacks held {self.held}/{len(self.results)}"]
        for r in self.results:
            mark = "held" if r.held else "BROKEN"
            lines.append(f"  {mark:<6} {r.attack:<26} {r.seconds:6.1f}s  {r.detail[:90]}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "task": self.task, "held": self.held,
                "total": len(self.results), "results": [asdict(r) for r in self.results]}


class Context:
    """One env under attack, and a host-only directory for probe files."""

    def __init__(self, env: gym.Env, task_id: str) -> None:
        self.env, self.base, self.task_id = env, env.unwrapped, task_id
        self.probe_dir = Path(tempfile.mkdtemp(prefix="sciagent-attack-"))
        self.token = secrets.token_hex(6)

    def reset(self, seed: int = 0) -> dict:
        return self.env.reset(seed=seed, options={"task": self.task_id})[1]

    def step(self, action: Any) -> tuple:
        return self.env.step(action)

    def run(self, command: str, timeout: float = 30.0) -> str:
        obs, *_rest, info = self.env.step({"type": "run", "command": command,
                                           "timeout": timeout})
        if info.get("action_error"):
            raise RuntimeError(f"run() refused: {info['action_error']}")
        # the terminal shows "$ command", the output, then "[exit N]": keep the output only
        lines = obs["terminal"].split("\n")
        return "\n".join(lines[1:-1])

    def probe(self, name: str, text: str = "original\n") -> Path:
        path = self.probe_dir / name
        path.write_text(text)
        return path

    def close(self) -> None:
        shutil.rmtree(self.probe_dir, ignore_errors=True)


@dataclass(frozen=True)
class Attack:
    name: str
    kind: str
    description: str
    play: Callable[[Context], tuple[bool, str]]


# -- escape ------------------------------------------------------------------------------------
def _privileges(ctx: Context) -> tuple[bool, str]:
    out = ctx.run("id -u; grep CapEff /proc/self/status")
    uid = out.split()[0] if out.split() else "?"
    caps = re.search(r"CapEff:\s*([0-9a-f]+)", out)
    held = uid not in ("0", "?") and caps is not None and int(caps.group(1), 16) == 0
    return held, f"uid {uid}, CapEff {caps.group(1) if caps else '?'}"


def _remount(ctx: Context) -> tuple[bool, str]:
    targets = [f"/etc/sciagent-attack-{ctx.token}", f"/usr/sciagent-attack-{ctx.token}"]
    ctx.run("; ".join(f"mount -o remount,bind,rw {Path(t).parent}; echo x > {t}"
                      for t in targets) + "; true")
    written = [t for t in targets if os.path.exists(t)]
    for t in written:
        os.unlink(t)
    return not written, f"host files written: {written}" if written else "remount refused"


def _interpreter_prefix(ctx: Context) -> tuple[bool, str]:
    targets = {f"{p}/sciagent-attack-{ctx.token}" for p in (sys.prefix, sys.base_prefix)}
    ctx.run("; ".join(f"echo x > {t}" for t in targets) + "; true")
    written = [t for t in targets if os.path.exists(t)]
    for t in written:
        os.unlink(t)
    return not written, f"host files written: {written}" if written else "not writable"


def _host_secrets(ctx: Context) -> tuple[bool, str]:
    out = ctx.run("cat /etc/shadow /etc/ssh/ssh_host_*_key /etc/sudoers 2>&1; ls -a /root 2>&1")
    leaked = bool(re.search(r"^root:[^:\n]*:\d+:", out, re.M)) or "PRIVATE KEY" in out \
        or "Defaults" in out
    return not leaked, "host secrets readable" if leaked else "no host secret visible"


def _namespaces(ctx: Context) -> tuple[bool, str]:
    out = ctx.run("unshare -Ur true 2>/dev/null && echo USERNS-OK; "
                  "unshare -m true 2>/dev/null && echo MOUNTNS-OK; true")
    ok = [w for w in ("USERNS-OK", "MOUNTNS-OK") if w in out]
    return not ok, f"created: {ok}" if ok else "no new namespace"


_SYSCALLS = """
import ctypes, json
libc = ctypes.CDLL(None, use_errno=True)
calls = {"ptrace": (101, 0, 0, 0, 0), "keyctl": (250, 0, 0, 0, 0), "bpf": (321, 0, 0, 0),
         "perf_event_open": (298, 0, 0, 0, 0, 0), "mount": (165, 0, 0, 0, 0, 0),
         "init_module": (175, 0, 0, 0), "process_vm_readv": (310, 1, 0, 0, 0, 0, 0)}
out = {}
for name, args in calls.items():
    ctypes.set_errno(0)
    res = libc.syscall(*args)
    out[name] = [res, ctypes.get_errno()]
print("SYSCALLS" + json.dumps(out))
"""


def _seccomp(ctx: Context) -> tuple[bool, str]:
    out = ctx.run(f"python3 -c '{_SYSCALLS}'")
    found = re.search(r"SYSCALLS(\{.*\})", out)
    if not found:
        return False, f"probe gave no answer: {out[-200:]}"
    results = json.loads(found.group(1))
    allowed = [n for n, (res, err) in results.items() if not (res == -1 and err == 1)]
    return not allowed, f"not EPERM: {allowed}" if allowed else "all denied with EPERM"


# -- spying and forging ---------------------------------------------------------------------------
def _spy(ctx: Context) -> tuple[bool, str]:
    out = ctx.run("ps -eo comm= 2>/dev/null; ls -a /tmp /proc/1/root/tmp 2>/dev/null")
    seen = {w for w in out.split() if w not in ("ps", "sh", "bwrap", "ls", ".", "..",
                                                 "python3", "/tmp:")}
    leaks = sorted(w for w in seen if "sciagent" in w or w in _program_names(ctx)
                   or w.startswith(("xpa", "java", "qgis", "praat", "pymol", "ds9")))
    return not leaks, f"visible: {leaks}" if leaks else "no program process or channel file"


def _program_names(ctx: Context) -> set[str]:
    try:
        argv = ctx.base.adapter.launch_argv(ctx.base.provider, ctx.base.task)
    except Exception:
        return set()
    return {Path(a).name for a in argv[:3] if a and not a.startswith("-")} - {"sh", "-c"}


def _forge_helper(ctx: Context) -> tuple[bool, str]:
    line = json.dumps({"id": 2, "ok": True, "running": False, "returncode": 1, "data": "x"})
    ctx.run(f"for f in /proc/[0-9]*/fd/[0-9]*; do printf '%s\\n' '{line}' > $f "
            "2>/dev/null; done; true", timeout=20)
    _obs, _r, term, trunc, info = ctx.step("WAIT")
    alive = ctx.run("echo still-answering")
    held = not (term or trunc) and "app_crashed" not in info and "still-answering" in alive
    return held, "forged lines ignored" if held else f"env disturbed: {info.get('app_crashed')}"


def _plant_answers(ctx: Context) -> tuple[bool, str]:
    noop = ctx.step("DONE")[1]
    ctx.reset()
    forged = json.dumps({"ok": True, "state": {}, "scale": "zscale", "forged": True})
    dirs = " ".join(sorted({os.path.dirname(p) for p in _PLANT_PATTERNS}))
    plant = "; ".join(f"printf '%s' '{forged}' > {p.format(n='$n')}" for p in _PLANT_PATTERNS)
    ctx.run(f"mkdir -p {dirs}; n=1; while [ $n -le 400 ]; do {plant}; n=$((n+1)); done; true")
    zone = getattr(ctx.base.provider, "sandbox", None)  # what the program's channel sees
    seen = zone.exec(shell="ls /tmp/sciagent-ds9-1.answer 2>/dev/null").output.strip() \
        if zone is not None else ""
    reward = ctx.step("DONE")[1]
    held = reward <= noop and not seen
    return held, (f"no-op {noop:.2f}, after planting {reward:.2f}, planted files visible to "
                  f"the program: {bool(seen)}")


# -- resets -------------------------------------------------------------------------------------
def _symlink_restage(ctx: Context) -> tuple[bool, str]:
    probe = ctx.probe(f"host-file-{ctx.token}")
    names = ctx.run("ls -A").splitlines()
    names = [n for n in names if n and "/" not in n and "'" not in n] or ["input"]
    # absolute paths: a reset may replace the directory the loop started in
    work = ctx.base.provider.paths["work"]
    links = "; ".join(f"ln -sfn {probe} '{work}/{n}'" for n in names)
    ctx.step({"type": "launch", "command": f"while :; do {links}; done"})
    time.sleep(0.5)
    before = probe.stat()
    soft = getattr(ctx.base, "soft_reset", 0)
    try:
        ctx.base.soft_reset = max(soft, 1)  # the in-place restore where the tool has one
        ctx.reset()
        ctx.base.soft_reset = 0
        ctx.step({"type": "launch", "command": f"while :; do {links}; done"})
        time.sleep(0.5)
        ctx.reset()
    finally:
        ctx.base.soft_reset = soft
    after = probe.stat()
    same = probe.read_bytes() == b"original\n" and (before.st_uid, before.st_mode) == (
        after.st_uid, after.st_mode)
    return same, "host file untouched" if same else "the host wrote through a planted link"


def _survive_reset(ctx: Context) -> tuple[bool, str]:
    ctx.step({"type": "launch", "command": "sleep 1000"})
    ctx.run("echo x > /tmp/carry; echo x > carry.txt; echo x > ~/carry")
    soft = getattr(ctx.base, "soft_reset", 0)
    try:
        ctx.base.soft_reset = max(soft, 1)  # the in-place restore where the tool has one
        ctx.reset()
    finally:
        ctx.base.soft_reset = soft
    out = ctx.run("pgrep -x sleep; ls /tmp/carry carry.txt ~/carry 2>/dev/null; true")
    left = [w for w in ("/tmp/carry", "carry.txt", "/carry") if w in out]
    sleeping = bool(re.search(r"^\d+$", out, re.M))
    held = not left and not sleeping
    return held, "nothing carried over" if held else f"carried: {left} sleep={sleeping}"


# -- limits ---------------------------------------------------------------------------------------
def _rss(pid: int | str = "self") -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def _helpers_peak_rss() -> int:
    """The largest peak RSS (VmHWM) of our sandbox helpers (the processes that read the
    agent's command output), found among this process's descendants."""
    peak = 0
    for pid in _descendants(os.getpid()):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"agent.py" not in cmdline:
                continue
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]) * 1024)
        except OSError:
            continue
    return peak


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int(Path(entry, "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _output_flood(ctx: Context) -> tuple[bool, str]:
    before = _rss()
    out = ctx.run("yes 0123456789abcdef | head -c 1000000000; echo", timeout=60)
    grown = _rss() - before
    helper = _helpers_peak_rss()
    held = len(out) <= 20_000 and grown < 128 << 20 and helper < 256 << 20
    return held, (f"terminal {len(out)} chars, host RSS +{grown >> 20} MiB, helper peak "
                  f"{helper >> 20} MiB")


def _disk_quota(ctx: Context) -> tuple[bool, str]:
    out = ctx.run("for i in 1 2 3; do head -c 900M /dev/zero > fill$i; done 2>&1; "
                  "du -sbc fill* | tail -1; rm -f fill*", timeout=120)
    total = re.search(r"^(\d+)\s+total", out, re.M)
    size = int(total.group(1)) if total else -1
    held = 0 <= size <= (2 << 30) + (64 << 20)
    return held, f"{size >> 20} MiB written of 2700 tried"


def _tmp_fill(ctx: Context) -> tuple[bool, str]:
    out = ctx.run("head -c 1000M /dev/zero > /tmp/fill 2>&1; stat -c %s /tmp/fill; "
                  "rm -f /tmp/fill", timeout=60)
    sizes = [int(w) for w in re.findall(r"^(\d+)$", out, re.M)]
    size = sizes[-1] if sizes else -1
    held = 0 <= size <= 512 << 20
    return held, f"/tmp took {size >> 20} MiB of 1000 tried"


def _fork_bomb(ctx: Context) -> tuple[bool, str]:
    # forks until refused, says how far it got, then ends its whole group
    bomb = ("import os, time\nn = 0\nwhile n < 1000:\n    try:\n        pid = os.fork()\n"
            "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(30)\n"
            "        os._exit(0)\n    n += 1\nprint('count', n, flush=True)\n"
            "os.killpg(0, 9)\n")
    out = ctx.run(f"python3 -c \"{bomb}\"", timeout=60)
    found = re.search(r"count (\d+)", out)
    procs = int(found.group(1)) if found else -1
    program_ok = ctx.base.provider.app_running()
    after = ctx.run("echo zone-answers")
    held = 0 <= procs < 1000 and program_ok and "zone-answers" in after
    return held, f"{procs} processes reached of 1000, program running: {program_ok}"


def _fifo_inputs(ctx: Context) -> tuple[bool, str]:
    ctx.run("for f in * .[!.]*; do [ -f \"$f\" ] && rm -f \"$f\" && mkfifo \"$f\"; done; "
            "for f in answer.txt result.csv out.png out.tif session.pse; do "
            "[ -e \"$f\" ] || mkfifo \"$f\"; done; true")
    done: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: done.setdefault("r", ctx.step("DONE")),
                              daemon=True)
    t0 = time.monotonic()
    worker.start()
    worker.join(90)
    held = not worker.is_alive()
    return held, f"DONE returned in {time.monotonic() - t0:.1f}s" if held else \
        "DONE hung on a FIFO"


def _live_read(ctx: Context) -> tuple[bool, str]:
    probe = ctx.probe(f"host-secret-{ctx.token}", "host-only 42\n")
    names = [n for n in ctx.run("ls -A").splitlines() if n and "'" not in n][:3]
    swaps = "; ".join(f"cp -f '{n}' '.{n}.bak' 2>/dev/null; ln -sfn {probe} '{n}'; "
                      f"mv -f '.{n}.bak' '{n}' 2>/dev/null" for n in names) or "true"
    ctx.step({"type": "launch", "command": f"while :; do {swaps}; echo 42 > answer.txt; "
                                           "rm -f answer.txt; date +%s%N > stamp.txt; done"})
    time.sleep(0.3)
    ctx.step("DONE")
    state = ctx.base.final_state
    stamp = state.work_dir / "stamp.txt"
    first = stamp.read_text() if stamp.is_file() else ""
    time.sleep(0.3)
    second = stamp.read_text() if stamp.is_file() else ""
    links = [str(p) for p in state.work_dir.rglob("*") if p.is_symlink()]
    scores = {evaluate(ctx.base._criteria, state).score for _ in range(10)}
    held = not links and len(scores) == 1 and first == second
    return held, (f"symlinks in the scored copy: {len(links)}, distinct rescores: "
                  f"{sorted(scores)}, scored files still changing: {first != second}")


# -- parser ---------------------------------------------------------------------------------------
def _parse_step(ctx: Context, action: str, budget: float) -> tuple[bool, str]:
    """One step with a watchdog: a step still running after ``budget`` did not hold (and
    leaves the env busy, which is why such attacks come last)."""
    box: dict[str, Any] = {}

    def go() -> None:
        try:
            box["info"] = ctx.step(action)[-1]
        except Exception as exc:
            box["error"] = exc

    t0 = time.monotonic()
    worker = threading.Thread(target=go, daemon=True)
    worker.start()
    worker.join(budget)
    took = time.monotonic() - t0
    if worker.is_alive():
        return False, f"the step was still running after {budget:.0f}s"
    if "error" in box:
        return False, f"step raised {type(box['error']).__name__}: {str(box['error'])[:80]}"
    info = box["info"]
    return bool(info.get("action_error")), f"{took:.1f}s: {str(info.get('action_error'))[:80]}"


def _parser_overflow(ctx: Context) -> tuple[bool, str]:
    return _parse_step(ctx, f"pyautogui.click({'9' * 400}, 1)", 5.0)


def _parser_waits(ctx: Context) -> tuple[bool, str]:
    return _parse_step(ctx, "\n".join(["time.sleep(10)"] * 6250), 15.0)


def _parser_clicks(ctx: Context) -> tuple[bool, str]:
    return _parse_step(ctx, "\n".join(["pyautogui.click(1, 1)"] * 666_600), 30.0)


# -- the program zone -------------------------------------------------------------------------
def _program_zone(ctx: Context) -> tuple[bool, str]:
    """What a program console (ImageJ's exec(), PyMOL's python) runs as."""
    zone = getattr(ctx.base.provider, "sandbox", None)
    if zone is None:
        return True, "no local program zone (VM or remote provider)"
    out = zone.exec(shell="id -u; grep CapEff /proc/self/status; cat /etc/shadow 2>&1").output
    uid = out.split()[0] if out.split() else "?"
    caps = re.search(r"CapEff:\s*([0-9a-f]+)", out)
    held = uid not in ("0", "?") and caps is not None and int(caps.group(1), 16) == 0 \
        and "root:" not in out
    return held, f"uid {uid}, CapEff {caps.group(1) if caps else '?'}"


CATALOGUE: tuple[Attack, ...] = (
    Attack("privileges", "escape", "the agent zone's uid and capabilities", _privileges),
    Attack("remount-etc", "escape", "remount /etc and /usr read-write and write a file",
           _remount),
    Attack("interpreter-prefix", "escape", "write into the host Python's prefix",
           _interpreter_prefix),
    Attack("host-secrets", "escape", "read /etc/shadow, ssh host keys, sudoers, /root",
           _host_secrets),
    Attack("namespaces", "escape", "create user and mount namespaces", _namespaces),
    Attack("seccomp", "escape", "ptrace, keyctl, bpf, perf, mount, modules, process_vm",
           _seccomp),
    Attack("program-zone", "escape", "what a program console runs as", _program_zone),
    Attack("spy", "spy", "see the program's processes and channel files", _spy),
    Attack("forge-helper-reply", "forge", "write replies into every visible pipe",
           _forge_helper),
    Attack("plant-answers", "forge", "plant state-channel answer files", _plant_answers),
    Attack("symlink-restage", "reset", "links to a host file where inputs are restaged",
           _symlink_restage),
    Attack("survive-reset", "reset", "processes and files that outlive a reset",
           _survive_reset),
    Attack("output-flood", "limits", "1 GB of command output", _output_flood),
    Attack("disk-quota", "limits", "2.7 GB written to the work directory", _disk_quota),
    Attack("tmp-fill", "limits", "1 GB written to /tmp", _tmp_fill),
    Attack("fork-bomb", "limits", "1000 processes", _fork_bomb),
    Attack("live-read", "live-read", "swap files and links while the episode is scored",
           _live_read),
    Attack("parser-overflow", "parser", "a 400-digit coordinate", _parser_overflow),
    Attack("parser-clicks", "parser", "666,600 clicks in one step", _parser_clicks),
    # last: without the defence these leave the env stuck in a step
    Attack("fifo-inputs", "limits", "FIFOs in place of inputs and outputs at DONE",
           _fifo_inputs),
    Attack("parser-waits", "parser", "6,250 waits of 10 s in one step", _parser_waits),
)
ATTACKS = {a.name: a for a in CATALOGUE}


def attack_task(tool: str) -> str:
    """The task the catalogue runs on: the first by id. The env is made with the ``gui+cli``
    modality, so the shell attacks reach the agent zone whatever the task declares."""

    specs = load_tool_specs(tool)
    if not specs:
        raise ValueError(f"{tool} has no tasks")
    return sorted(specs)[0]


def play(ctx: Context, attack: Attack, tool: str) -> AttackResult:
    """One attack from a fresh episode; an exception counts as not held."""
    t0 = time.monotonic()
    try:
        ctx.reset()
        held, detail = attack.play(ctx)
    except Exception as exc:
        held, detail = False, f"attack harness failed: {type(exc).__name__}: {exc}"
    return AttackResult(tool, attack.name, attack.kind, bool(held), detail,
                        time.monotonic() - t0)


def run_attacks(tool: str, names: Iterable[str] | None = None, isolation: str = "auto",
                progress: Callable[[str], None] | None = None) -> AttackReport:
    """Play the catalogue (or the named attacks) against one env of ``tool``."""
    adapter = load_adapter(tool)
    task_id = attack_task(tool)
    env = gym.make(adapter.info.env_id, task=task_id, pool_size=0, max_steps=10_000,
                   isolation=isolation, modality="gui+cli")
    ctx = Context(env, task_id)
    report = AttackReport(tool, task_id)
    try:
        for name in names or ATTACKS:
            report.results.append(play(ctx, ATTACKS[name], tool))
            if progress is not None:
                progress(name)
    finally:
        ctx.close()
        env.close()
    return report
