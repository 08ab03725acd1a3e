"""The computer API beyond pyautogui (clipboard, program control, window management), performed
through whichever provider the env has, so it works the same locally, in a VM and remotely.

The provider is seen through :class:`ComputerHost`, the part of it these actions need (every
provider has it), so the controller stays below the providers."""

from __future__ import annotations

from typing import Protocol

from sciagent_gym.actions import types as A
from sciagent_gym.actions.types import ActionError
from sciagent_gym.controller.windows import WindowInfo


class ComputerHost(Protocol):
    """What a computer-API action asks of the machine (a provider)."""

    def set_clipboard(self, text: str) -> None: ...

    def get_clipboard(self) -> str: ...

    def windows(self) -> list[WindowInfo]: ...

    def activate_window(self, window_id: int) -> None: ...

    def close_window(self, window_id: int) -> None: ...

    def launch_command(self, name: str, argv: list[str]) -> None: ...


def find_window(windows: list[WindowInfo], title: str) -> WindowInfo:
    """The window titled ``title``, else the first whose title contains it (any case)."""
    exact = [w for w in windows if w.title == title]
    if exact:
        return exact[0]
    needle = title.casefold()
    found = [w for w in windows if needle in w.title.casefold()]
    if not found:
        titles = ", ".join(repr(w.title) for w in windows) or "none"
        raise ActionError(f"no window titled {title!r} (open windows: {titles})")
    return found[0]


def window_listing(windows: list[WindowInfo]) -> str:
    lines = [f"{'*' if w.active else ' '} {w.title!r} at ({w.x}, {w.y}) size {w.width}x{w.height}"
             + (" modal" if w.modal else "") for w in windows]
    return "windows (* = focused):\n" + ("\n".join(lines) if lines else "(none)")


def perform(provider: ComputerHost, act: A.Action, launch_name: str) -> str | None:
    """Do one computer-API action; returns text for the terminal observation, if any."""
    if isinstance(act, A.SetClipboard):
        provider.set_clipboard(act.text)
        return None
    if isinstance(act, A.GetClipboard):
        return "clipboard:\n" + provider.get_clipboard()
    if isinstance(act, A.ListWindows):
        return window_listing(provider.windows())
    if isinstance(act, A.ActivateWindow):
        provider.activate_window(find_window(provider.windows(), act.title).id)
        return None
    if isinstance(act, A.CloseWindow):
        provider.close_window(find_window(provider.windows(), act.title).id)
        return None
    if isinstance(act, A.Launch):
        provider.launch_command(launch_name, ["sh", "-c", act.command])
        return f"launched: {act.command}"
    raise ActionError(f"not a computer-API action: {type(act).__name__}")
