"""Screen grab cost on a 1280x800 Xvfb display: mss (MIT-SHM) vs Pillow vs python-xlib.

    python benchmarks/screen_grab.py --n 50

Why mss is the controller's grabber: it is the fastest of the three here (ratios printed
against Pillow's ImageGrab, measured in the same process).
"""

from __future__ import annotations

import argparse

import numpy as np
from _stats import median_ms
from PIL import ImageGrab
from Xlib import X
from Xlib import display as xdisplay

from sciagent_gym.controller.x11 import X11Controller
from sciagent_gym.providers.local.display import VirtualDisplay


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50)
    args = parser.parse_args()
    with VirtualDisplay(1280, 800, window_manager=False) as disp:
        ctl = X11Controller(disp.name, 1280, 800)
        dpy = xdisplay.Display(disp.name)
        root = dpy.screen().root

        def xlib_grab():
            raw = root.get_image(0, 0, 1280, 800, X.ZPixmap, 0xFFFFFFFF)
            return np.frombuffer(raw.data, np.uint8).reshape(800, 1280, 4)[:, :, 2::-1].copy()

        results = {
            "mss -> numpy RGB": median_ms(ctl.grab, args.n),
            "PIL.ImageGrab -> numpy": median_ms(
                lambda: np.asarray(ImageGrab.grab(xdisplay=disp.name)), args.n),
            "python-xlib get_image -> numpy": median_ms(xlib_grab, args.n),
        }
        ctl.close()
        dpy.close()
    base = results["PIL.ImageGrab -> numpy"]
    for name, ms in results.items():
        print(f"{name:<32} median {ms:6.2f} ms   ratio to Pillow {ms / base:4.2f}")


if __name__ == "__main__":
    main()
