"""What every FigureQA figure shares: the canvas, the image box, the scale bar, the options.

A figure is a 900x700 RGB PNG (the viewer shows it whole at 100 % on the 1280x800 screen).
Image-like figures (lattices, micrographs, cross-sections) fill :data:`BOX` and carry a black
scale bar with its label in the white strip below it, so that a reader (and the perceivers)
can turn pixels into lengths. Multiple-choice items get four options, one true and three that
differ from it in one scientific attribute only, shuffled per item by a seeded generator.
"""

from __future__ import annotations

import hashlib
import string
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT = 900, 700
#: The image box of image-like figures: x, y, w, h.
BOX = (20, 20, 860, 600)
#: The scale bar's row band (its 8-px bar starts at x = BAR_X and y = BAR_Y).
BAR_X, BAR_Y, BAR_H = 30, 648, 8
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
LETTERS = string.ascii_uppercase[:4]


def item_rng(family: str, item: int) -> np.random.Generator:
    """The generator of one pool item: fixed by family and item number alone, so an item's
    figure and truth never change whatever seed or query order the core uses."""
    digest = hashlib.sha256(f"figureqa/{family}/{int(item)}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(FONT, size)


def canvas() -> np.ndarray:
    return np.full((HEIGHT, WIDTH, 3), 255, np.uint8)


def paste_box(img: np.ndarray, content: np.ndarray) -> None:
    """Put a BOX-sized grey (H, W) or RGB content into the image box, with a thin frame."""
    x, y, w, h = BOX
    if content.ndim == 2:
        content = np.repeat(content[:, :, None], 3, axis=2)
    img[y:y + h, x:x + w] = content
    img[y - 1, x - 1:x + w + 1] = img[y + h, x - 1:x + w + 1] = 0
    img[y - 1:y + h + 1, x - 1] = img[y - 1:y + h + 1, x + w] = 0


def scale_bar(img: np.ndarray, length_px: int, label: str) -> np.ndarray:
    """Draw the black scale bar of ``length_px`` pixels with its label to its right."""
    img[BAR_Y:BAR_Y + BAR_H, BAR_X:BAR_X + int(length_px)] = 0
    pil = Image.fromarray(img)
    ImageDraw.Draw(pil).text((BAR_X + int(length_px) + 14, BAR_Y - 9), label, fill=(0, 0, 0),
                             font=font(20))
    return np.asarray(pil).copy()


def caption(img: np.ndarray, text: str, xy: tuple[int, int] = (460, 645)) -> np.ndarray:
    """A grey caption at the bottom right (a figure id, never the answer)."""
    pil = Image.fromarray(img)
    ImageDraw.Draw(pil).text(xy, text, fill=(90, 90, 90), font=font(16))
    return np.asarray(pil).copy()


def save(img: np.ndarray, work: Path, path: str) -> None:
    Image.fromarray(img).save(work / path, optimize=False, compress_level=3)


def options(rng: np.random.Generator, truth: Any, distractors: list[Any],
            render) -> dict[str, Any]:
    """Four options (the truth and three distractors), shuffled; ``render`` turns a value into
    its option text. Returns the texts by letter, the right letter and the values by letter."""
    values = [truth, *distractors[:3]]
    order = rng.permutation(4)
    by_letter = {LETTERS[i]: values[j] for i, j in enumerate(order)}
    texts = {k: render(v) for k, v in by_letter.items()}
    letter = next(k for k, v in by_letter.items() if v is truth)
    return {"options": texts, "letter": letter, "option_values": by_letter,
            "options_text": options_text(texts)}


def options_text(texts: dict[str, str]) -> str:
    """The options as the instruction lists them: ``(A) ...; (B) ...``."""
    return "; ".join(f"({k}) {v}" for k, v in texts.items())


def disc_mask(h: int, w: int, cx: np.ndarray, cy: np.ndarray, r: np.ndarray | float
              ) -> np.ndarray:
    """A boolean (h, w) mask of the union of discs (centres cx, cy; radii r)."""
    yy, xx = np.mgrid[0:h, 0:w]
    mask = np.zeros((h, w), bool)
    radii = np.broadcast_to(np.asarray(r, float), np.shape(cx))
    for x0, y0, r0 in zip(np.ravel(cx), np.ravel(cy), np.ravel(radii), strict=True):
        x1, x2 = int(max(0, x0 - r0 - 1)), int(min(w, x0 + r0 + 2))
        y1, y2 = int(max(0, y0 - r0 - 1)), int(min(h, y0 + r0 + 2))
        if x1 >= x2 or y1 >= y2:
            continue
        sub = (xx[y1:y2, x1:x2] - x0) ** 2 + (yy[y1:y2, x1:x2] - y0) ** 2 <= r0 ** 2
        mask[y1:y2, x1:x2] |= sub
    return mask


def smooth_noise(rng: np.random.Generator, h: int, w: int, sigma: float) -> np.ndarray:
    """Gaussian-filtered white noise, normalised to zero mean and unit deviation."""
    from scipy.ndimage import gaussian_filter

    field = gaussian_filter(rng.standard_normal((h, w)), sigma, mode="wrap")
    return (field - field.mean()) / (field.std() + 1e-12)


def image_figure(content: np.ndarray, bar: tuple[float, int] | None, unit: str,
                  label: str) -> np.ndarray:
    """The figure of an image-like item: ``content`` in the box, the scale bar ``bar``
    (value, length in px) when given, the figure id as caption."""
    img = canvas()
    paste_box(img, content)
    if bar is not None:
        value, px = bar
        img = scale_bar(img, px, f"{value:g} {unit}")
    return caption(img, label)


def mc_gold(p: dict[str, Any]) -> dict[str, Any]:
    """What an MC item's gold keeps of its draw: the letter and the options."""
    return {"letter": p["letter"], "options": p["options"], "options_text": p["options_text"]}
