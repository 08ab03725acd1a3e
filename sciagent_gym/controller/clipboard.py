"""The X clipboard of one display, through ``xclip``.

Owning an X selection means answering other clients' requests for as long as the text should
stay on the clipboard, so setting it leaves one ``xclip -quiet`` process serving it (in the
foreground, in our process group registry) until the next set, another client taking the
selection, or :meth:`Clipboard.close`.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from sciagent_gym import processes
from sciagent_gym.errors import MissingProgramError

MAX_CLIPBOARD = 1_000_000


class Clipboard:
    def __init__(self, display_name: str) -> None:
        self._env = {**os.environ, "DISPLAY": display_name}
        self._owner: subprocess.Popen | None = None

    @staticmethod
    def _xclip() -> str:
        path = shutil.which("xclip")
        if path is None:
            raise MissingProgramError("xclip", "xclip")
        return path

    def set(self, text: str) -> None:
        self._stop_owner()
        owner = processes.spawn([self._xclip(), "-quiet", "-selection", "clipboard", "-i"],
                                env=self._env, stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        owner.stdin.write(text.encode())
        owner.stdin.close()  # xclip takes the selection once its input ends
        self._owner = owner
        # Return once the selection is really owned, so a paste right after finds it.
        processes.wait_for(lambda: self.get() == text or owner.poll() is not None, 5.0,
                           interval=0.01, what="xclip to own the clipboard")

    def get(self) -> str:
        try:
            out = subprocess.run([self._xclip(), "-o", "-selection", "clipboard"],
                                 env=self._env, capture_output=True, timeout=5.0)
        except subprocess.TimeoutExpired:
            return ""
        if out.returncode != 0:  # nobody owns the clipboard: it is empty
            return ""
        return out.stdout[:MAX_CLIPBOARD].decode("utf-8", "replace")

    def _stop_owner(self) -> None:
        if self._owner is not None:
            processes.terminate(self._owner)
            self._owner = None

    def close(self) -> None:
        self._stop_owner()
