"""FigureQA perceivers' plumbing on synthetic screens: option picking (circular for angles),
options given as a list or by letter, and a clear StepError when no figure is shown."""

from __future__ import annotations

import numpy as np
import pytest
from sciagent_gym.envs.figureqa import perceive
from sciagent_gym.envs.figureqa.common import BOX, canvas, paste_box, scale_bar

from sciagent_gym.errors import StepError


def test_pick_takes_the_nearest_number_and_wraps_angles():
    opts = ["about 10 % dark", "about 20 % dark", "about 30 % dark", "about 40 % dark"]
    assert perceive._pick(opts, 27.9) == "C"
    angles = {"A": "fibres at 0°", "B": "at 45°", "C": "at 90°", "D": "at 135°"}
    assert perceive._pick(angles, 176.0, circular=180) == "A"
    assert perceive._pick(angles, 100.0, circular=180) == "C"


def test_a_blank_screen_is_a_step_error_not_an_answer():
    blank = np.full((700, 900, 3), 255, np.uint8)
    with pytest.raises(StepError, match="image box"):
        perceive.dark_fraction(blank)
    with pytest.raises(StepError, match="plot frame"):
        perceive.curve_max(blank, [0, 60], [0, 1000])


def test_dark_fraction_and_scale_bar_on_a_shifted_figure():
    """The figure may sit a few pixels off the window's corner: the box is found by its frame."""
    _, _, w, h = BOX
    content = np.full((h, w), 200, np.uint8)
    content[:, : w // 4] = 20
    img = scale_bar(canvas(), 150, "10 µm")
    paste_box(img, content)
    shifted = np.full((710, 910, 3), 255, np.uint8)
    shifted[5:705, 7:907] = img
    assert perceive.dark_fraction(shifted, below=90) == "25.0 %"
    gray = perceive._gray(shifted)
    assert perceive._offset(gray) == (7, 5)
    assert perceive._bar_px(gray, (7, 5)) == 150
