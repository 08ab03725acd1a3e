"""AFM height maps for the Gwyddion tasks, and the gold values derived from them.

Every generator takes ``(work_dir, rng, **args)``, writes its ``.gwy`` files into the task's
working directory and returns gold values computed from the data it wrote. A height map is
built from parts whose sizes are known: a tilted plane (the sample mounted off-level), a scanner
bow (second-order background), terraces (one step of known height), particles (spherical caps
of known count, radius and height), a scratch (a groove), correlated random roughness, line
noise (an offset per scan line, as a drifting z piezo leaves) and white noise. Heights are in
metres and pixels square, as an AFM writes them; every seed draws the sizes anew, so no two
seeds share an input.

Gold values mimic what Gwyddion 2.62 computes: *Plane Level* subtracts the least-squares plane
but keeps the mean height; the Statistical Quantities tool gives Sq as the population RMS about
the mean and Sa as the mean absolute deviation from it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.gwyddion.gwyfmt import write_gwy

NM = 1e-9


def plane_fit(z: np.ndarray) -> np.ndarray:
    """The least-squares plane a + b x + c y through ``z`` (what Plane Level subtracts)."""
    yres, xres = z.shape
    y, x = np.mgrid[0:yres, 0:xres].astype(float)
    basis = np.stack([np.ones(z.size), x.ravel(), y.ravel()], axis=1)
    coef, *_ = np.linalg.lstsq(basis, z.ravel(), rcond=None)
    return (basis @ coef).reshape(z.shape)


def plane_level(z: np.ndarray) -> np.ndarray:
    """``z`` with its least-squares plane removed and its mean kept (Gwyddion's Plane Level)."""
    return z - plane_fit(z) + z.mean()


def poly_fit(z: np.ndarray, degree: int = 2) -> np.ndarray:
    """The least-squares polynomial with x and y degrees up to ``degree`` each."""
    yres, xres = z.shape
    y, x = np.mgrid[0:yres, 0:xres].astype(float)
    x, y = x.ravel() / xres - 0.5, y.ravel() / yres - 0.5
    basis = np.stack([x**i * y**j for i in range(degree + 1) for j in range(degree + 1)], axis=1)
    coef, *_ = np.linalg.lstsq(basis, z.ravel(), rcond=None)
    return (basis @ coef).reshape(z.shape)


def sq(z: np.ndarray) -> float:
    """RMS roughness about the mean (Gwyddion's Sq)."""
    return float(np.sqrt(np.mean((z - z.mean()) ** 2)))


def sa(z: np.ndarray) -> float:
    """Mean absolute deviation from the mean (Gwyddion's Sa)."""
    return float(np.mean(np.abs(z - z.mean())))


def grain_summary(z: np.ndarray, pixel: float, percent: float) -> dict[str, float]:
    """What Gwyddion 2.62's Grain Summary reports for the grains Mark by Threshold marks in
    ``z`` at a height threshold of ``percent`` of its range (pixels strictly above
    min + percent/100 (max - min); grains are 4-connected): ``n``, ``mean_area_nm2`` (and in
    µm², and as the bare µm² number for a wrong-magnitude answer), ``total_area_nm2``,
    ``coverage_pct`` (projected area over the scan's), ``mean_size_nm`` (the mean of each
    grain's equivalent square side) and ``areas_nm2`` (each grain's projected area, in
    Gwyddion's grain order: the order its first pixel comes in the raster, as Grain
    Distributions' raw export lists them). Checked against the program on seeds 0-2."""
    from scipy import ndimage

    mask = z > z.min() + percent / 100.0 * np.ptp(z)
    labels, count = ndimage.label(mask)
    areas = np.asarray(ndimage.sum(mask, labels, range(1, count + 1))) * pixel * pixel
    total = float(areas.sum())
    mean = total / max(count, 1)
    return {"n": int(count), "mean_area_nm2": mean / NM**2, "mean_area_um2": mean * 1e12,
            "total_area_nm2": total / NM**2, "coverage_pct": 100.0 * float(mask.mean()),
            "mean_size_nm": float(np.mean(np.sqrt(areas))) / NM if count else 0.0,
            "areas_nm2": [float(a) / NM**2 for a in areas]}


def _roughness(rng: np.random.Generator, shape: tuple[int, int], rms: float,
               corr_px: float) -> np.ndarray:
    """Gaussian random roughness with a Gaussian autocorrelation of ``corr_px`` pixels."""
    white = rng.normal(0.0, 1.0, shape)
    ky = np.fft.fftfreq(shape[0])[:, None]
    kx = np.fft.fftfreq(shape[1])[None, :]
    kernel = np.exp(-2 * (np.pi * corr_px) ** 2 * (kx**2 + ky**2))
    field = np.real(np.fft.ifft2(np.fft.fft2(white) * kernel))
    field -= field.mean()
    return field * (rms / field.std())


def _particles(rng: np.random.Generator, shape: tuple[int, int], count: int,
               radius_px: tuple[float, float], height_px: tuple[float, float],
               avoid: np.ndarray | None = None) -> tuple[np.ndarray, list[dict[str, float]]]:
    """``count`` spherical caps of random base radius and height (both in pixel units),
    apart from each other and from the edges (and from ``avoid``'s true pixels)."""
    yres, xres = shape
    y, x = np.mgrid[0:yres, 0:xres].astype(float)
    out = np.zeros(shape)
    placed: list[dict[str, float]] = []
    tries = 0
    while len(placed) < count:
        tries += 1
        if tries > 20000:
            raise RuntimeError("could not place the particles")
        r = float(rng.uniform(*radius_px))
        cx, cy = rng.uniform(r + 4, xres - r - 4), rng.uniform(r + 4, yres - r - 4)
        if any(np.hypot(cx - p["x"], cy - p["y"]) < r + p["r"] + 6 for p in placed):
            continue
        if avoid is not None and avoid[max(0, int(cy - r - 3)):int(cy + r + 4),
                                       max(0, int(cx - r - 3)):int(cx + r + 4)].any():
            continue
        h = float(rng.uniform(*height_px))
        # a spherical cap of base radius r and height h: sphere radius R = (r^2 + h^2) / 2h
        big = (r * r + h * h) / (2 * h)
        d2 = (x - cx) ** 2 + (y - cy) ** 2
        inside = d2 < r * r
        cap = np.where(inside, np.sqrt(np.maximum(big * big - d2, 0.0)) - (big - h), 0.0)
        out = np.maximum(out, cap)
        placed.append({"x": float(cx), "y": float(cy), "r": r, "h": h})
    return out, placed


def _hex_monolayer(rng: np.random.Generator, shape: tuple[int, int], a_px: float,
                   height_px: tuple[float, float]) -> tuple[np.ndarray, float]:
    """A hexagonal close-packed layer of domes (lattice constant ``a_px`` pixels, base
    radius 0.48 a, heights drawn from ``height_px``) turned by a random angle in [0, 60)
    degrees, every site jittered by 2 % of a; returns (heights in pixel units, angle)."""
    yres, xres = shape
    angle = float(rng.uniform(0.0, 60.0))
    t = np.radians(angle)
    a1 = a_px * np.array([np.cos(t), np.sin(t)])
    a2 = a_px * np.array([np.cos(t + np.pi / 3), np.sin(t + np.pi / 3)])
    y, x = np.mgrid[0:yres, 0:xres].astype(float)
    out = np.zeros(shape)
    reach = int(2 * max(xres, yres) / a_px) + 3
    r = 0.48 * a_px
    for i in range(-reach, reach + 1):
        for j in range(-reach, reach + 1):
            cx, cy = xres / 2 + i * a1[0] + j * a2[0], yres / 2 + i * a1[1] + j * a2[1]
            if not (-r <= cx <= xres + r and -r <= cy <= yres + r):
                continue
            cx, cy = cx + rng.normal(0, 0.02 * a_px), cy + rng.normal(0, 0.02 * a_px)
            h = float(rng.uniform(*height_px))
            big = (r * r + h * h) / (2 * h)
            x0, x1 = max(0, int(cx - r - 1)), min(xres, int(cx + r + 2))
            y0, y1 = max(0, int(cy - r - 1)), min(yres, int(cy + r + 2))
            if x0 >= x1 or y0 >= y1:
                continue
            d2 = (x[y0:y1, x0:x1] - cx) ** 2 + (y[y0:y1, x0:x1] - cy) ** 2
            cap = np.where(d2 < r * r, np.sqrt(np.maximum(big * big - d2, 0.0)) - (big - h), 0)
            out[y0:y1, x0:x1] = np.maximum(out[y0:y1, x0:x1], cap)
    return out, angle


def _scratch(rng: np.random.Generator, shape: tuple[int, int], depth: float,
             width_px: float) -> tuple[np.ndarray, np.ndarray]:
    """A straight groove of ``depth`` (Gaussian cross-section) across the image from the top
    edge to the bottom edge at a slant; returns (heights, its footprint)."""
    yres, xres = shape
    y, x = np.mgrid[0:yres, 0:xres].astype(float)
    x0 = rng.uniform(0.15, 0.35) * xres
    x1 = x0 + rng.uniform(-0.1, 0.1) * xres
    # distance from the line through (x0, 0) and (x1, yres)
    dx, dy = x1 - x0, float(yres)
    dist = np.abs(dy * (x - x0) - dx * y) / np.hypot(dx, dy)
    groove = -depth * np.exp(-0.5 * (dist / (width_px / 2.355)) ** 2)
    return groove, dist < 2 * width_px


def _pixel(rng: np.random.Generator, pixel_nm: list[float] | float) -> float:
    if isinstance(pixel_nm, (list, tuple)):
        return float(np.round(rng.uniform(*pixel_nm), 2))
    return float(pixel_nm)


def surface(work_dir: Path, rng: np.random.Generator, path: str = "sample.gwy",
            size: int = 256, pixel_nm: list[float] | float = (6.0, 12.0),
            tilt_nm: float = 0.0, bow_nm: float = 0.0, step_nm: list[float] | None = None,
            particles: list[int] | int = 0, particle_height_nm: list[float] = (12.0, 25.0),
            particle_radius_px: list[float] = (5.0, 9.0), roughness_nm: list[float] | None = None,
            corr_px: float = 3.0, scratch_nm: float = 0.0, row_noise_nm: float = 0.0,
            noise_nm: float = 0.1, title: str = "Height", region: list[int] | None = None,
            slope_nm_per_um: list[float] | None = None, scale: float = 1.0,
            grain_threshold: float | None = None, lattice_nm: list[float] | None = None,
            lattice_height_nm: list[float] = (8.0, 15.0), lattice_px: list[float] | None = None,
            lattice_height_frac: list[float] | None = None, grains_on: str = "levelled",
            reference: list[str] = ()) -> dict[str, Any]:
    """One height channel ``title`` in ``path``; gold sizes and statistics.

    ``tilt_nm`` is the plane's rise across the scan (in a random direction); ``bow_nm`` the
    scanner bow's depth; ``step_nm`` [lo, hi] draws one step up at a column between 35 % and
    65 % of the width; ``particles`` a count (or [lo, hi]); ``roughness_nm`` [lo, hi] the RMS
    of the random roughness; ``region`` [x, y, w, h] (pixels) adds statistics of that window
    of the plane-levelled data; ``slope_nm_per_um`` [sx, sy] adds a plane of exactly that
    rise along x and y. ``reference`` names arrays to keep host-side for content checks:
    "input", "levelled" (Plane Level of the input), "truth" (no background, no line noise),
    "row_aligned" (the input without its line noise, minus each row's median: Align Rows),
    "crop" (the input inside ``region``), "scaled" (the input times ``scale``), "untilted"
    (the input minus the ``slope_nm_per_um`` plane) and "bow_removed" (the input minus its
    least-squares polynomial of degree 2 in x and in y: Polynomial Background, degrees 2) and
    "bow_removed_crop" (that inside ``region``) and "aligned_levelled" (Align Rows by
    medians, then Plane Level: "row_aligned" plane-levelled). With ``bow_nm`` and ``region``, gold
    ``region`` also holds ``flat_sa_nm`` and ``flat_sq_nm``: the window's Sa and Sq after the
    degree-2 polynomial removal.
    ``lattice_nm`` [lo, hi] draws a hexagonal close-packed monolayer of spheres (domes of
    ``lattice_height_nm``) with that lattice constant, turned by a random angle and with 2 %
    positional disorder: gold ``lattice_nm`` (rounded to 0.1 nm), ``lattice_angle_deg`` and
    ``lattice_rows_nm`` (the row spacing a·√3/2), ``lattice_um`` and ``lattice_px`` (for
    wrong answers). With ``lattice_px`` [lo, hi], the lattice constant is drawn log-uniformly
    from ``lattice_nm`` (spheres of any size in that range) and the pixel size follows it, so
    that one period spans a drawn ``lattice_px`` pixels (``pixel_nm`` is then unused); with
    ``lattice_height_frac`` [lo, hi] the domes' heights are that fraction of a (bigger spheres
    stand taller) instead of ``lattice_height_nm``.
    ``grain_threshold`` (percent) adds ``grains``: the Grain Summary of the grains Mark by
    Threshold marks at that height threshold on the plane-levelled data (see
    :func:`grain_summary`), and ``grains_default`` (at Gwyddion's default 50 %) and
    ``grains_unlevelled`` (that threshold on the input as it is) for wrong workflows; with
    ``grains_on`` "aligned_levelled" they are measured on that surface instead of on the
    plane-levelled input (and ``grains_unaligned`` on the plane-levelled input is added).
    """
    shape = (size, size)
    a_drawn = None
    if lattice_nm is not None and lattice_px is not None:
        a_drawn = float(np.round(np.exp(rng.uniform(np.log(lattice_nm[0]),
                                                    np.log(lattice_nm[1]))), 1))
        pixel = float(np.round(a_drawn / rng.uniform(*lattice_px), 2)) * NM
    else:
        pixel = _pixel(rng, pixel_nm) * NM
    gold: dict[str, Any] = {"pixel_nm": pixel / NM, "size": size,
                            "scan_um": round(size * pixel * 1e6, 4)}
    truth = np.zeros(shape)
    if roughness_nm is not None:
        rms = float(rng.uniform(*roughness_nm)) * NM
        truth += _roughness(rng, shape, rms, corr_px)
    footprint = None
    if scratch_nm:
        groove, footprint = _scratch(rng, shape, scratch_nm * NM * rng.uniform(0.8, 1.2), 5.0)
        truth += groove
    if step_nm is not None:
        height = float(np.round(rng.uniform(*step_nm), 2)) * NM
        col = int(rng.uniform(0.35, 0.65) * size)
        truth[:, col:] += height
        gold["step_nm"] = height / NM
        gold["step_col"] = col
    if lattice_nm is not None:
        a_nm = a_drawn if a_drawn is not None else float(np.round(rng.uniform(*lattice_nm), 1))
        heights = lattice_height_nm if lattice_height_frac is None else tuple(
            f * a_nm for f in lattice_height_frac)
        dome, angle = _hex_monolayer(rng, shape, a_nm * NM / pixel, tuple(
            h * NM / pixel for h in heights))
        truth += dome * pixel
        gold.update({"lattice_nm": a_nm, "lattice_angle_deg": angle,
                     "lattice_rows_nm": a_nm * np.sqrt(3) / 2, "lattice_um": a_nm / 1000,
                     "lattice_px": a_nm * NM / pixel})
    count = particles if isinstance(particles, int) else int(rng.integers(particles[0],
                                                                        particles[1] + 1))
    if count:
        caps, placed = _particles(rng, shape, count, tuple(particle_radius_px),
                                  tuple(h * NM / pixel for h in particle_height_nm), footprint)
        truth += caps * pixel
        gold["n_particles"] = count
        gold["particles"] = [{"x": p["x"], "y": p["y"], "r_px": p["r"],
                              "h_nm": p["h"] * pixel / NM} for p in placed]
        gold["n_particles_plus_one"] = count + 1
        gold["n_particles_minus_one"] = count - 1
    truth += rng.normal(0.0, noise_nm * NM, shape)
    y, x = np.mgrid[0:size, 0:size].astype(float) / size
    background = np.zeros(shape)
    if tilt_nm:
        angle = rng.uniform(0, 2 * np.pi)
        rise = tilt_nm * NM * rng.uniform(0.8, 1.2)
        background += rise * (np.cos(angle) * x + np.sin(angle) * y)
    if bow_nm:
        depth = bow_nm * NM * rng.uniform(0.8, 1.2)
        background += depth * 4 * ((x - 0.5) ** 2 + (y - 0.5) ** 2)
    given = np.zeros(shape)
    if slope_nm_per_um is not None:
        # x and y in micrometres at pixel centres, as Gwyddion's Arithmetic sees them
        xs, ys = (x * size + 0.5) * pixel * 1e6, (y * size + 0.5) * pixel * 1e6
        given = (slope_nm_per_um[0] * xs + slope_nm_per_um[1] * ys) * NM
        background += given
    offsets = np.zeros(size)
    if row_noise_nm:
        offsets = rng.normal(0.0, row_noise_nm * NM, size)
        gold["row_noise_nm"] = float(offsets.std() / NM)
    z = truth + background + offsets[:, None] + float(rng.uniform(-50, 50)) * NM
    write_gwy(work_dir / path, [(title, z)], pixel)

    levelled = plane_level(z)
    gold.update({
        "sq_nm": sq(levelled) / NM, "sa_nm": sa(levelled) / NM,
        "sq_raw_nm": sq(z) / NM, "sa_raw_nm": sa(z) / NM,
        "range_nm": float(np.ptp(z) / NM), "mean_nm": float(z.mean() / NM),
    })
    if scale != 1.0:  # Sq of the recalibrated heights as they are (no levelling)
        gold["sq_scaled_nm"] = sq(z * scale) / NM
    if region is not None:
        rx, ry, rw, rh = region
        window = levelled[ry:ry + rh, rx:rx + rw]
        raw = z[ry:ry + rh, rx:rx + rw]
        gold["region"] = {"sq_nm": sq(window) / NM, "sa_nm": sa(window) / NM,
                          "sa_raw_nm": sa(raw) / NM}
        if bow_nm:
            # the window of the bow-removed scan (Polynomial Background, degrees 2)
            flat = (z - poly_fit(z, 2))[ry:ry + rh, rx:rx + rw]
            gold["region"].update({"flat_sa_nm": sa(flat) / NM, "flat_sq_nm": sq(flat) / NM})
    steady = truth + background
    arrays = {"input": lambda: z, "levelled": lambda: levelled, "truth": lambda: truth,
              "row_aligned": lambda: steady - np.median(steady, axis=1, keepdims=True),
              "crop": lambda: z[region[1]:region[1] + region[3], region[0]:region[0] + region[2]],
              "scaled": lambda: z * scale, "untilted": lambda: z - given,
              "bow_removed": lambda: z - poly_fit(z, 2),
              "bow_removed_crop": lambda: (z - poly_fit(z, 2))[
                  region[1]:region[1] + region[3], region[0]:region[0] + region[2]],
              "aligned_levelled": lambda: plane_level(
                  steady - np.median(steady, axis=1, keepdims=True))}
    for name in reference:
        gold[name] = arrays[name]()
    if grain_threshold is not None:
        marked = levelled
        if grains_on == "aligned_levelled":
            marked = arrays["aligned_levelled"]()
            gold["grains_unaligned"] = grain_summary(levelled, pixel, grain_threshold)
        elif grains_on != "levelled":
            raise ValueError(f"grains_on must be levelled or aligned_levelled, not {grains_on!r}")
        gold["grains"] = grain_summary(marked, pixel, grain_threshold)
        gold["grains_default"] = grain_summary(marked, pixel, 50.0)
        gold["grains_unlevelled"] = grain_summary(z, pixel, grain_threshold)
    if region is not None:
        gold["crop_width_nm"] = region[2] * pixel / NM
    if "step_nm" in gold:
        gold["step_um"] = gold["step_nm"] / 1000
    return gold


GENERATORS = {"surface": surface}
