"""A gnomonic (TAN) world coordinate system given by CRVAL, CRPIX and a CD matrix, with its
own pixel <-> world functions (1-based FITS pixels, as DS9 shows them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np


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
