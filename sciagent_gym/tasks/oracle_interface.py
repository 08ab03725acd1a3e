"""How a task's GUI oracle works the program: through its menus and dialogs, by typing code into
one of its consoles, or both (issue 33: "proven through the GUI" must mean what a person working
the menus would do, and Steps* must count that work, not a program typed in one line).

Every task declares ``oracle_interface`` in its spec; :func:`classify` derives it from the GUI
oracle's steps and the tool's :class:`ConsoleLanguage`, and the spec tests hold the two equal:

- ``console``: code in the program's console language (or a shell command) is typed or run, and
  no dialog beyond a file chooser is worked;
- ``mixed``: console code, and at least one dialog that does part of the work;
- ``menus``: no console code at all (values typed into dialog fields, file names, a command
  finder's search text are not code).

A dialog is a window the oracle clicks in (``in_window``) or waits for (``await_window``) and
then acts in (anything but Escape, a read or the end before the next wait), whose title
pattern is neither one of the tool's own windows (its main window, its consoles:
:attr:`ConsoleLanguage.windows`) nor a file chooser (:data:`FILE_CHOOSERS`), since opening and
saving files through a dialog is not the analysis a task asks for.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sciagent_gym.tasks.step_schema import gui_only

#: The values a spec may declare.
INTERFACES = ("menus", "console", "mixed")
#: Title patterns of file choosers (open, save, export, pick a folder): not the task's work.
FILE_CHOOSERS = re.compile(r"^\^?\s*(open|save|export|choose|select where|load data from a file"
                           r"|import|browse)", re.I)
_TYPING = re.compile(r"pyautogui\.(?:write|typewrite)\(\s*(?P<q>'''|\"\"\"|'|\")(?P<text>.*?)"
                     r"(?<!\\)(?P=q)", re.S)


@dataclass(frozen=True)
class ConsoleLanguage:
    """What typing into a program's own console looks like in a GUI oracle's steps.

    ``code`` matches one typed line written in the console's language (a command, a statement,
    a call), and must not match what a dialog's fields take (numbers, names, paths, a search
    word). ``windows`` matches the title patterns of the program's own non-dialog windows (the
    main window, the console windows), as the oracles write them in ``await_window``."""

    code: str
    windows: str = ""

    def is_code(self, line: str) -> bool:
        return bool(line.strip()) and re.search(self.code, line) is not None

    def is_own_window(self, title_pattern: str) -> bool:
        return bool(self.windows) and re.search(self.windows, title_pattern) is not None


def _typed(action: Any) -> Iterator[str]:
    """The lines an action types (pyautogui text or the human dict form)."""
    if isinstance(action, dict):
        action = action.get("action", action)
        if isinstance(action, dict) and action.get("type") == "type":
            yield from str(action.get("text", "")).splitlines()
        return
    if not isinstance(action, str):
        return
    for match in _TYPING.finditer(action):
        raw = match.group("q") + match.group("text") + match.group("q")
        try:
            text = ast.literal_eval(raw)
        except (SyntaxError, ValueError):
            text = match.group("text")
        yield from str(text).splitlines()


def _passive(step: Any) -> bool:
    """Whether a step does no work in the window open: it closes it (Escape), reads it (OCR, a
    perceiver) or ends the episode. A plot window code opened, then read, is no dialog."""
    if isinstance(step, dict):
        return "read" in step or "perceive" in step
    return isinstance(step, str) and (step.strip() in ("DONE", "FAIL") or re.fullmatch(
        r"pyautogui\.press\(['\"]esc(ape)?['\"]\)", step.strip()) is not None)


def _runs(action: Any) -> bool:
    """Whether an action is a shell command (``run(...)``, or the dict form's ``run``)."""
    if isinstance(action, dict):
        inner = action.get("action", action)
        return "run" in action or (isinstance(inner, dict) and inner.get("type") == "run")
    return isinstance(action, str) and action.strip().startswith("run(")


@dataclass(frozen=True)
class InterfaceUse:
    """What :func:`classify` counted in a GUI oracle."""

    code_lines: int
    shell_commands: int
    dialogs: tuple[str, ...]

    @property
    def interface(self) -> str:
        if not self.code_lines and not self.shell_commands:
            return "menus"
        return "mixed" if self.dialogs else "console"


def count_use(steps: list[Any], console: ConsoleLanguage | None) -> InterfaceUse:
    """Count console code, shell commands and dialogs in ``steps`` (a spec's GUI oracle)."""
    code = shell = 0
    dialogs: list[str] = []

    def dialog(title: Any) -> None:
        title = str(title)
        if FILE_CHOOSERS.search(title) or (console is not None and console.is_own_window(title)):
            return
        if title not in dialogs:
            dialogs.append(title)

    def walk(items: list[Any]) -> None:
        nonlocal code, shell
        awaited: str | None = None  # a dialog waited for, counted once the oracle acts in it
        for step in items:
            if isinstance(step, dict) and "toggle" in step:
                walk(step.get("then", []))
                continue
            if isinstance(step, dict) and "await_window" in step:
                awaited = None if step.get("gone") else str(step["await_window"])
                continue
            actions = [step]
            if isinstance(step, dict) and "in_window" in step:
                dialog(step["in_window"])
                actions = step.get("do", [])
            elif awaited is not None and not _passive(step):
                dialog(awaited)
            for action in actions:
                if _runs(action):
                    shell += 1
                elif console is not None:
                    code += sum(console.is_code(line) for line in _typed(action))

    walk(steps)
    return InterfaceUse(code, shell, tuple(dialogs))


def classify(steps: list[Any], console: ConsoleLanguage | None) -> str:
    """``menus``, ``console`` or ``mixed``: see the module docstring."""
    return count_use(steps, console).interface


def spec_interface(data: dict[str, Any], console: ConsoleLanguage | None) -> str | None:
    """What a spec in its JSON form should declare: from its ``gui_oracle``, or its oracle when
    that is GUI-only (as ``TaskSpec.gui_oracle`` picks); None without a GUI oracle. For spec
    generators, which write the declaration with the rest of the spec."""
    steps = data.get("gui_oracle")
    if steps is None and gui_only(data["oracle"], data.get("modality") in ("gui+cli", "code")):
        steps = data["oracle"]
    return classify(steps, console) if steps is not None else None
