"""What a tool adapter may ask of the machine its program runs on.

Two kinds of callers hand an adapter a machine: the providers on the host (local, remote: they
launch the program and reset it) and the control server inside a guest (it runs the state
channel with its own ``Machine``). Adapters are typed against these protocols rather than
either class, so a hook that needs more than the guest offers shows up in type checks.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from sciagent_gym.controller.windows import WindowInfo


class ChannelHost(Protocol):
    """Enough to run a state-channel client next to the program and read its answer."""

    ready_scale: float
    #: New at each launch of the program: what adapters key one running program's state by.
    launch_id: str

    @property
    def paths(self) -> dict[str, str]:
        """``home``, ``work``, ``tmp`` as the program sees them."""

    def windows(self) -> list[WindowInfo]: ...

    def close_window(self, window_id: int) -> None: ...

    def activate_window(self, window_id: int) -> None: ...

    def spawn_in_sandbox(self, name: str, argv: list[str]) -> None: ...

    def kill_in_sandbox(self, name: str) -> None: ...

    def call_in_sandbox(self, name: str, *, code: str | None = None,
                        args: list[str] | None = None, argv: list[str] | None = None,
                        stdin: str = "") -> None:
        """Start a channel client whose stdout is its reply (see
        :meth:`ToolAdapter.call_client`): Python ``code`` with ``args``, or ``argv`` with
        ``stdin``; secrets go in ``args`` or ``stdin``, never in ``argv``."""

    def collect_in_sandbox(self, name: str) -> dict:
        """``{"done": False}`` while the call runs, else ``{"done": True, "output",
        "returncode"}`` (``output`` None: no such call, or a reply over the size limit)."""

    def read_file(self, path: str, remove: bool = False) -> str | None: ...


class ProgramHost(ChannelHost, Protocol):
    """A provider on the host: the channel, plus what launching and resetting look at."""

    def screenshot(self) -> np.ndarray: ...

    def nudge_window(self, window_id: int) -> None: ...

    def app_log_tail(self) -> str: ...
