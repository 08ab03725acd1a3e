"""FITS images for the DS9 tasks, written with numpy alone, and the gold values derived from them.

A minimal FITS writer and reader (one primary HDU: 2880-byte blocks, 80-character header cards,
BITPIX -32 big-endian floats) and a gnomonic (TAN) world coordinate system given by CRVAL, CRPIX
and a CD matrix, with its own pixel <-> world functions. Pixel coordinates follow FITS and DS9:
the first pixel's centre is (1, 1); ``array[j, i]`` is image pixel (x = i + 1, y = j + 1).

Every generator takes ``(work_dir, rng, **args)``, writes its files into the task's working
directory and returns gold values computed from the data it wrote. The FITS writer and reader
are ``fits.py``, the TAN world coordinates ``wcs.py``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.ds9.fits import read_fits, write_fits
from sciagent_gym.envs.ds9.wcs import TanWCS

#: getters.py reads files and coordinates with these, from here.
__all__ = ["GENERATORS", "TanWCS", "field_wcs", "read_fits"]

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
