"""Run inside the program zone (``python3 -I -S``, stdlib only): Fityk's session, replayed.

The Fityk GUI has no remote control, but it logs every command it runs (typed, or made by a
menu, a dialog or the mouse) to its logfile. This client replays that log in a headless Fityk
(``cfityk``, the same library and the same deterministic fitting code) and then dumps the
resulting session with Fityk's own C++ ``print`` and ``info`` commands into a file whose name
carries a fresh random token. Nothing of the dump is Lua: Lua in the log (the agent may type
``lua ...``) runs before the dump and cannot change what those C++ commands write.

argv: ``LOG SCRIPTS_JSON BASE TOKEN``. LOG ``glob:PATTERN`` names the one file that matches.
SCRIPTS_JSON is a list of ``[position, commands]`` (or ``{log path: list}``): commands run
through the adapter's script channel (oracles), each inserted after ``position`` log entries;
the last one's output is returned. Writes ``BASE.json`` (via a rename) with
``{"ok": true, "state": {...}, "output": "...", "log_entries": n}`` or ``{"ok": false,
"error": "..."}``. LOG ``exec:FILE`` replays one saved session script instead of a log, and
BASE ``-`` prints the answer to stdout after a marked line instead (the adapter's channel
client, whose stdout goes back through the sandbox helper, and the evaluator's isolated parse).

The log is sanitised first: comment lines and the indented lines of a script that a logged
command ran (Fityk logs both) are skipped, a line continuation is dropped (the GUI ran each line
alone) and ``quit`` is skipped. A logged command that touches the ``logfile`` option marks the
session as tampered with (what the GUI did after it is not in the log). After every line
``on_error`` is set back to ``nothing`` (``reset`` and sessions set it to ``stop``), so one
failed command does not end the replay early: it failed in the GUI as well.
"""

import glob
import json
import os
import re
import subprocess
import sys

MAX_LOG = 4 << 20
MAX_DATASETS = 8
TIMEOUT = 60


def log_entries(path):
    """The commands the GUI ran, in order (``exec:FILE``: one command, running that script)."""
    if path.startswith("exec:"):
        return ["exec '" + path[5:].replace("'", "") + "'"], False
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_LOG + 1)
    except FileNotFoundError:
        return [], False
    if len(raw) > MAX_LOG:
        raise ValueError(f"the session log is larger than {MAX_LOG} bytes")
    entries, tampered = [], False
    for line in raw.decode("utf-8", "replace").splitlines():
        if not line.strip() or line.startswith("#") or line.startswith("    "):
            continue
        line = line.rstrip("\\").rstrip()
        if re.search(r"logfile", line, re.IGNORECASE):
            tampered = True
            continue
        if re.match(r"\s*quit\s*(#.*)?$", line):
            continue
        entries.append(line)
    return entries, tampered


def dump_commands(out, token):
    """Fityk commands that write the session's datasets and models to ``out``."""
    q = "'" + out + "'"
    cmds = ["set verbosity=0, on_error=nothing, numeric_format='%.12g', autoplot=0",
            f"print '@@{token} BEGIN' > {q}",
            "info dataset_count >> " + q]
    for d in range(MAX_DATASETS):
        cmds += [
            f"@{d}: print '@@{token} DS {d}', M, count(a), min(x if a), max(x if a), min(x),"
            f" max(x), sum(y), sum(y if a) >> {q}",
            f"@{d}: print '@@{token} F {d}' >> {q}",
            f"@{d}: info F >> {q}",
            f"@{d}: print '@@{token} PEAKS {d}' >> {q}",
            f"@{d}: info peaks >> {q}",
        ]
    cmds.append(f"print '@@{token} END' >> {q}")
    return cmds


def _num(text):
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


def parse_dump(text, token):
    """The state from the dump file's marked sections."""
    lines = text.splitlines()
    mark = f"@@{token} "
    if not lines or lines[0] != mark + "BEGIN" or lines[-1] != mark + "END":
        raise ValueError("the dump is incomplete")
    count = int(lines[1])
    datasets, section, current = {}, None, None
    for line in lines[2:-1]:
        if line.startswith(mark):
            words = line[len(mark):].split()
            section, index = words[0], int(words[1])
            if index >= count:
                section = None
                continue
            current = datasets.setdefault(index, {"index": index, "F": [], "peaks": []})
            if section == "DS":
                keys = ("points", "active", "active_min", "active_max", "x_min", "x_max",
                        "sum_y", "sum_y_active")
                values = [_num(v) for v in words[2:]]
                current.update(dict(zip(keys, values[:len(keys)], strict=False)))
                for key in ("points", "active"):
                    current[key] = int(current[key] or 0)
            continue
        if section == "F" and line.strip():
            current["F"] = [name.strip().lstrip("%") for name in line.split("+")
                            if name.strip()]
        elif section == "PEAKS" and line.startswith("%"):
            cols = line.split("\t")
            name, ftype = cols[0].split()
            peak = {"name": name.lstrip("%"), "type": ftype}
            for key, value in zip(("center", "height", "area", "fwhm"), cols[1:5], strict=False):
                peak[key] = _num(value.strip())
            peak["params"] = [_num(v) for v in " ".join(cols[5:]).split()]
            current["peaks"].append(peak)
    ordered = [datasets[i] for i in sorted(datasets)]
    functions = {}
    for ds in ordered:
        for peak in ds["peaks"]:
            functions.setdefault(peak["name"], peak)
    return {"datasets": ordered, "dataset_count": count, "functions": functions}


def find_log(pattern):
    """The one file matching ``pattern`` (the GUI's log; its name is new at every start)."""
    found = glob.glob(pattern)
    if len(found) != 1:
        raise ValueError(f"{len(found)} session logs match {pattern}")
    return found[0]


def main():
    log, scripts_json, base, token = sys.argv[1:5]
    if log.startswith("glob:"):
        log = find_log(log[5:])
    scripts = json.loads(scripts_json)
    if isinstance(scripts, dict):  # {log path: scripts} of every program this adapter ran
        scripts = scripts.get(log, [])
    stdout_mode = base == "-"
    if stdout_mode:
        base = f"/tmp/sciagent-fityk-{token}"
    result = {"ok": False}
    try:
        entries, tampered = log_entries(log)
        lines = ["set on_error=nothing"]
        pending = sorted(((int(pos), i, cmd) for i, (pos, cmd) in enumerate(scripts)))
        last = len(scripts) - 1

        def add(cmds, index=None):
            if index == last:
                lines.append(f"print '@@{token} OUT-BEGIN'")
            for cmd in cmds:
                lines.extend([cmd.rstrip("\\"), "set on_error=nothing"])
            if index == last:
                lines.append(f"print '@@{token} OUT-END'")

        for n, entry in enumerate(entries):
            while pending and pending[0][0] <= n:
                _, index, cmd = pending.pop(0)
                add([c for c in cmd.splitlines() if c.strip()], index)
            add([entry])
        for _, index, cmd in pending:
            add([c for c in cmd.splitlines() if c.strip()], index)
        out = base + ".dump"
        lines += dump_commands(out, token)
        script = base + ".fit"
        with open(script, "w") as fh:
            fh.write("\n".join(lines) + "\n")
        proc = subprocess.run(["cfityk", "-n", "-q", "-I", script], capture_output=True,
                              timeout=TIMEOUT, stdin=subprocess.DEVNULL)
        stdout = proc.stdout.decode("utf-8", "replace")
        with open(out, encoding="utf-8", errors="replace") as fh:
            state = parse_dump(fh.read(MAX_LOG), token)
        state["tampered"] = tampered
        state["log_entries"] = len(entries)
        output = ""
        begin, end = f"@@{token} OUT-BEGIN", f"@@{token} OUT-END"
        if scripts and begin in stdout:
            output = stdout.rsplit(begin, 1)[1].split(end, 1)[0]
            output = "\n".join(line for line in output.splitlines()
                               if not re.match(r"\d+> ", line)
                               and line != "Option 'on_error' already has value: nothing"
                               ).strip()
        result = {"ok": True, "state": state, "output": output, "log_entries": len(entries),
                  "log": log}
        for path in (script, out):
            os.unlink(path)
    except Exception as exc:  # the adapter raises it as a channel error
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    if stdout_mode:  # the answer goes to stdout, after a marked line
        sys.stdout.write(f"\n@@{token} RESULT {json.dumps(result)}\n")
        return
    with open(base + ".part", "w") as fh:
        json.dump(result, fh)
    os.rename(base + ".part", base + ".json")


if __name__ == "__main__":
    main()
