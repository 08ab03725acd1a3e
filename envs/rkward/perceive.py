"""Perceivers: reading several numbers of one result table off RKWard's output page.

A GUI oracle's ``read`` step gives one number; some answers are two numbers a dialog prints in
one table (the lower and upper bound of a t-test's confidence interval, in the last column of
its two rows). :func:`ocr_fields` reads the region's pixels with OCR, matches the task's
pattern (named groups) against that text and fills the answer template with the groups: every
number comes off the screen.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from sciagent_gym.sdk import StepError

#: OCR's readings of a minus sign and a decimal comma, normalised before matching.
_MINUS = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2014": "-"})


def ocr_fields(rgb: np.ndarray, pattern: str, template: str, psm: int = 6,
               scale: float = 2) -> str:
    """The answer ``template`` (``{name}`` for each named group of ``pattern``) filled with
    what the pattern found in the OCR text of ``rgb`` (searched across lines)."""
    from sciagent_gym.sdk import ocr_region

    text = ocr_region(rgb, psm=psm, scale=scale).translate(_MINUS)
    found = re.search(pattern, text, re.S)
    if found is None:
        raise StepError(f"perceive: {pattern!r} not on screen; OCR saw {text!r}")
    values: dict[str, Any] = {k: v.replace(",", ".") for k, v in found.groupdict().items()
                              if v is not None}
    return template.format(**values)


PERCEIVERS = {"ocr_fields": ocr_fields}
