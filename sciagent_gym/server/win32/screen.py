"""The screen of the interactive desktop: frames of the primary monitor (through ``mss``) and
making every window repaint."""

from __future__ import annotations

import time

import numpy as np

from sciagent_gym.server.win32 import winapi

RDW_INVALIDATE, RDW_ERASE, RDW_ALLCHILDREN, RDW_FRAME = 0x0001, 0x0004, 0x0080, 0x0400


class Win32Screen:
    """Grabs and repaints (the screen half of the X11Controller's interface)."""

    def __init__(self, width: int, height: int) -> None:
        import mss

        self.width, self.height = width, height
        self._api = winapi.win_api()
        self._sct = (getattr(mss, "MSS", None) or mss.mss)()
        self._monitor = {"left": 0, "top": 0, "width": width, "height": height}
        self.last_grab_seconds = 0.0

    def grab(self) -> np.ndarray:
        """The primary monitor as a fresh (H, W, 3) uint8 RGB array (as X11Controller.grab)."""
        t0 = time.perf_counter()
        shot = self._sct.grab(self._monitor)
        bgra = np.frombuffer(shot.raw, dtype=np.uint8).reshape(self.height, self.width, 4)
        rgb = np.empty((self.height, self.width, 3), dtype=np.uint8)
        rgb[..., 0] = bgra[..., 2]
        rgb[..., 1] = bgra[..., 1]
        rgb[..., 2] = bgra[..., 0]
        self.last_grab_seconds = time.perf_counter() - t0
        return rgb

    def expose_all(self) -> None:
        """Make every window repaint (the desktop and all its descendants), as xrefresh does."""
        self._api.RedrawWindow(None, None, None,
                               RDW_INVALIDATE | RDW_ERASE | RDW_FRAME | RDW_ALLCHILDREN)

    def close(self) -> None:
        self._sct.close()
