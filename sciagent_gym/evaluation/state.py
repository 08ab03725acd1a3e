"""The final state of an episode, as the evaluator sees it (host side, no app needed)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .getters.registry import GetterError

AGENT_STATUSES = ("done", "fail", "truncated", "crashed", "limit", "running")
_FORMAT = 1


@dataclass(eq=False)
class FinalState:
    """Everything a criterion may look at once the episode is over.

    ``work_dir`` is the host path of the sandbox's working directory; ``app_state`` is the app's
    JSON state dump (None when it could not be read, with the reason in ``app_state_error``).
    ``windows`` holds ``WindowInfo.to_dict()`` of every top-level window at the end and
    ``commands`` maps each command run in the sandbox after the episode to ``{"returncode",
    "output", "timed_out"}``; None means "not collected", so getters can say so.
    """

    work_dir: Path
    app_state: dict[str, Any] | None = None
    app_state_error: str | None = None
    screenshot: np.ndarray | None = None
    terminal: str = ""
    agent_status: str = "running"
    windows: list[dict[str, Any]] | None = None
    commands: dict[str, dict[str, Any]] | None = None
    #: The text of the agent's last ``answer(...)`` action; None when it gave none.
    answer: str | None = None

    def __post_init__(self) -> None:
        self.work_dir = Path(self.work_dir)
        if self.windows is not None:
            self.windows = [_window_dict(w) for w in self.windows]
        if self.commands is not None:
            self.commands = {str(k): _command_dict(v) for k, v in self.commands.items()}
        if self.agent_status not in AGENT_STATUSES:
            raise ValueError(
                f"agent_status {self.agent_status!r} is not one of {', '.join(AGENT_STATUSES)}"
            )

    def path(self, rel: str | os.PathLike[str]) -> Path:
        """Resolve ``rel`` inside work_dir; anything that would leave it is a GetterError.

        Criteria name agent-written files; a path must never let a score depend on host files.
        """
        if not isinstance(rel, (str, os.PathLike)):
            raise GetterError(f"{rel!r}: path must be a string")
        text = os.fspath(rel)
        if not text.strip():
            raise GetterError("empty path")
        if "\x00" in text:
            raise GetterError(f"{text!r}: path contains a NUL byte")
        if Path(text).is_absolute():
            raise GetterError(
                f"{text}: absolute paths are not allowed (give a path relative to the "
                "working directory)"
            )
        root = self.work_dir.resolve()
        lexical = Path(os.path.normpath(root / text))
        if not lexical.is_relative_to(root):
            raise GetterError(f"{text}: path escapes the working directory")
        try:
            real = (root / text).resolve()
        except (OSError, RuntimeError) as exc:
            raise GetterError(f"{text}: cannot resolve path: {exc}") from None
        if not real.is_relative_to(root):
            raise GetterError(f"{text}: resolves outside the working directory (symlink)")
        return real

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write work/, app_state.json, screenshot.png, windows.json, commands.json and meta.json
        so the state can be rescored."""
        out = Path(directory)
        root = self.work_dir.resolve()
        if out.resolve().is_relative_to(root):
            raise ValueError(f"cannot save a final state inside its own work_dir ({out})")
        out.mkdir(parents=True, exist_ok=True)
        dest = out / "work"
        if dest.is_symlink() or dest.is_file():
            dest.unlink()
        elif dest.exists():
            shutil.rmtree(dest)
        if self.work_dir.is_dir():
            shutil.copytree(self.work_dir, dest, symlinks=True)
            _relativise_links(dest, (root, self.work_dir.absolute()))
        else:
            dest.mkdir()
        _write_or_remove(out / "app_state.json", self.app_state, _dump_json)
        _write_or_remove(out / "screenshot.png", self.screenshot, _save_png)
        _write_or_remove(out / "windows.json", self.windows, _dump_json)
        _write_or_remove(out / "commands.json", self.commands, _dump_json)
        meta = {
            "format": _FORMAT,
            "app_state_error": self.app_state_error,
            "terminal": self.terminal,
            "agent_status": self.agent_status,
            "answer": self.answer,
        }
        _dump_json(out / "meta.json", meta)
        return out

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> FinalState:
        """Read a state written by :meth:`save`; ``work_dir`` points at the saved copy."""
        src = Path(directory)
        meta = json.loads((src / "meta.json").read_text(encoding="utf-8"))
        app_file, shot_file = src / "app_state.json", src / "screenshot.png"
        app_state = json.loads(app_file.read_text(encoding="utf-8")) if app_file.is_file() else None
        screenshot = None
        if shot_file.is_file():
            from PIL import Image

            with Image.open(shot_file) as im:
                screenshot = np.asarray(im.convert("RGB")).copy()
        return cls(
            work_dir=src / "work",
            app_state=app_state,
            app_state_error=meta.get("app_state_error"),
            screenshot=screenshot,
            terminal=meta.get("terminal", ""),
            agent_status=meta.get("agent_status", "running"),
            windows=_load_optional(src / "windows.json"),
            commands=_load_optional(src / "commands.json"),
            answer=meta.get("answer"),
        )


def _window_dict(w: Any) -> dict[str, Any]:
    """A WindowInfo (or anything with ``to_dict``) or a mapping -> a plain dict."""
    to_dict = getattr(w, "to_dict", None)
    return dict(to_dict() if callable(to_dict) else w)


def _command_dict(r: Any) -> dict[str, Any]:
    """A sandbox CommandResult or a mapping -> {"returncode", "output", "timed_out"}."""
    if isinstance(r, Mapping):
        return dict(r)
    return {
        "returncode": getattr(r, "returncode", None),
        "output": getattr(r, "output", ""),
        "timed_out": bool(getattr(r, "timed_out", False)),
    }


def _load_optional(path: Path) -> Any:
    """Parsed JSON, or None for a state saved before the file existed."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _dump_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=1, ensure_ascii=False, default=str), encoding="utf-8")


def _save_png(path: Path, arr: np.ndarray) -> None:
    from PIL import Image

    Image.fromarray(np.ascontiguousarray(arr, dtype=np.uint8)).save(path)


def _write_or_remove(path: Path, obj: Any, writer: Any) -> None:
    """Write ``obj`` or delete a stale file, so load() never sees a previous save's leftovers."""
    if obj is None:
        path.unlink(missing_ok=True)
    else:
        writer(path, obj)


def _relativise_links(dest: Path, old_roots: tuple[Path, ...]) -> None:
    """Absolute symlinks into the old work_dir would escape the copy: make them relative."""
    for dirpath, dirnames, filenames in os.walk(dest):
        for name in dirnames + filenames:
            link = Path(dirpath) / name
            if not link.is_symlink():
                continue
            target = Path(os.readlink(link))
            old_root = next((r for r in old_roots if target.is_relative_to(r)), None)
            if target.is_absolute() and old_root is not None:
                new_target = dest / target.relative_to(old_root)
                link.unlink()
                link.symlink_to(os.path.relpath(new_target, link.parent))
