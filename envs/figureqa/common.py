"""What every FigureQA figure shares: the canvas, the image box, the scale bar, the options.

A figure is a 900x700 RGB PNG (the viewer shows it whole at 100 % on the 1280x800 screen).
Image-like figures (lattices, micrographs, cross-sections) fill :data:`BOX` and carry a black
scale bar with its label in the white strip below it, so that a reader (and the perceivers)
can turn pixels into lengths. Multiple-choice items get four options, one true and three that
differ from it in one scientific attribute only.

Pool design (issue 33: a policy trained over many items must not learn an answer that pays
without reading the figure). Every family is a pool of :data:`POOL` items, split by the core
(:func:`sciagent_gym.tasks.queries.query_split`) into train and held-out (val + test) items.
In pool order:

- :func:`balanced_slot` deals the right option's letter (and any other categorical design
  choice) so that every prefix of each split (train, val, test) holds each of the ``k`` slots
  within one of the others, and val and test together as nearly so as that allows: no
  letter is favoured in any split;
- :func:`spread` draws a family's physical parameter stratified over its range within train
  and within the held-out items (one stratum per item of the group, in a seeded random
  order, jittered within the middle half of its stratum), so each part covers the whole
  realistic range evenly and no two values lie closer than half a stratum.

The figure itself is still fixed by (family, item) alone (:func:`item_rng`); the gold is
measured on what is drawn (the design value is only what the figure is drawn from).
"""

from __future__ import annotations

import hashlib
import math
import string
from functools import lru_cache
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
#: Items per family (a query pool): ST-Bench's split leaves 34 of 80 for val and test.
POOL = 80


def item_rng(family: str, item: int) -> np.random.Generator:
    """The generator of one pool item: fixed by family and item number alone, so an item's
    figure and truth never change whatever seed or query order the core uses."""
    digest = hashlib.sha256(f"figureqa/{family}/{int(item)}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def query_id(slug: str, item: int) -> str:
    """The id of item ``item`` in the query pool of family ``slug`` (the spec's queries)."""
    return f"{slug}-{int(item):02d}"


@lru_cache(maxsize=64)
def _splits(slug: str) -> tuple[str, ...]:
    """The core's split ("train", "val" or "test") of each item of family ``slug``'s pool."""
    from sciagent_gym.sdk import query_split

    queries = tuple({"id": query_id(slug, i)} for i in range(POOL))
    return tuple(query_split(f"figureqa/{slug}", queries, i) for i in range(POOL))


@lru_cache(maxsize=64)
def _groups(slug: str) -> dict[int, tuple[str, int, int]]:
    """item -> (group, rank in the group in pool order, group size): the group is "train"
    or "heldout" (val and test)."""
    split = _splits(slug)
    out = {}
    for group in ("train", "heldout"):
        members = [i for i in range(POOL) if (split[i] == "train") == (group == "train")]
        out.update({i: (group, rank, len(members)) for rank, i in enumerate(members)})
    return out


def split_group(slug: str, item: int) -> str:
    """"train" or "heldout": the part of the pool that item ``item`` of ``slug`` is in."""
    return _groups(slug)[int(item)][0]


def _design_rng(slug: str, what: str, group: str, block: int = 0) -> np.random.Generator:
    digest = hashlib.sha256(f"figureqa-design/{slug}/{what}/{group}/{block}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


@lru_cache(maxsize=256)
def _dealt(slug: str, k: int, what: str) -> tuple[int, ...]:
    """Slots 0..k-1 for the whole pool, dealt in pool order: each item takes a slot its own
    split (train, val or test) has used least so far, so every prefix of every split holds
    each slot within one of the others; among those, one the held-out items (val and test
    together) have used least; remaining ties by a seeded draw."""
    split = _splits(slug)
    rng = _design_rng(slug, what, "deal")
    own = {name: [0] * k for name in ("train", "val", "test")}
    held = [0] * k
    out = []
    for i in range(POOL):
        mine = own[split[i]]
        allowed = [j for j in range(k) if mine[j] == min(mine)]
        if split[i] != "train":
            allowed = [j for j in allowed if held[j] == min(held[j] for j in allowed)]
        slot = int(allowed[int(rng.integers(len(allowed)))])
        mine[slot] += 1
        if split[i] != "train":
            held[slot] += 1
        out.append(slot)
    return tuple(out)


def balanced_slot(slug: str, item: int, k: int, what: str = "letter") -> int:
    """A slot in 0..k-1 (a right letter, a kind, an angle) dealt so that each split is
    balanced (:func:`_dealt`)."""
    return _dealt(slug, k, what)[int(item)]


def spread(slug: str, item: int, lo: float, hi: float, log: bool = False,
           what: str = "value") -> float:
    """A value in [lo, hi] (log-uniform strata when ``log``), stratified within the item's
    split group: one stratum per item, in a seeded random order, jittered within its middle
    half, so the group's values cover the range evenly and lie at least half a stratum
    apart."""
    group, rank, size = _groups(slug)[int(item)]
    rng = _design_rng(slug, what, group)
    stratum = int(rng.permutation(size)[rank])
    u = (stratum + 0.5 + rng.uniform(-0.25, 0.25, size)[rank]) / size
    if log:
        return float(math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo))))
    return float(lo + u * (hi - lo))


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
            render, slot: int) -> dict[str, Any]:
    """Four options: the truth at letter ``slot`` (see :func:`balanced_slot`), the three
    distractors shuffled into the other letters; ``render`` turns a value into its option text.
    Returns the texts by letter, the right letter and the values by letter."""
    others = [distractors[j] for j in rng.permutation(3)]
    values = others[:slot] + [truth] + others[slot:]
    by_letter = dict(zip(LETTERS, values, strict=True))
    texts = {k: render(v) for k, v in by_letter.items()}
    return {"options": texts, "letter": LETTERS[slot], "option_values": by_letter,
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
