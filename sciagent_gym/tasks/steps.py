"""Running a task's scripted steps (its oracle or a negative) through a live env."""

from __future__ import annotations

import re
import time
from typing import Any

from sciagent_gym.errors import (
    StepError,
)


def run_steps(env, steps: list[Any], refused_ok: bool = False) -> int:
    """Perform ``steps`` in ``env`` (an env or a wrapper of one); returns the env steps taken.

    Action strings and ``{"action": ...}`` go through ``env.step`` exactly as an agent's would;
    ``{"script": ...}`` runs in the program's own scripting channel and ``{"run": ...}`` as a
    shell command in the sandbox (privileges of the task author, not of the agent).
    ``{"script": ..., "answer": "<template>"}`` then gives the script's output, put into the
    template's ``{output}``, through the answer action. ``in_window`` and ``read`` are the GUI
    oracle's forms, and ``perceive`` (see :mod:`sciagent_gym.tasks.spec`): they look at the
    window list and the screen only. An action the env refuses raises
    StepError unless ``refused_ok`` (cheats: a refused shell command is the defence working).
    """
    base = env.unwrapped
    taken = 0
    for i, step in enumerate(steps):
        if isinstance(step, dict) and "script" in step and "answer" in step:
            output = base.adapter.run_script(base.provider, step["script"]) or ""
            step = {"action": {"type": "answer",
                               "text": step["answer"].replace("{output}", output.strip())}}
        if isinstance(step, str) or "action" in step:
            action = step if isinstance(step, str) else step["action"]
            _, _, terminated, truncated, info = env.step(action)
            taken += 1
            if info.get("action_error") and not refused_ok:
                raise StepError(f"step {i} ({action!r}): {info['action_error']}")
            if terminated or truncated:
                break
        elif "script" in step:
            base.adapter.run_script(base.provider, step["script"])
        elif "in_window" in step:
            for action in window_actions(base.provider, step["in_window"], step["do"]):
                _, _, terminated, truncated, info = env.step(action)
                taken += 1
                if info.get("action_error") and not refused_ok:
                    raise StepError(f"step {i} ({action!r}): {info['action_error']}")
                if terminated or truncated:
                    return taken
        elif "read" in step or "perceive" in step:
            output = read_screen(base.provider, **step["read"]) if "read" in step else \
                perceive_screen(base.provider, base.adapter.perceivers, **step["perceive"])
            _, _, terminated, truncated, info = env.step(
                {"type": "answer", "text": step["answer"].replace("{output}", output)})
            taken += 1
            if info.get("action_error"):
                raise StepError(f"step {i} (answer {output!r}): {info['action_error']}")
            if terminated or truncated:
                break
        elif "await_window" in step:
            await_window(base.provider, step["await_window"], gone=step.get("gone", False),
                         focused=step.get("focused", False), timeout=step.get("timeout", 20.0))
        elif "run" in step:
            result = base.provider.run_command(step["run"])
            if result.returncode != 0:
                raise StepError(f"step {i} (run {step['run']!r}) failed: {result.output[-500:]}")
        else:
            raise StepError(f"step {i}: unknown step {step!r}")
    return taken


def find_window(provider, title: str):
    """The open window whose title matches ``title`` (the active one when several do)."""
    pattern = re.compile(title)
    matching = [w for w in provider.windows() if pattern.search(w.title)]
    if not matching:
        raise StepError(f"no window {title!r} (windows: {[w.title for w in provider.windows()]})")
    return next((w for w in matching if w.active), matching[-1])


def window_actions(provider, title: str, actions: list[Any]) -> list[str]:
    """``actions`` with their coordinates moved from the window's frame to the screen, as
    pyautogui strings (what an agent that found the window on screen would send); an entry of
    several calls stays one step, as it would outside ``in_window``."""
    from dataclasses import fields, replace

    from sciagent_gym.actions.parse import parse_action
    from sciagent_gym.actions.pyautogui import action_to_pyautogui

    win = find_window(provider, title)
    size = (provider.width, provider.height)
    out = []
    for raw in actions:
        raw = raw["action"] if isinstance(raw, dict) and "action" in raw else raw
        calls = []
        # parsed against a huge screen: relative coordinates are checked once made absolute
        for action in parse_action(raw, (1 << 15, 1 << 15)):
            names = {f.name for f in fields(action)}
            moved = {}
            if "x" in names and action.x is not None:
                moved = {"x": action.x + win.x, "y": action.y + win.y}
            if "start" in names and action.start is not None:
                moved["start"] = (action.start[0] + win.x, action.start[1] + win.y)
            action = replace(action, **moved)
            x, y = getattr(action, "x", None) or 0, getattr(action, "y", None) or 0
            if not (0 <= x < size[0] and 0 <= y < size[1]):
                raise StepError(f"{raw!r} in window {win.title!r} at ({win.x}, {win.y}) falls "
                                f"off the {size[0]}x{size[1]} screen")
            calls.append(action_to_pyautogui(action))
        out.append("\n".join(calls))
    return out


def read_screen(provider, pattern: str, region: list[int] | None = None,
                window: str | None = None, psm: int = 6, scale: float = 2,
                number: bool = False, timeout: float = 0.0) -> str:
    """OCR the settled screen (``region`` [x, y, w, h], relative to ``window`` when named) and
    return the first group of ``pattern`` (or its whole match); with ``number``, read as one
    number (see :func:`as_number`). With ``timeout``, look again until the pattern shows up
    (or the window opens) for that many seconds, as a person waits for a busy program's
    output: a settled screen only proves nothing moved for the quiet window, and a program
    busy longer than that (R loading a package) has not printed its result yet."""
    from sciagent_gym.evaluation.getters.ocr import ocr_region
    from sciagent_gym.evaluation.getters.pixels import crop

    deadline = time.monotonic() + timeout
    while True:
        rgb = provider.wait_settled()
        try:
            where = region
            if window is not None:
                win = find_window(provider, window)
                x, y, w, h = region or (0, 0, win.width, win.height)
                where = [win.x + x, win.y + y, w, h]
            text = ocr_region(crop(rgb, where), psm=psm, scale=scale)
            found = re.search(pattern, text)
            if found is None:
                raise StepError(f"read: {pattern!r} not on screen in {where}; OCR saw {text!r}")
            output = (found.group(1) if found.groups() else found.group(0)).strip()
            return as_number(output, text) if number else output
        except StepError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.25)


def perceive_screen(provider, perceivers: dict[str, Any], fn: str,
                    region: list[int] | None = None, window: str | None = None,
                    args: dict[str, Any] | None = None, timeout: float = 0.0) -> str:
    """Read an answer off the settled screen with the tool's perceiver ``fn``: the pixels of
    ``region`` (relative to ``window`` when named; the whole window or screen otherwise) go to
    ``perceivers[fn](rgb, **args)``, which returns the answer's text or raises StepError when
    what it needs is not shown (yet): with ``timeout`` the screen is looked at again until
    then, as ``read`` does."""
    from sciagent_gym.evaluation.getters.pixels import crop

    if fn not in perceivers:
        raise StepError(f"perceive: no perceiver {fn!r} (this tool has {sorted(perceivers)})")
    deadline = time.monotonic() + timeout
    while True:
        rgb = provider.wait_settled()
        try:
            where = region
            if window is not None:
                win = find_window(provider, window)
                x, y, w, h = region or (0, 0, win.width, win.height)
                where = [win.x + x, win.y + y, w, h]
            pixels = crop(rgb, where) if where is not None else rgb
            output = str(perceivers[fn](pixels, **(args or {}))).strip()
            if not output:
                raise StepError(f"perceive: {fn} saw nothing to answer in {where}")
            return output
        except StepError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.25)


def as_number(output: str, seen: str = "") -> str:
    """The OCR'd ``output`` as one plain number: spaces OCR put between digits or around a
    decimal separator dropped (``8 . 6984``), a lone decimal comma read as a point (tesseract
    confuses them in long runs of digits, such as Praat's 17-digit values). Raises StepError
    if what remains is not a number."""
    text = re.sub(r"(?<=\d)\s+(?=\d)", "", output)
    text = re.sub(r"(?<=\d)\s*([.,])\s*(?=\d)", r"\1", text)
    if "," in text and "." not in text and text.count(",") == 1:
        text = text.replace(",", ".")
    try:
        float(text)
    except ValueError:
        raise StepError(f"read: {output!r} is not a number; OCR saw {seen!r}") from None
    return text


def await_window(provider, title: str, gone: bool = False, focused: bool = False,
                 timeout: float = 20.0) -> None:
    """Wait until a window whose title matches ``title`` is open (and, with ``focused``, the
    window manager's active window) or, with ``gone``, until none is open; then until the screen
    settles. Raises StepError on timeout."""
    pattern = re.compile(title)
    deadline = time.monotonic() + timeout
    while True:
        matching = [w for w in provider.windows() if pattern.search(w.title)]
        if gone:
            done = not matching
        else:
            done = any(w.active or not focused for w in matching)
        if done:
            break
        if time.monotonic() > deadline:
            state = "still open" if gone else ("not focused" if matching else "not open")
            titles = [w.title for w in provider.windows()]
            raise StepError(f"window {title!r} {state} after {timeout:g} s (windows: {titles})")
        time.sleep(0.05)
    provider.wait_settled()
