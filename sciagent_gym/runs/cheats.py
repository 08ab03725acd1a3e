"""Generic cheats: ways a policy could try to collect reward without doing a task.

A learned policy maximises the reward, not the instruction, so every task is audited against
what costs nothing: saying DONE at once, creating every output the evaluator names empty or as
a plausible placeholder (a blank image of the right size, "0", a header-only table, a silent
WAV, an empty GeoJSON), copying an input to an output's name, and answering with "0" or with a
wrong value of the right form. Placeholders must not succeed and may score at most
:data:`PLACEHOLDER_LIMIT`; every other cheat must score 0.

The cheats are played on the task's real start state (the final state of a no-op episode, with
the program's state dump), with their files written into a copy of its work directory: what a
GUI agent could save through the program's dialogs, and more. Task-specific cheats (a shell
one-liner, a hand-written region file) live in the spec's ``cheats`` and are played as real
episodes by the audit.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import wave
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sciagent_gym.evaluation import Criterion, EvaluationResult, FinalState, evaluate
from sciagent_gym.evaluation.rewards import EpisodeEnd, cheat_findings

#: The highest score a placeholder may earn (and it must not succeed).
PLACEHOLDER_LIMIT = 0.1

IMAGE_EXTS = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".gif")
_PATH_LIKE = re.compile(r"^(?![/$])[\w .()/-]*\.[A-Za-z][\w]{0,9}$")
_MAX_IMAGE_SIDE = 8192
_COLUMN_KEYS = ("column", "columns", "col", "header", "headers", "field", "fields", "key")


@dataclass(frozen=True)
class Cheat:
    """Files to place in the work directory and/or an answer to give, then DONE."""

    name: str
    kind: str  # "done", "empty", "placeholder", "copy" or "answer"
    files: Mapping[str, bytes] = field(default_factory=dict)
    answer: str | None = None

    @property
    def limit(self) -> float:
        return PLACEHOLDER_LIMIT if self.kind == "placeholder" else 0.0


# -- what the evaluator reads -------------------------------------------------------------------

def output_paths(criteria: Sequence[Criterion]) -> list[str]:
    """Work-relative file names the criteria read (getter parameters that look like paths).

    Protected inputs (read only by "unchanged" checks) are not outputs: overwriting them can
    only fail the episode, so a cheat that did would test nothing but that rule."""
    seen: dict[str, None] = {}
    for c in criteria:
        for value in _strings(c.getter_params):
            if _PATH_LIKE.match(value) and ".." not in Path(value).parts:
                seen.setdefault(value, None)
    protected = {v for c in criteria if c.check == "unchanged" for v in _strings(c.getter_params)}
    read_otherwise = {v for c in criteria if c.check != "unchanged"
                      for v in _strings(c.getter_params)}
    return [p for p in seen if p not in protected or p in read_otherwise]


def _strings(obj: Any) -> Iterable[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, Mapping):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _strings(v)


def _column_names(criteria: Sequence[Criterion]) -> list[str]:
    names: dict[str, None] = {}
    for c in criteria:
        for params in (c.getter_params, c.check_params):
            for key, value in params.items():
                if key in _COLUMN_KEYS:
                    for s in _strings(value):
                        if s and len(s) < 64 and "," not in s:
                            names.setdefault(s, None)
    return list(names)


def _stated_sizes(criteria: Sequence[Criterion]) -> list[tuple[int, int]]:
    """(width, height) pairs the criteria check for, from width/height equality checks."""
    width = height = None
    for c in criteria:
        key = str(c.getter_params.get("key", c.getter_params.get("stat", ""))).lower()
        expected = c.check_params.get("expected")
        if isinstance(expected, (int, float)) and not isinstance(expected, bool) \
                and 0 < expected <= _MAX_IMAGE_SIDE:
            if "width" in key:
                width = int(expected)
            elif "height" in key:
                height = int(expected)
    return [(width, height)] if width and height else []


def _answer_forms(criteria: Sequence[Criterion]) -> list[str]:
    """Wrong answers of the right form: the expected value moved well outside its tolerance."""
    out: list[str] = []
    for c in criteria:
        if not c.getter.startswith("answer"):
            continue
        unit = c.getter_params.get("unit") or ""
        p = c.check_params
        if isinstance(p.get("expected"), (int, float)) and not isinstance(p["expected"], bool):
            value = float(p["expected"])
            out.append(f"{value * 1.5 + 1:.6g} {unit}".strip())
        elif "min" in p or "max" in p:
            hi = p.get("max")
            lo = p.get("min")
            wrong = (float(hi) * 2 + 10) if isinstance(hi, (int, float)) else \
                (float(lo) - abs(float(lo)) - 10)
            out.append(f"{wrong:.6g} {unit}".strip())
        elif isinstance(p.get("expected"), str):
            out.append("unknown")
        elif isinstance(p.get("expected"), list):
            out.append(", ".join(str(i) for i in range(1, len(p["expected"]) + 1)))
    return list(dict.fromkeys(out))


# -- placeholder content -------------------------------------------------------------------

def _image_bytes(ext: str, size: tuple[int, int], value: int) -> bytes:
    from PIL import Image

    w, h = size
    img = Image.fromarray(np.full((h, w), value, np.uint8))
    buf = io.BytesIO()
    fmt = {".jpg": "JPEG", ".jpeg": "JPEG", ".tif": "TIFF", ".tiff": "TIFF", ".bmp": "BMP",
           ".gif": "GIF"}.get(ext, "PNG")
    img.save(buf, format=fmt)
    return buf.getvalue()


def _silent_wav(template: Path | None) -> bytes:
    rate, channels, frames, width = 16000, 1, 16000, 2
    if template is not None:
        try:
            with wave.open(str(template)) as w:
                rate, channels, frames, width = (w.getframerate(), w.getnchannels(),
                                                 w.getnframes(), w.getsampwidth())
        except (wave.Error, EOFError, OSError):
            pass
    frames = min(frames, rate * 120)
    buf = io.BytesIO()
    with wave.open(buf, "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(width)
        out.setframerate(rate)
        out.writeframes(b"\x00" * frames * channels * width)
    return buf.getvalue()


def _text_placeholder(ext: str, columns: list[str], wav: Path | None,
                      formats: Mapping[str, bytes]) -> bytes:
    if ext in (".csv", ".tsv", ".xls"):
        sep = "\t" if ext in (".tsv", ".xls") else ","
        return (sep.join(columns or [" ", "Area", "Mean"]) + "\n").encode()
    if ext == ".geojson":
        return json.dumps({"type": "FeatureCollection", "features": []}).encode()
    if ext == ".json":
        return b"{}"
    if ext == ".wav":
        return _silent_wav(wav)
    return formats.get(ext, b"0\n")


def _input_images(start: Path) -> list[tuple[int, int]]:
    from PIL import Image

    sizes: dict[tuple[int, int], None] = {}
    for path in sorted(start.rglob("*")):
        if path.suffix.lower() in IMAGE_EXTS and path.is_file() and not path.is_symlink():
            try:
                with Image.open(path) as im:
                    sizes.setdefault(im.size, None)
            except Exception:
                continue
    return list(sizes)[:3]


# -- the catalogue for one task ------------------------------------------------------------------

def _choice_cheats(criteria: Sequence[Criterion], instruction: str | None) -> list[Cheat]:
    """Against ``choice`` criteria: every option at once (letters, then the lettered texts),
    the question copied back (the instruction when known, else its options block) and a wrong
    option of the right form."""
    out: list[Cheat] = []
    choices = [c for c in criteria if c.check == "choice"
               and isinstance(c.check_params.get("options"), list) and c.check_params["options"]]
    for k, c in enumerate(choices):
        options, expected = c.check_params["options"], c.check_params.get("expected")
        tag = f"-{k + 1}" if len(choices) > 1 else ""
        letters = [chr(ord("A") + i) for i in range(len(options))]
        listed = " ".join(f"({x}) {o}" for x, o in zip(letters, options, strict=True))
        wrong = next((x for x, o in zip(letters, options, strict=True)
                      if str(expected).strip().upper() != x and str(expected).strip() != o), None)
        out += [Cheat(f"choice-every-letter{tag}", "answer", answer=", ".join(letters)),
                Cheat(f"choice-every-option{tag}", "answer", answer=listed),
                Cheat(f"choice-question-copied{tag}", "answer",
                      answer=instruction or f"Which option fits the figure? {listed}")]
        if wrong:
            out.append(Cheat(f"choice-wrong-option{tag}", "answer", answer=wrong))
    return list({ch.answer: ch for ch in out}.values())


def generic_cheats(criteria: Sequence[Criterion], start: Path,
                   instruction: str | None = None,
                   formats: Mapping[str, bytes] | None = None) -> list[Cheat]:
    """The generic cheats for a task whose criteria are ``criteria``, ``start`` being its work
    directory at the start (the inputs); ``instruction`` (the task's text) is what an agent
    could copy back as its answer; ``formats``: the smallest valid file of each of the tool's
    own formats by extension (its adapter's ``placeholders``), what the placeholder cheat
    writes instead of "0"."""
    outputs = output_paths(criteria)
    cheats = [Cheat("done-at-once", "done")]
    if outputs:
        cheats.append(Cheat("empty-outputs", "empty", {p: b"" for p in outputs}))
        cheats += _placeholders(criteria, outputs, start, formats or {})
        copied = _copied_inputs(outputs, start)
        if copied:
            cheats.append(Cheat("input-copied", "copy", copied))
    if outputs and instruction and any(c.check == "stbench_target" for c in criteria):
        # ST-Bench: an agent that echoes its prompt into every output must earn nothing
        text = instruction.encode()
        cheats.append(Cheat("prompt-copied", "copy", {p: text for p in outputs},
                            answer=instruction))
    if any(c.getter.startswith("answer") for c in criteria):
        cheats.append(Cheat("answer-zero", "answer", answer="0"))
        for i, text in enumerate(_answer_forms(criteria)):
            cheats.append(Cheat(f"answer-wrong-{i + 1}", "answer", answer=text))
        cheats += _choice_cheats(criteria, instruction)
        if instruction and any(c.check == "sts_at_least" for c in criteria):
            # an open answer scored by similarity: the question shares the answer's words
            cheats.append(Cheat("answer-question-copied", "answer", answer=instruction))
    return cheats


def _placeholders(criteria: Sequence[Criterion], outputs: list[str], start: Path,
                  formats: Mapping[str, bytes]) -> list[Cheat]:
    wav = next((p for p in sorted(start.rglob("*.wav")) if p.is_file()), None)
    columns = _column_names(criteria)
    text_files = {p: _text_placeholder(Path(p).suffix.lower(), columns, wav, formats)
                  for p in outputs if Path(p).suffix.lower() not in IMAGE_EXTS}
    images = [p for p in outputs if Path(p).suffix.lower() in IMAGE_EXTS]
    sizes = list(dict.fromkeys(_stated_sizes(criteria) + _input_images(start)))
    if not images:
        return [Cheat("placeholders", "placeholder", text_files)]
    out = []
    for w, h in sizes or [(640, 480)]:
        for value, colour in ((0, "black"), (255, "white")):
            files = dict(text_files)
            files.update({p: _image_bytes(Path(p).suffix.lower(), (w, h), value)
                          for p in images})
            out.append(Cheat(f"placeholders-{colour}-{w}x{h}", "placeholder", files))
    return out


def _copied_inputs(outputs: list[str], start: Path) -> dict[str, bytes]:
    """Each output replaced by an input file of the same extension (when there is one)."""
    files: dict[str, bytes] = {}
    for out in outputs:
        ext = Path(out).suffix.lower()
        for path in sorted(start.rglob("*")):
            if path.is_file() and not path.is_symlink() and path.suffix.lower() == ext \
                    and path.relative_to(start).as_posix() != out \
                    and path.stat().st_size <= 64 * 2**20:
                files[out] = path.read_bytes()
                break
    return files


def play_offline(cheat: Cheat, criteria: Sequence[Criterion], start: FinalState,
                 scratch: Path) -> EvaluationResult:
    """Score ``cheat`` on the start state: its files written into a copy of the start work
    directory, its answer given, the episode ended with DONE."""
    return play_offline_scores(cheat, criteria, start, scratch)[0]


def play_offline_scores(cheat: Cheat, criteria: Sequence[Criterion], start: FinalState,
                        scratch: Path) -> tuple[EvaluationResult, str | None]:
    """:func:`play_offline`'s evaluation and what the registered rewards' audits find wrong
    in paying it (:func:`~sciagent_gym.evaluation.rewards.cheat_findings`: ST-Bench's
    training reward applies no gate; None when nothing is)."""

    work = scratch / "work"
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(start.work_dir, work, symlinks=True)
    for rel, data in cheat.files.items():
        target = work / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink() or target.is_file():
            target.unlink()
        target.write_bytes(data)
    state = FinalState(work_dir=work, app_state=start.app_state,
                       app_state_error=start.app_state_error, screenshot=start.screenshot,
                       terminal=start.terminal, agent_status="done", windows=start.windows,
                       commands=start.commands, answer=cheat.answer)
    try:
        ev = evaluate(criteria, state)
        return ev, cheat_findings(EpisodeEnd(criteria, state, ev, gave_up=False))
    finally:
        shutil.rmtree(work, ignore_errors=True)
