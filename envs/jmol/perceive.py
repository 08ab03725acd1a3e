"""Perceivers: reading several numbers that Jmol prints together off the screen.

A GUI oracle's ``read`` step gives one number; some answers are several numbers Jmol prints in
one place: the pop-up menu's Show > Unit cell prints ``a=4.596, b=4.596, c=2.96, alpha=90.0,
...`` and ``volume=62.52...`` in the script console; a script's ``echo`` shows a line of values
in the display. :func:`ocr_fields` reads the region's pixels with OCR, matches the task's
pattern (named groups) against that text and fills the answer template with the groups: every
number comes off the screen.
"""

from __future__ import annotations

import re

import numpy as np

from sciagent_gym.sdk import StepError

#: OCR's readings of a minus sign, normalised before matching.
_MINUS = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2014": "-"})


def ocr_fields(rgb: np.ndarray, pattern: str, template: str, psm: int = 6,
               scale: float = 2) -> str:
    """The answer ``template`` (``{name}`` for each named group of ``pattern``) filled with
    what the pattern found in the OCR text of ``rgb`` (searched across lines). A group's
    value loses the spaces OCR puts inside a number (``99. 839``) and reads a decimal comma
    as a point."""
    from sciagent_gym.sdk import ocr_region

    text = ocr_region(rgb, psm=psm, scale=scale).translate(_MINUS)
    found = re.search(pattern, text, re.S)
    if found is None:
        raise StepError(f"perceive: {pattern!r} not on screen; OCR saw {text!r}")
    values = {k: re.sub(r"\s+", "", v).replace(",", ".")
              for k, v in found.groupdict().items() if v is not None}
    return template.format(**values)


PERCEIVERS = {"ocr_fields": ocr_fields}
