"""FITS images for the DS9 tasks, written with numpy alone, and the gold values derived from them.

A minimal FITS writer and reader (one primary HDU: 2880-byte blocks, 80-character header cards,
BITPIX -32 big-endian floats) and a gnomonic (TAN) world coordinate system given by CRVAL, CRPIX
and a CD matrix, with its own pixel <-> world functions. Pixel coordinates follow FITS and DS9:
the first pixel's centre is (1, 1); ``array[j, i]`` is image pixel (x = i + 1, y = j + 1).

Every generator takes ``(work_dir, rng, **args)``, writes its files into the task's working
directory and returns gold values computed from the data it wrote.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

BLOCK = 2880
CARD = 80

# One sky field (near the COSMOS field centre): every variant uses this projection centre, so
# that targets can be named by RA/Dec in the instruction.
FIELD_RA, FIELD_DEC = 150.1, 2.2
SHAPE = (400, 400)  # (ny, nx)
PIXEL_ARCSEC = 0.5
PSF_SIGMA = 1.6
BACKGROUND = 100.0
NOISE = 4.0
# Where DS9, as the adapter launches it (-geometry +0+0, a 1000x480 canvas, zoom 1, the image
# centred), draws image pixel (x, y) on the screen: (SCREEN_ORIGIN[0] + x, SCREEN_ORIGIN[1] - y),
# once the pointer has been over the image (the info panel then grows by one pixel row). Gold
# "screen_x"/"screen_y" say where a source is, for GUI oracles that point at it as an agent
# who sees it would; they are positions, never answers.
SCREEN_ORIGIN = (300, 666)


# --- FITS ----------------------------------------------------------------------------------


def _card(key: str, value: Any = None, comment: str = "") -> str:
    """One 80-character header card (fixed format for numbers, logicals and strings)."""
    if key in ("END", "COMMENT", "HISTORY", ""):
        return f"{key:<8}{value or ''}"[:CARD].ljust(CARD)
    if isinstance(value, bool):
        text = f"{'T' if value else 'F':>20}"
    elif isinstance(value, (int, np.integer)):
        text = f"{int(value):>20d}"
    elif isinstance(value, (float, np.floating)):
        text = f"{float(value):>20.12G}"
        if "." not in text and "E" not in text:
            text = f"{float(value):>20.1f}"
    else:
        quoted = "'" + str(value).replace("'", "''").ljust(8) + "'"
        text = f"{quoted:<20}"
    card = f"{key:<8}= {text}"
    if comment:
        card += f" / {comment}"
    if len(card) > CARD:
        raise ValueError(f"FITS card {key} is longer than 80 characters")
    return card.ljust(CARD)


def fits_bytes(data: np.ndarray, header: list[tuple] | None = None) -> bytes:
    """A one-HDU FITS file: a 2-D float image (BITPIX -32) and extra ``(key, value[,
    comment])`` cards."""
    data = np.asarray(data, dtype=">f4")
    if data.ndim != 2:
        raise ValueError("only 2-D images")
    ny, nx = data.shape
    cards = [_card("SIMPLE", True, "conforms to FITS standard"),
             _card("BITPIX", -32, "32-bit IEEE floats"), _card("NAXIS", 2),
             _card("NAXIS1", nx), _card("NAXIS2", ny)]
    cards += [_card(*c) for c in (header or [])]
    cards.append(_card("END"))
    head = "".join(cards).encode("ascii")
    head += b" " * (-len(head) % BLOCK)
    body = data.tobytes()
    body += b"\0" * (-len(body) % BLOCK)
    return head + body


def write_fits(path: Path, data: np.ndarray, header: list[tuple] | None = None) -> None:
    Path(path).write_bytes(fits_bytes(data, header))


def _parse_value(raw: str) -> Any:
    raw = raw.strip()
    if raw.startswith("'"):
        end, i = None, 1
        while i < len(raw):
            if raw[i] == "'":
                if i + 1 < len(raw) and raw[i + 1] == "'":
                    i += 2
                    continue
                end = i
                break
            i += 1
        if end is None:
            raise ValueError(f"unterminated string {raw!r}")
        return raw[1:end].replace("''", "'").rstrip()
    value = raw.split("/", 1)[0].strip()
    if value in ("T", "F"):
        return value == "T"
    if value == "":
        return None
    try:
        return int(value)
    except ValueError:
        return float(value.replace("D", "E"))


def read_fits(data: bytes) -> tuple[dict[str, Any], np.ndarray | None]:
    """The primary HDU of a FITS file: (header dict, image array or None). Raises ValueError
    for anything that is not a readable FITS image."""
    if not data.startswith(b"SIMPLE  ="):
        raise ValueError("not a FITS file (no SIMPLE card)")
    header: dict[str, Any] = {}
    pos = 0
    while True:
        if pos + CARD > len(data):
            raise ValueError("truncated FITS header (no END card)")
        card = data[pos:pos + CARD].decode("ascii", errors="replace")
        pos += CARD
        key = card[:8].strip()
        if key == "END":
            break
        if card[8:10] == "= " and key:
            header[key] = _parse_value(card[10:])
    pos += -pos % BLOCK
    naxis = int(header.get("NAXIS", 0))
    if naxis == 0:
        return header, None
    shape = [int(header[f"NAXIS{i}"]) for i in range(naxis, 0, -1)]
    dtypes = {8: ">u1", 16: ">i2", 32: ">i4", 64: ">i8", -32: ">f4", -64: ">f8"}
    bitpix = int(header["BITPIX"])
    if bitpix not in dtypes:
        raise ValueError(f"unsupported BITPIX {bitpix}")
    count = int(np.prod(shape))
    nbytes = count * abs(bitpix) // 8
    if pos + nbytes > len(data):
        raise ValueError("truncated FITS data")
    arr = np.frombuffer(data, dtypes[bitpix], count, pos).reshape(shape).astype(float)
    arr = arr * float(header.get("BSCALE", 1.0)) + float(header.get("BZERO", 0.0))
    while arr.ndim > 2 and arr.shape[0] == 1:
        arr = arr[0]
    return header, arr


# --- TAN world coordinates ------------------------------------------------------------------


@dataclass(frozen=True)
class TanWCS:
    """A gnomonic projection: reference pixel (1-based), reference sky position (deg) and the
    CD matrix (deg per pixel); RA increases to the left when CD1_1 < 0."""

    crpix1: float
    crpix2: float
    crval1: float
    crval2: float
    cd: tuple[tuple[float, float], tuple[float, float]]

    @classmethod
    def from_header(cls, h: dict[str, Any]) -> TanWCS:
        for key in ("CTYPE1", "CTYPE2"):
            if "TAN" not in str(h.get(key, "")):
                raise ValueError(f"{key} is {h.get(key)!r}, not a TAN projection")
        if "CD1_1" in h:
            cd = ((float(h["CD1_1"]), float(h.get("CD1_2", 0.0))),
                  (float(h.get("CD2_1", 0.0)), float(h["CD2_2"])))
        else:
            cd = ((float(h["CDELT1"]), 0.0), (0.0, float(h["CDELT2"])))
        return cls(float(h["CRPIX1"]), float(h["CRPIX2"]), float(h["CRVAL1"]),
                   float(h["CRVAL2"]), cd)

    def header(self) -> list[tuple]:
        return [("CTYPE1", "RA---TAN"), ("CTYPE2", "DEC--TAN"), ("RADESYS", "FK5"),
                ("EQUINOX", 2000.0), ("CRPIX1", self.crpix1), ("CRPIX2", self.crpix2),
                ("CRVAL1", self.crval1), ("CRVAL2", self.crval2),
                ("CD1_1", self.cd[0][0]), ("CD1_2", self.cd[0][1]),
                ("CD2_1", self.cd[1][0]), ("CD2_2", self.cd[1][1]),
                ("CUNIT1", "deg"), ("CUNIT2", "deg")]

    @property
    def pixel_scale_arcsec(self) -> float:
        """Mean pixel size in arcsec (square root of |det CD|)."""
        det = self.cd[0][0] * self.cd[1][1] - self.cd[0][1] * self.cd[1][0]
        return math.sqrt(abs(det)) * 3600.0

    def pix2world(self, x, y):
        """Image pixel (1-based) -> (RA, Dec) in degrees; works on arrays."""
        dx = np.asarray(x, float) - self.crpix1
        dy = np.asarray(y, float) - self.crpix2
        xi = np.radians(self.cd[0][0] * dx + self.cd[0][1] * dy)
        eta = np.radians(self.cd[1][0] * dx + self.cd[1][1] * dy)
        ra0, dec0 = math.radians(self.crval1), math.radians(self.crval2)
        denom = math.cos(dec0) - eta * math.sin(dec0)
        ra = ra0 + np.arctan2(xi, denom)
        dec = np.arctan2((eta * math.cos(dec0) + math.sin(dec0)) * np.cos(ra - ra0), denom)
        return np.degrees(ra) % 360.0, np.degrees(dec)

    def world2pix(self, ra, dec):
        """(RA, Dec) in degrees -> image pixel (1-based); works on arrays."""
        ra = np.radians(np.asarray(ra, float))
        dec = np.radians(np.asarray(dec, float))
        ra0, dec0 = math.radians(self.crval1), math.radians(self.crval2)
        cosc = math.sin(dec0) * np.sin(dec) + math.cos(dec0) * np.cos(dec) * np.cos(ra - ra0)
        xi = np.degrees(np.cos(dec) * np.sin(ra - ra0) / cosc)
        eta = np.degrees((math.cos(dec0) * np.sin(dec)
                          - math.sin(dec0) * np.cos(dec) * np.cos(ra - ra0)) / cosc)
        (a, b), (c, d) = self.cd
        det = a * d - b * c
        dx = (d * xi - b * eta) / det
        dy = (-c * xi + a * eta) / det
        return dx + self.crpix1, dy + self.crpix2


def field_wcs(rotation_deg: float = 0.0) -> TanWCS:
    s = PIXEL_ARCSEC / 3600.0
    t = math.radians(rotation_deg)
    cd = ((-s * math.cos(t), s * math.sin(t)), (s * math.sin(t), s * math.cos(t)))
    return TanWCS((SHAPE[1] + 1) / 2, (SHAPE[0] + 1) / 2, FIELD_RA, FIELD_DEC, cd)


# --- the field ------------------------------------------------------------------------------


def _gauss(shape, x, y, amp, sigma) -> np.ndarray:
    yy, xx = np.mgrid[1:shape[0] + 1, 1:shape[1] + 1]
    return amp * np.exp(-((xx - x) ** 2 + (yy - y) ** 2) / (2 * sigma ** 2))


def _peak_near(img: np.ndarray, x: float, y: float, r: int = 2) -> tuple[float, int, int]:
    """(value, x, y) of the brightest pixel within ``r`` pixels of (x, y), 1-based."""
    i0, j0 = int(round(x)) - 1, int(round(y)) - 1
    sub = img[max(0, j0 - r):j0 + r + 1, max(0, i0 - r):i0 + r + 1]
    j, i = np.unravel_index(int(np.argmax(sub)), sub.shape)
    return float(sub[j, i]), int(i + max(0, i0 - r) + 1), int(j + max(0, j0 - r) + 1)


def field(work_dir: Path, rng: np.random.Generator, path: str = "field.fits",
          target: dict | None = None, n_stars: int | list[int] = 12,
          threshold: float | None = None, n_above: list[int] | None = None,
          galaxy: dict | None = None, rank: int = 1, gain: list[float] | None = None,
          keyword: str | None = None, reference: bool = False) -> dict[str, Any]:
    """A star field with a galaxy: Gaussian stars of known position and amplitude on a flat
    background with Gaussian noise, a TAN WCS and an observing header.

    ``target`` ({"ra", "dec"}) puts a medium-bright star at that sky position; ``galaxy``
    ({"ra", "dec"}) puts the galaxy there (else it is placed at random). With ``threshold``
    (a pixel value), no star's peak pixel lies within 12% of it and ``n_above`` counts the
    stars whose peak pixel exceeds it; ``n_above`` [lo, hi] with it draws how many stars lie
    above the threshold (a whole number in that range) and ``n_stars`` [lo, hi] how many lie
    below it, so that the count is the data's, spread over a wide range. ``gain`` [lo, hi]
    scales every star's flux by one factor drawn log-uniformly from that range (exposures of
    different length: the same field gives peaks of different size). With ``reference``,
    gold "image" is the pixel array (FITS row order), which the task keeps host-side to
    judge exported pictures by content.
    """
    wcs = field_wcs()
    ny, nx = SHAPE
    img = np.full(SHAPE, BACKGROUND) + rng.normal(0.0, NOISE, SHAPE)
    taken: list[tuple[float, float]] = []

    def free(x: float, y: float, gap: float = 18.0) -> bool:
        return all((x - a) ** 2 + (y - b) ** 2 > gap ** 2 for a, b in taken)

    def spot(margin: float = 25.0) -> tuple[float, float]:
        for _ in range(1000):
            x, y = rng.uniform(margin, nx - margin), rng.uniform(margin, ny - margin)
            if free(x, y):
                return float(x), float(y)
        raise RuntimeError("no room for another source")

    # the galaxy: an elongated exponential disk, fainter at its peak than the brightest stars
    if galaxy:
        gx, gy = (float(v) for v in wcs.world2pix(galaxy["ra"], galaxy["dec"]))
    else:
        gx, gy = spot(60.0)
    taken.append((gx, gy))
    g_pa = float(rng.uniform(0, 180))
    g_amp, g_scale, g_q = float(rng.uniform(300, 400)), 7.0, 0.45
    yy, xx = np.mgrid[1:ny + 1, 1:nx + 1]
    c, s = math.cos(math.radians(g_pa)), math.sin(math.radians(g_pa))
    u = (xx - gx) * c + (yy - gy) * s
    v = (-(xx - gx) * s + (yy - gy) * c) / g_q
    img += g_amp * np.exp(-np.hypot(u, v) / g_scale)

    if n_above is not None:
        if threshold is None:
            raise ValueError("n_above needs a threshold")
        return _count_field(work_dir, rng, path, wcs, img, taken, spot, gx, gy, g_pa,
                            float(threshold), n_above, n_stars)
    if not isinstance(n_stars, int):
        n_stars = int(rng.integers(n_stars[0], n_stars[1] + 1))
    stars = []
    if target:
        tx, ty = (float(v) for v in wcs.world2pix(target["ra"], target["dec"]))
        stars.append({"x": tx, "y": ty, "amp": float(rng.uniform(1200, 1600)), "target": True})
        taken.append((tx, ty))
    while len(stars) < n_stars:
        x, y = spot()
        taken.append((x, y))
        stars.append({"x": x, "y": y, "amp": float(np.exp(rng.uniform(np.log(150),
                                                                       np.log(3000)))),
                      "target": False})
    # one clearly brightest star, 1.5x the next one
    order = sorted(range(len(stars)), key=lambda k: -stars[k]["amp"])
    second = stars[order[1]]["amp"] if len(stars) > 1 else 1000.0
    bright = [k for k in order if not stars[k]["target"]][0]
    stars[bright]["amp"] = max(stars[bright]["amp"], 1.5 * second, 4000.0)
    if threshold is not None:
        for k, st in enumerate(stars):
            if k == bright:
                continue
            while abs(BACKGROUND + st["amp"] - threshold) < 0.12 * threshold:
                st["amp"] = float(np.exp(rng.uniform(np.log(150), np.log(3000))))
        faint = [st for st in stars if BACKGROUND + st["amp"] < threshold]
        spare = [s for k, s in enumerate(stars) if not s["target"] and k != bright
                 and BACKGROUND + s["amp"] >= threshold]
        for st in spare[:max(0, 2 - len(faint))]:
            st["amp"] = 0.5 * (threshold - BACKGROUND)  # at least two stars below it
    if gain is not None:
        factor = float(np.exp(rng.uniform(np.log(gain[0]), np.log(gain[1]))))
        for st in stars:
            st["amp"] *= factor
    return _finish(work_dir, rng, path, wcs, img, stars, gx, gy, g_pa, threshold, rank,
                   keyword, reference, target)


def _count_field(work_dir: Path, rng: np.random.Generator, path: str, wcs: TanWCS,
                 img: np.ndarray, taken: list, spot, gx: float, gy: float, g_pa: float,
                 threshold: float, n_above: list[int], n_below: int | list[int]
                 ) -> dict[str, Any]:
    """The field of :func:`field` for counting: a drawn number of stars whose peak clears
    ``threshold`` by at least 12 % (log-uniform up to six times it, the brightest at least
    1.5 times the next) and a drawn number at least 12 % below it (down to 150 ADU above the
    background)."""
    above = int(rng.integers(n_above[0], n_above[1] + 1))
    below = n_below if isinstance(n_below, int) else int(rng.integers(n_below[0],
                                                                      n_below[1] + 1))
    lo_up, hi_up = 1.12 * threshold - BACKGROUND, 6.0 * threshold
    lo_dn, hi_dn = 150.0, 0.88 * threshold - BACKGROUND
    amps = [float(np.exp(rng.uniform(np.log(lo_up), np.log(hi_up)))) for _ in range(above)]
    amps += [float(np.exp(rng.uniform(np.log(lo_dn), np.log(hi_dn)))) for _ in range(below)]
    stars = []
    for amp in amps:
        x, y = spot()
        taken.append((x, y))
        stars.append({"x": x, "y": y, "amp": amp, "target": False})
    order = sorted(range(len(stars)), key=lambda k: -stars[k]["amp"])
    stars[order[0]]["amp"] = max(stars[order[0]]["amp"], 1.5 * stars[order[1]]["amp"])
    return _finish(work_dir, rng, path, wcs, img, stars, gx, gy, g_pa, threshold, 1, None,
                   False, None)


def _finish(work_dir: Path, rng: np.random.Generator, path: str, wcs: TanWCS, img: np.ndarray,
            stars: list[dict], gx: float, gy: float, g_pa: float, threshold: float | None,
            rank: int, keyword: str | None, reference: bool, target: dict | None
            ) -> dict[str, Any]:
    """Add the stars to ``img``, write the FITS file with its header and derive the gold."""
    ny, nx = SHAPE
    for st in stars:
        img += _gauss(SHAPE, st["x"], st["y"], st["amp"], PSF_SIGMA)

    img = img.astype(np.float32)
    header_values = {"OBJECT": "COSMOS-F" + str(int(rng.integers(10, 99))),
                     "TELESCOP": "SciAgent 1.2m", "INSTRUME": "SAC-CCD",
                     "FILTER": str(rng.choice(["g", "r", "i", "z"])),
                     "EXPTIME": float(rng.choice([30, 60, 90, 120, 180, 240, 300, 600])),
                     "AIRMASS": round(float(rng.uniform(1.02, 1.9)), 3),
                     "GAIN": round(float(rng.uniform(2.1, 3.4)), 2),
                     "RDNOISE": round(float(rng.uniform(3.0, 9.0)), 1),
                     "DATE-OBS": f"2024-{int(rng.integers(1, 13)):02d}-"
                                 f"{int(rng.integers(1, 29)):02d}T0{int(rng.integers(1, 6))}:"
                                 f"{int(rng.integers(10, 60))}:{int(rng.integers(10, 60))}",
                     "BUNIT": "ADU"}
    header = [("BSCALE", 1.0), ("BZERO", 0.0), *header_values.items(), *wcs.header()]
    write_fits(work_dir / path, img, header)

    out_stars = []
    for st in stars:
        peak, px, py = _peak_near(img, st["x"], st["y"])
        ra, dec = wcs.pix2world(st["x"], st["y"])
        out_stars.append({"x": st["x"], "y": st["y"], "ra": float(ra), "dec": float(dec),
                          "amp": st["amp"], "peak": peak, "peak_x": px, "peak_y": py,
                          "screen_x": SCREEN_ORIGIN[0] + px, "screen_y": SCREEN_ORIGIN[1] - py,
                          "target": st["target"]})
    by_peak = sorted(out_stars, key=lambda s: -s["peak"])
    g_peak, g_px, g_py = _peak_near(img, gx, gy)
    g_ra, g_dec = wcs.pix2world(gx, gy)
    gold: dict[str, Any] = {
        "path": path, "nx": nx, "ny": ny, "pixel_arcsec": PIXEL_ARCSEC,
        "crval1": wcs.crval1, "crval2": wcs.crval2, "crpix1": wcs.crpix1, "crpix2": wcs.crpix2,
        "n_stars": len(stars), "stars": out_stars,
        "bright": by_peak[0], "second": by_peak[1], "faintest": by_peak[-1],
        "galaxy": {"x": gx, "y": gy, "ra": float(g_ra), "dec": float(g_dec), "peak": g_peak,
                   "peak_x": g_px, "peak_y": g_py, "pa": g_pa,
                   "screen_x": SCREEN_ORIGIN[0] + g_px, "screen_y": SCREEN_ORIGIN[1] - g_py,
                   "x_shifted": gx + 3.0},  # a crop 3 pixels off, for a negative
        "max": float(img.max()), "min": float(img.min()), "median": float(np.median(img)),
        "centre_value": float(img[ny // 2 - 1, nx // 2 - 1]),
        "header": header_values,
    }
    if target:
        tgt = next(s for s in out_stars if s["target"])
        gold["target"] = tgt
        others = [s for s in out_stars if not s["target"]]
        gold["nearest_other"] = min(others, key=lambda s: (s["x"] - tgt["x"]) ** 2
                                    + (s["y"] - tgt["y"]) ** 2)
    gold["ranked"] = by_peak[rank - 1]
    gold["other_rank"] = by_peak[1] if rank == 1 else by_peak[0]
    if keyword is not None:
        gold["keyword_value"] = header_values[keyword]
        gold["other_keyword_value"] = header_values["EXPTIME" if keyword != "EXPTIME"
                                                    else "AIRMASS"]
    if threshold is not None:
        gold["threshold"] = float(threshold)
        gold["n_above"] = sum(s["peak"] > threshold for s in out_stars)
        gold["n_above_with_galaxy"] = gold["n_above"] + int(g_peak > threshold)
        gold["n_above_background"] = sum(s["peak"] - BACKGROUND > threshold
                                         for s in out_stars)
        # wrong answers of the right form for negatives (specs cannot do arithmetic)
        gold["n_above_more"] = gold["n_above"] + 1
        gold["n_above_fewer"] = gold["n_above"] - 1
    if reference:
        gold["image"] = img
    return gold


GENERATORS = {"field": field}
