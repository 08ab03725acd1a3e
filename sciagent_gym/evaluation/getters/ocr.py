"""Getters reading text off the final screenshot with tesseract (for dialogs, status bars, logs).

UI text is small (11-14 px) and anti-aliased, often light on dark; tesseract reads it reliably
only after preprocessing: grayscale, upscaling (Lanczos), inversion to dark-on-light, Otsu
binarisation and a white margin. Results are cached in-process by the pixels of the region and
the parameters, so many criteria on one state run tesseract once per region and a re-score of a
saved state gives the same text.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
import threading
import unicodedata
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import numpy as np

from .pixels import crop, screen_rgb
from .registry import GetterError, register

if TYPE_CHECKING:
    from ..state import FinalState

INSTALL_HINT = "install tesseract-ocr (apt-get install tesseract-ocr tesseract-ocr-eng)"
TIMEOUT = 120.0
BORDER = 10
_PSMS = frozenset({1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
_LANG = re.compile(r"[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*")
_CACHE_SIZE = 256
_cache: OrderedDict[tuple[Any, ...], str] = OrderedDict()
_lock = threading.Lock()

# OCR output uses typographic punctuation where the screen shows ASCII (and vice versa).
_PUNCT = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032`", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    }
)


def clear_ocr_cache() -> None:
    """Forget cached OCR results (tests, or a long-lived process scoring many states)."""
    with _lock:
        _cache.clear()


def normalize_ocr(text: str) -> str:
    """NFKC, ASCII quotes/dashes, casefold, whitespace runs (newlines too) -> one space."""
    text = unicodedata.normalize("NFKC", text).translate(_PUNCT)
    return " ".join(text.split()).casefold()


def _tesseract_cmd() -> str:
    """The binary pytesseract is configured with (if installed), else ``tesseract`` on PATH."""
    cmd = "tesseract"
    try:
        import pytesseract

        cmd = str(pytesseract.pytesseract.tesseract_cmd or cmd)
    except ImportError:
        pass
    found = shutil.which(cmd)
    if found is None:
        raise GetterError(f"OCR unavailable: tesseract binary {cmd!r} not found; {INSTALL_HINT}")
    return found


def _check_params(psm: Any, scale: Any, invert: Any, lang: Any) -> None:
    if isinstance(psm, bool) or not isinstance(psm, int) or psm not in _PSMS:
        raise GetterError(f"psm must be one of {sorted(_PSMS)}, got {psm!r}")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 1 <= scale <= 4:
        raise GetterError(f"scale must be a number in 1..4, got {scale!r}")
    if not (invert is True or invert is False or invert == "auto"):
        raise GetterError(f"invert must be 'auto', true or false, got {invert!r}")
    if not isinstance(lang, str) or not _LANG.fullmatch(lang):
        raise GetterError(f"lang must be tesseract language codes like 'eng', got {lang!r}")


def preprocess(rgb: np.ndarray, scale: float = 2, invert: Any = "auto") -> np.ndarray | None:
    """Region pixels -> binary dark-on-light uint8 image with a white border; None if blank.

    Otsu after upscaling turns anti-aliased strokes into crisp ones: on 144 synthetic DejaVu UI
    lines at 11-14 px, both polarities, exact-line accuracy went from 82% (scale 2, gray only) to
    100% (scale 1 with Otsu: 88%). A "^" was never read right at any setting.
    """
    from PIL import Image

    gray = Image.fromarray(np.ascontiguousarray(rgb)).convert("L")
    if scale != 1:
        size = (max(1, round(gray.width * scale)), max(1, round(gray.height * scale)))
        gray = gray.resize(size, Image.Resampling.LANCZOS)
    a = np.asarray(gray)
    if int(a.min()) == int(a.max()):
        return None  # a uniform region has no text; skip tesseract
    if invert is True or (invert == "auto" and float(np.median(a)) < 128):
        a = 255 - a
    from skimage.filters import threshold_otsu

    a = np.where(a > threshold_otsu(a), 255, 0).astype(np.uint8)
    return np.pad(a, BORDER, constant_values=255)


def _run_tesseract(img: np.ndarray, psm: int, lang: str) -> str:
    """One tesseract process, single-threaded (OpenMP threads double its time on small crops)."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG", dpi=(300, 300))
    cmd = [_tesseract_cmd(), "stdin", "stdout", "--psm", str(psm), "-l", lang]
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    try:
        proc = subprocess.run(
            cmd, input=buf.getvalue(), capture_output=True, env=env, timeout=TIMEOUT, check=False
        )
    except FileNotFoundError:
        raise GetterError(f"OCR unavailable: cannot run {cmd[0]}; {INSTALL_HINT}") from None
    except subprocess.TimeoutExpired:
        raise GetterError(f"OCR timed out after {TIMEOUT:g} s") from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        why = err[-1] if err else f"exit status {proc.returncode}"
        if "language" in " ".join(err).lower():
            why += f" (language data missing? apt-get install tesseract-ocr-{lang.split('+')[0]})"
        raise GetterError(f"OCR failed: {why}")
    text = proc.stdout.decode("utf-8", "replace")
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def ocr_region(
    rgb: np.ndarray, psm: int = 6, scale: float = 2, invert: Any = "auto", lang: str = "eng"
) -> str:
    """Cached OCR of an RGB array: the key is a digest of the pixels plus every parameter."""
    _check_params(psm, scale, invert, lang)
    rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
    digest = hashlib.blake2b(rgb.tobytes(), digest_size=20).hexdigest()
    key = (digest, rgb.shape, psm, float(scale), invert, lang)
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    img = preprocess(rgb, scale, invert)
    text = "" if img is None else _run_tesseract(img, psm, lang)
    with _lock:
        _cache[key] = text
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return text


@register("screen_text")
def screen_text(
    state: FinalState,
    region: list[int] | None = None,
    psm: int = 6,
    scale: float = 2,
    invert: Any = "auto",
    lang: str = "eng",
) -> str:
    """OCR text of the screen or of ``region`` [x, y, w, h] (clipped to the screen).

    One line per text line, blank lines dropped. ``psm`` is tesseract's page segmentation mode
    (6: one block, 7: a single line, 11: sparse text). ``invert`` "auto" makes the region
    dark-on-light when its median is dark.
    """
    part = crop(screen_rgb(state), region)
    return ocr_region(part, psm=psm, scale=scale, invert=invert, lang=lang)


@register("screen_contains")
def screen_contains(
    state: FinalState,
    text: str,
    region: list[int] | None = None,
    psm: int = 6,
    scale: float = 2,
    invert: Any = "auto",
    lang: str = "eng",
) -> bool:
    """Whether ``text`` appears in the OCR text: a substring match after :func:`normalize_ocr`.

    Normalising both sides (case, whitespace and line breaks, typographic quotes and dashes)
    absorbs the usual OCR noise without fuzzy matching, which could pass a wrong value.
    """
    if not isinstance(text, str) or not text.strip():
        raise GetterError(f"text must be a non-empty string, got {text!r}")
    seen = screen_text(state, region=region, psm=psm, scale=scale, invert=invert, lang=lang)
    return normalize_ocr(text) in normalize_ocr(seen)
