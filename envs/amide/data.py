"""Synthetic head volumes with lesions for the AMIDE tasks, and the gold values derived from them.

Every generator takes ``(work_dir, rng, **args)``, writes its input into the task's working
directory and returns gold values computed from what it wrote. A volume is a head-like MR image:
scalp, a dark skull, a brain with a brighter cortical rim, two dark ventricles, and lesions
(spheres or axis-aligned ellipsoids of known semi-axes, hence known volumes in mm^3, and known
centres) that enhance above the brain, plus Gaussian noise. Voxels are 2 mm cubes on a fixed
96 x 112 x 80 grid (192 x 224 x 160 mm), so the GUI's canvases have one fixed layout.

Positions are in AMIDE's own world frame, the one its "view center" readout and its ROI
dialogs show (measured on AMIDE 1.0.6, which reads NIfTI through its built-in (X)MedCon
library): AMIDE centres an imported NIfTI volume on the origin whatever its affine's
translation, with x growing towards voxel index 0 of the first axis, y along the second axis
and z towards index 0 of the third. For voxel (i, j, k) of the NIfTI array::

    x = N0 v / 2 - (i + 1/2) v,   y = (j + 1/2) v - N1 v / 2,   z = N2 v / 2 - (k + 1/2) v

The NIfTI files carry a diagonal affine centred on the volume, so their own (RAS) world frame
is AMIDE's with x and z negated.

The same volume can be written as an AMIDE study (a flat ``.xif`` file: raw data and XML parts,
the layout AMIDE's own "Save Study As" writes) for the tasks that start with it open.
Gold values never enter the sandbox.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

SHAPE = (96, 112, 80)
VOXEL = 2.0
#: Mean intensities of the tissues (arbitrary MR units).
SCALP, SKULL, BRAIN, CORTEX, CSF, AIR = 300.0, 80.0, 700.0, 850.0, 250.0, 0.0


def world_axes(shape: tuple[int, int, int] = SHAPE, voxel: float = VOXEL
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """AMIDE world coordinates (mm) of the voxel centres along each NIfTI axis."""
    n0, n1, n2 = shape
    x = n0 * voxel / 2 - (np.arange(n0) + 0.5) * voxel
    y = (np.arange(n1) + 0.5) * voxel - n1 * voxel / 2
    z = n2 * voxel / 2 - (np.arange(n2) + 0.5) * voxel
    return x, y, z


def _grid() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x, y, z = world_axes()
    return np.meshgrid(x, y, z, indexing="ij")


def _ellipsoid(X: np.ndarray, Y: np.ndarray, Z: np.ndarray, centre: tuple[float, float, float],
               axes: tuple[float, float, float]) -> np.ndarray:
    return (((X - centre[0]) / axes[0]) ** 2 + ((Y - centre[1]) / axes[1]) ** 2
            + ((Z - centre[2]) / axes[2]) ** 2) <= 1.0


def _rho2(X: np.ndarray, Y: np.ndarray, Z: np.ndarray, centre: tuple[float, float, float],
          axes: tuple[float, float, float]) -> np.ndarray:
    """The squared normalised radius of points relative to an axis-aligned ellipsoid."""
    return (((X - centre[0]) / axes[0]) ** 2 + ((Y - centre[1]) / axes[1]) ** 2
            + ((Z - centre[2]) / axes[2]) ** 2)


def _snap(v: float) -> float:
    """The nearest voxel-centre coordinate (odd multiples of 1 mm on the 2 mm grid)."""
    return float(2 * math.floor(v / 2) + 1)


#: Where the reference ROI of normal brain may sit (a 16 mm sphere): lesions keep clear of all.
REFERENCES = ((-16.0, -40.0, -20.0), (16.0, 40.0, -20.0), (-16.0, 40.0, -20.0),
              (16.0, -40.0, -20.0))


def _place_lesions(rng: np.random.Generator, count: int, radius: tuple[float, float],
                   elongation: float, min_abs_z: float = 0.0,
                   radii: list[list[float]] | None = None,
                   min_abs_x: float = 0.0) -> list[dict[str, Any]]:
    """``count`` lesions inside the brain, clear of the ventricles, of the reference spheres
    and of each other; with ``min_abs_z`` the first lesion stays off the z = 0 slice by that
    margin beyond its own extent."""
    out: list[dict[str, Any]] = []
    tries = 0
    while len(out) < count:
        tries += 1
        if tries > 5000:
            raise RuntimeError("could not place the lesions")
        r = float(rng.uniform(*(radii[len(out)] if radii else radius)))
        axes = [r, r, r]
        if elongation > 1.0:
            axis = int(rng.integers(0, 3))
            axes[axis] = r * float(rng.uniform(1.2, elongation))
        c = (_snap(rng.uniform(-44, 44)), _snap(rng.uniform(-56, 56)), _snap(rng.uniform(-30, 30)))
        # inside the brain with a margin (the brain ellipsoid has semi-axes 62, 78, 54 mm)
        reach = max(axes) + 6
        if (abs(c[0]) + reach) / 62 > 1 or (abs(c[1]) + reach) / 78 > 1 \
                or (abs(c[2]) + reach) / 54 > 1:
            continue
        if ((c[0] / 62) ** 2 + (c[1] / 78) ** 2 + (c[2] / 54) ** 2) ** 0.5 \
                + reach / 54 > 1:
            continue
        # away from the ventricles (near the midline, |x| < 16, |y| < 30, |z| < 16)
        if abs(c[0]) < 16 + reach and abs(c[1]) < 30 + reach and abs(c[2]) < 16 + reach:
            continue
        if any(math.dist(c, o["centre"]) < max(axes) + max(o["axes"]) + 8 for o in out):
            continue
        if any(math.dist(c, ref) < max(axes) + 8 + 6 for ref in REFERENCES):
            continue
        if not out and (abs(c[2]) < axes[2] + min_abs_z or abs(c[0]) < max(8, min_abs_x)):
            continue
        out.append({"centre": c, "axes": tuple(axes)})
    return out


def head(work_dir: Path, rng: np.random.Generator, path: str = "head.nii",
         lesions: list[int] | int = 1, radius: list[float] = (6.0, 11.0),
         elongation: float = 1.0, level: list[float] = (1300.0, 1700.0),
         noise: list[float] = (15.0, 30.0), threshold_fraction: float = 0.5,
         point: list[float] | None = None, study_name: str = "patient",
         rois: list[str] = (), zoom: float = 2.0, min_abs_z: float = 0.0,
         roi_shrink: float = 1.0, threshold: float | None = None,
         radii: list[list[float]] | None = None, min_abs_x: float = 0.0,
         gain: list[float] | None = None, rim: list[float] | None = None) -> dict[str, Any]:
    """A head volume with lesions, written as NIfTI (``.nii``/``.nii.gz``, with nibabel) or as an
    AMIDE flat XIF study (``.xif``); gold sizes, positions and statistics.

    ``lesions`` is a count or [lo, hi]; ``radius`` [lo, hi] mm the semi-axis of each (or
    ``radii``, one [lo, hi] per lesion, which also sets the count); with
    ``elongation`` > 1 one semi-axis of each is stretched by up to that factor (ellipsoids).
    ``threshold`` is the isocontour threshold a task names (by default ``threshold_fraction``
    of the way between the brain and the faintest lesion); ``iso_volume`` is the volume of
    the voxels at or above it connected to lesion 0's centre. ``point`` [x, y, z] (mm, a
    voxel centre: odd numbers) is a probe
    point whose intensity is gold. ``rois`` names ROIs to put into a ``.xif``
    study: "lesion" (an ellipsoid on lesion 0, its semi-axes times ``roi_shrink``) and
    "reference" (a 16 mm sphere of normal brain). Lesion 0 is the largest (without
    ``min_abs_z``). ``min_abs_z``
    keeps the first lesion placed that far (mm) off the z = 0 slice (use it with one lesion),
    ``min_abs_x`` that far off the midline (at least 8 mm always). ``gain`` [lo, hi] scales
    the whole scan (tissues, lesions and noise) by one factor drawn log-uniformly from that
    range, as a scanner's receiver gain does: MR intensities have no absolute unit, so each
    scan's values are its own (gold ``gain``).

    ``rim`` [lo, hi] makes the lesions ring-enhancing instead of uniform, as an enhancing
    tumour with a necrotic centre is on a contrast T1 scan: each lesion's intensity rises
    from a core level at its centre to its rim level (``level``) at its edge with the square
    of the normalised radius rho (``core + (level - core) rho^2``), the core being a fraction
    of the rim level drawn uniformly from [lo, hi] (gold ``core`` per lesion). The mean of an
    ROI inside such a lesion then depends on where it sits and how large it is, so tasks check
    the mean under the agent's own ROI (gold ``array``: the volume, kept on the host; the
    whole lesion's ``mean`` and ``centre_mean``, the mean where rho <= 0.35, are what a
    misplaced or wrongly sized ROI gives). Without ``rim`` nothing changes (data, rng stream).
    """
    count = int(rng.integers(lesions[0], lesions[1] + 1)) if isinstance(lesions, (list, tuple)) \
        else int(lesions)
    X, Y, Z = _grid()
    data = np.full(SHAPE, AIR)
    data[_ellipsoid(X, Y, Z, (0, 0, 0), (80, 96, 70))] = SCALP
    data[_ellipsoid(X, Y, Z, (0, 0, 0), (72, 88, 63))] = SKULL
    brain = _ellipsoid(X, Y, Z, (0, 0, 0), (68, 84, 60))
    data[brain] = CORTEX
    data[_ellipsoid(X, Y, Z, (0, 0, 0), (62, 78, 54))] = BRAIN
    for side in (-1, 1):
        data[_ellipsoid(X, Y, Z, (side * 8.0, 0.0, 4.0), (5, 24, 9))] = CSF
    if radii:
        count = len(radii)
    placed = _place_lesions(rng, count, tuple(radius), float(elongation), float(min_abs_z),
                            radii, float(min_abs_x))
    if not min_abs_z:
        placed.sort(key=lambda o: -float(np.prod(o["axes"])))
    masks = []
    for o in placed:
        o["level"] = float(np.round(rng.uniform(*level)))
        mask = _ellipsoid(X, Y, Z, o["centre"], o["axes"])
        if rim is None:
            data[mask] = o["level"]
        else:
            o["core"] = float(np.round(o["level"] * rng.uniform(*rim)))
            rho2 = _rho2(X[mask], Y[mask], Z[mask], o["centre"], o["axes"])
            data[mask] = o["core"] + (o["level"] - o["core"]) * rho2
        masks.append(mask)
    sigma = float(rng.uniform(*noise))
    data = data + rng.normal(0.0, sigma, SHAPE)
    scale = 1.0
    if gain is not None:
        scale = float(np.exp(rng.uniform(np.log(gain[0]), np.log(gain[1]))))
        data = data * scale
        sigma *= scale
        for o in placed:
            o["level"] = float(np.round(o["level"] * scale))
            if "core" in o:
                o["core"] = float(np.round(o["core"] * scale))
    data = np.clip(np.round(data), -32768, 32767).astype(np.int16)

    gold: dict[str, Any] = {"count": count, "noise": sigma, "max": int(data.max()),
                            "min": int(data.min()), "gain": scale,
                            "scalp_level": round(SCALP * scale)}
    out = []
    for o, mask in zip(placed, masks, strict=True):
        a, b, c = o["axes"]
        values = data[mask].astype(float)
        i, j, k = voxel_of(o["centre"])
        out.append({"i": i, "j": j, "k": k, "nifti_x": -o["centre"][0],
                    "nifti_y": o["centre"][1], "nifti_z": -o["centre"][2],
                    "x": o["centre"][0], "y": o["centre"][1], "z": o["centre"][2],
                    "centre": list(o["centre"]), "axes": [a, b, c],
                    "diameter": 2 * max(a, b, c), "rmax": max(a, b, c), "rmin": min(a, b, c),
                    "level": o["level"],
                    "volume": 4.0 / 3.0 * math.pi * a * b * c,
                    "voxel_volume": float(mask.sum()) * VOXEL ** 3,
                    "mean": float(values.mean()), "max": int(values.max())})
        if "core" in o:
            centre = _ellipsoid(X, Y, Z, o["centre"], tuple(0.35 * r for r in o["axes"]))
            out[-1].update({"core": o["core"],
                            "centre_mean": float(data[centre].astype(float).mean())})
    gold["lesions"] = out
    gold["lesion"] = out[0]
    normal = brain & ~np.any(masks, axis=0) if masks else brain
    gold["brain_mean"] = float(data[_ellipsoid(X, Y, Z, (0, 0, 0), (62, 78, 54))
                                    & normal].mean())
    gold["contrast"] = out[0]["mean"] / gold["brain_mean"]
    # the isocontour threshold: between the brain (+ 5 sigma of noise) and the faintest lesion
    faint = min(o["level"] for o in placed)
    if threshold is None:
        threshold = float(np.round(scale * CORTEX + 5 * sigma + threshold_fraction
                                   * (faint - scale * CORTEX - 10 * sigma)))
    gold["threshold"] = threshold
    above = data >= threshold
    from scipy import ndimage

    labels, _ = ndimage.label(above)
    i, j, k = voxel_of(out[0]["centre"])
    seed = labels[i, j, k]
    component = labels == seed if seed else np.zeros_like(above)
    gold["iso_volume"] = float(component.sum()) * VOXEL ** 3
    gold["iso_volume_ml"] = gold["iso_volume"] / 1000.0
    gold["iso_mean"] = float(data[component].mean()) if component.any() else 0.0
    gold["above_volume"] = float(above[brain].sum()) * VOXEL ** 3
    gold["total_lesion_volume"] = float(sum(o["voxel_volume"] for o in out))
    if point is not None:
        p = tuple(float(v) for v in point)
        pi, pj, pk = voxel_of(p)
        gold["point"] = {"x": p[0], "y": p[1], "z": p[2], "value": int(data[pi, pj, pk]),
                         "screen": screen_points(p)}
    # a sphere of normal brain for a reference ROI: the candidate farthest from lesion 0
    ref = max(REFERENCES, key=lambda r: math.dist(r, out[0]["centre"]))
    ref_mask = _ellipsoid(X, Y, Z, ref, (8, 8, 8))
    gold["reference"] = {"centre": list(ref), "mean": float(data[ref_mask].mean())}
    gold["ref_screen"] = screen_points(ref)
    gold["ref_screen"].update({"x0": gold["ref_screen"]["tx"] - 5,
                               "y0": gold["ref_screen"]["ty"] - 5,
                               "x1": gold["ref_screen"]["tx"] + 5,
                               "y1": gold["ref_screen"]["ty"] + 5})
    roi_axes = tuple(a * roi_shrink for a in out[0]["axes"])
    roi_mask = _ellipsoid(X, Y, Z, out[0]["centre"], roi_axes)
    gold["lesion_roi"] = {"axes": list(roi_axes), "mean": float(data[roi_mask].mean())}
    gold["ratio"] = gold["lesion_roi"]["mean"] / gold["reference"]["mean"]
    gold["screen"] = screen_points(out[0]["centre"])
    # lesion 0 mirrored left-right: where a misplaced ROI starts
    gold["misplaced"] = [-out[0]["x"], out[0]["y"], out[0]["z"]]
    gold["mis_screen"] = screen_points(gold["misplaced"])
    # a box well inside lesion 0 on the transverse canvas (for drawing an ROI by dragging)
    inner = 0.55 * min(out[0]["axes"][:2])
    gold["screen"].update({"x0": gold["screen"]["tx"] - int(inner),
                           "y0": gold["screen"]["ty"] - int(inner),
                           "x1": gold["screen"]["tx"] + int(inner),
                           "y1": gold["screen"]["ty"] + int(inner)})
    # where lesion 0 sits in an exported transverse view (fractions of width and height)
    gold["slice_fraction"] = {"x": (out[0]["x"] + SHAPE[0] * VOXEL / 2) / (SHAPE[0] * VOXEL),
                              "y": (SHAPE[1] * VOXEL / 2 - out[0]["y"]) / (SHAPE[1] * VOXEL)}

    target = Path(work_dir) / path
    if path.endswith(".xif"):
        roi_list = []
        if "lesion" in rois:
            roi_list.append(("lesion", out[0]["centre"], roi_axes))
        if "reference" in rois:
            roi_list.append(("reference", ref, (8.0, 8.0, 8.0)))
        if "misplaced" in rois:
            roi_list.append(("lesion", gold["misplaced"], roi_axes))
        write_xif(target, data, study_name, roi_list, zoom=zoom)
    else:
        write_nifti(target, data)
    gold["path"] = path
    if rim is not None:
        # the volume itself (NIfTI order), stored host-side by the task as a gold array: the
        # mean under the agent's saved ROI is recomputed from it (getters.amide_roi_mean)
        gold["array"] = data
    return gold


def voxel_of(centre: tuple[float, float, float] | list[float]) -> tuple[int, int, int]:
    """The NIfTI voxel index of a world position (AMIDE frame)."""
    n0, n1, n2 = SHAPE
    i = int(round((n0 * VOXEL / 2 - centre[0]) / VOXEL - 0.5))
    j = int(round((centre[1] + n1 * VOXEL / 2) / VOXEL - 0.5))
    k = int(round((n2 * VOXEL / 2 - centre[2]) / VOXEL - 0.5))
    return i, j, k


#: Where AMIDE 1.0.6 draws its canvases at zoom 2 (1 screen pixel per mm), relative to the
#: study window's top-left corner (client area), with the tree at its default width: the
#: transverse view (x right, y up) centred at (483, 252), the coronal view (x right, z down)
#: at (709, 252). Measured on the snapshot's layout.
TRANSVERSE_CENTRE = (483, 252)
CORONAL_CENTRE = (709, 252)


def screen_points(centre: list[float] | tuple[float, float, float]) -> dict[str, int]:
    """Window-relative pixels of a world point on the transverse and coronal canvases (zoom
    2, view centred on the origin): where a GUI oracle clicks to move the view there."""
    x, y, z = centre
    return {"tx": int(round(TRANSVERSE_CENTRE[0] + x)), "ty": int(round(TRANSVERSE_CENTRE[1] - y)),
            "cx": int(round(CORONAL_CENTRE[0] + x)), "cz": int(round(CORONAL_CENTRE[1] + z))}


def write_nifti(target: Path, data: np.ndarray) -> None:
    import nibabel as nib

    affine = np.diag([VOXEL, VOXEL, VOXEL, 1.0])
    affine[:3, 3] = [-(n * VOXEL) / 2 + VOXEL / 2 for n in SHAPE]
    img = nib.Nifti1Image(data, affine)
    img.header.set_xyzt_units("mm", "sec")
    img.header.set_qform(affine, code=1)
    img.header.set_sform(affine, code=1)
    nib.save(img, str(target))


_F = "{:.9f}"
#: AMIDE's preset CT windows (Hounsfield units), written into every data set as it does.
_WINDOWS = (("abdomen", -85, 165), ("brain", 0, 80), ("extremities", -400, 1000),
            ("liver", -40, 160), ("lung", -1350, 150), ("pelvis-soft-tissue", -140, 210),
            ("skull-base", -60, 140), ("spine-a", -35, 215), ("spine-b", -300, 1200),
            ("thorax-soft-tissue", -125, 225))


def _vec(v: Any) -> str:
    return "\t".join(_F.format(float(a)) for a in v)


_SPACE_ID = ("<coordinate_space_offset>{off}</coordinate_space_offset>"
             "<coordinate_space_x>1.000000000\t0.000000000\t0.000000000</coordinate_space_x>"
             "<coordinate_space_y>0.000000000\t1.000000000\t0.000000000</coordinate_space_y>"
             "<coordinate_space_z>0.000000000\t0.000000000\t1.000000000</coordinate_space_z>")


class _Flat:
    """The parts of an AMIDE flat XIF file, laid out one after the other behind its header."""

    HEADER = b"AMIDE XML Image Format Flat File Version 2.0"

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.offset = 0x50

    def add(self, blob: bytes) -> str:
        """Append ``blob``; its "location size" reference as AMIDE writes it."""
        ref = f"0x{self.offset:x} 0x{len(blob):x}"
        self.parts.append(blob)
        self.offset += len(blob)
        return ref

    def write(self, target: Path, study: bytes) -> None:
        loc = self.offset
        self.parts.append(study)
        head = self.HEADER.ljust(0x40, b"\0") + np.array([loc, len(study)], "<u8").tobytes()
        target.write_bytes(head + b"".join(self.parts))


def _xml(body: str) -> bytes:
    return ('<?xml version="1.0"?>\n' + body + "\n").encode()


def write_xif(target: Path, data: np.ndarray, name: str,
              rois: list[tuple[str, Any, Any]], zoom: float = 2.0,
              window: tuple[float, float] | None = None) -> None:
    """An AMIDE study as a flat XIF file, laid out as AMIDE 1.0.6's "Save Study As" writes
    it (a header with the study's location, raw data, then XML parts that point at each other
    by location and size), so the program opens it with the data set shown and the ROIs in
    place. ``window`` (min, max) sets the display thresholds (default: 0 to the maximum)."""
    ds = "brain"
    n0, n1, n2 = SHAPE
    flat = _Flat()
    # AMIDE's raw order: x fastest, then y (flipped against the NIfTI's second axis), then z
    raw = np.ascontiguousarray(data[:, ::-1, :].transpose(2, 1, 0)).astype("<i2")
    raw_ref = flat.add(raw.tobytes())
    raw_xml = flat.add(_xml(
        f"<raw_data>data-set_{ds}_raw-data<dim>{n0}\t{n1}\t{n2}\t1\t1</dim>"
        f"<raw_format>sshort-16-le</raw_format><raw_data_location_and_size>{raw_ref}"
        "</raw_data_location_and_size></raw_data>"))
    scale_ref = flat.add(np.array([1.0], "<f8").tobytes())
    scale_xml = flat.add(_xml(
        f"<raw_data>data-set_{ds}_scaling-factors<dim>1\t1\t1\t1\t1</dim>"
        f"<raw_format>double-64-le</raw_format><raw_data_location_and_size>{scale_ref}"
        "</raw_data_location_and_size></raw_data>"))
    low, top = window if window is not None else (0.0, float(data.max()))
    half = (n0 * VOXEL / 2, n1 * VOXEL / 2, n2 * VOXEL / 2)
    children = [flat.add(_xml(
        "<amide_data_file_version>2.0<data-set>" + ds
        + f"<coordinate_space_offset>{_vec(half)}</coordinate_space_offset>"
        "<coordinate_space_x>-1.000000000\t-0.000000000\t-0.000000000</coordinate_space_x>"
        "<coordinate_space_y>0.000000000\t-1.000000000\t0.000000000</coordinate_space_y>"
        "<coordinate_space_z>0.000000000\t0.000000000\t-1.000000000</coordinate_space_z>"
        "<children/><selected-0>true</selected-0><selected-1>false</selected-1>"
        "<selected-2>false</selected-2>"
        f"<corner>{_vec((n0 * VOXEL, n1 * VOXEL, n2 * VOXEL))}</corner><valid>true</valid>"
        "<scan_date>Sun Dec 31 00:00:00 1899</scan_date><subject_name>Anonymous</subject_name>"
        "<subject_id>Unknown</subject_id><subject_dob>00000000</subject_dob>"
        "<series_number>0</series_number><subject_dicom_image_type/><modality>mri</modality>"
        f"<voxel_size>{_vec((VOXEL, VOXEL, VOXEL))}</voxel_size>"
        f"<raw_data_location_and_size>{raw_xml}</raw_data_location_and_size>"
        f"<internal_scaling_factor_location_and_size>{scale_xml}"
        "</internal_scaling_factor_location_and_size><scaling_type>0d</scaling_type>"
        "<scale_factor>1.000000000</scale_factor><conversion>straight</conversion>"
        "<injected_dose>0.000000000</injected_dose>"
        "<displayed_dose_unit>megabecquerel</displayed_dose_unit>"
        "<subject_weight>0.000000000</subject_weight><displayed_weight_unit>kilogram"
        "</displayed_weight_unit><cylinder_factor>1.000000000</cylinder_factor>"
        "<displayed_cylinder_unit>megabecquerel-per-cc-image-unit</displayed_cylinder_unit>"
        "<inversion_time>       nan</inversion_time><echo_time>       nan</echo_time>"
        "<diffusion_b_value>       nan</diffusion_b_value><diffusion_direction>0.000000000"
        "\t0.000000000\t0.000000000</diffusion_direction>"
        "<scan_start>0.000000000</scan_start><gate_time>0.000000000</gate_time>"
        "<frame_duration>1.000000000</frame_duration><color_table>bw-linear</color_table>"
        "<color_table_2>bw-linear</color_table_2><color_table_2_independent>0"
        "</color_table_2_independent><color_table_3>bw-linear</color_table_3>"
        "<color_table_3_independent>0</color_table_3_independent>"
        "<interpolation>nearest-neighbor</interpolation><rendering>mpr</rendering>"
        "<subject_orientation>unknown</subject_orientation><subject_sex>unknown</subject_sex>"
        "<thresholding>global</thresholding><threshold_style>min-max</threshold_style>"
        f"<threshold_max_0>{_F.format(top)}</threshold_max_0>"
        f"<threshold_min_0>{_F.format(low)}</threshold_min_0><threshold_ref_frame_0>0"
        f"</threshold_ref_frame_0><threshold_max_1>{_F.format(top)}</threshold_max_1>"
        f"<threshold_min_1>{_F.format(low)}</threshold_min_1><threshold_ref_frame_1>0"
        "</threshold_ref_frame_1>" + "".join(
            f"<threshold_window_{w}-min>{_F.format(lo)}</threshold_window_{w}-min>"
            f"<threshold_window_{w}-max>{_F.format(hi)}</threshold_window_{w}-max>"
            for w, lo, hi in _WINDOWS) + "<view_start_gate>0</view_start_gate>"
        "<view_end_gate>0</view_end_gate></data-set></amide_data_file_version>"))]
    for roi_name, centre, axes in rois:
        offset = [c - a for c, a in zip(centre, axes, strict=True)]
        corner = [2 * a for a in axes]
        children.append(flat.add(_xml(
            "<amide_data_file_version>2.0<roi>" + roi_name
            + _SPACE_ID.format(off=_vec(offset))
            + "<children/><selected-0>true</selected-0><selected-1>false</selected-1>"
            f"<selected-2>false</selected-2><corner>{_vec(corner)}</corner><valid>true</valid>"
            "<type>ellipsoid</type><specify_color>false</specify_color>"
            "<color>2155872511</color><voxel_size>0.000000000\t0.000000000\t0.000000000"
            "</voxel_size><center_of_mass_calculated>false</center_of_mass_calculated>"
            "<center_of_mass>0.000000000\t0.000000000\t0.000000000</center_of_mass>"
            "<isocontour_min_value>0.000000000</isocontour_min_value>"
            "<isocontour_max_value>0.000000000</isocontour_max_value>"
            "<isocontour_range>0</isocontour_range></roi></amide_data_file_version>")))
    flat.write(target, _xml(
        "<amide_data_file_version>2.0<study>" + name
        + _SPACE_ID.format(off=_vec((0, 0, 0)))
        + "<children>" + "".join(f"<object_location_and_size>{c}</object_location_and_size>"
                                 for c in children) + "</children>"
        "<selected-0>false</selected-0><selected-1>false</selected-1>"
        "<selected-2>false</selected-2><creation_date>Mon Jan  5 09:00:00 2026</creation_date>"
        "<view_center>0.000000000\t0.000000000\t0.000000000</view_center>"
        "<view_thickness>2.000000000</view_thickness><view_start_time>0.000000000"
        "</view_start_time><view_duration>1.000000000</view_duration>"
        f"<zoom>{_F.format(zoom)}</zoom><fov>100.000000000</fov><fuse_type>blend</fuse_type>"
        "<view_mode>single</view_mode><transverse_canvas_visible>true"
        "</transverse_canvas_visible><coronal_canvas_visible>true</coronal_canvas_visible>"
        "<sagittal_canvas_visible>true</sagittal_canvas_visible><canvas_target>false"
        "</canvas_target><canvas_roi_width>2</canvas_roi_width><canvas_roi_transparency>"
        "0.500000000</canvas_roi_transparency><canvas_layout>linear</canvas_layout>"
        "<canvas_maintain_size>true</canvas_maintain_size><canvas_target_empty_area>5"
        "</canvas_target_empty_area><panel_layout>mixed</panel_layout></study>"
        "</amide_data_file_version>"))


def missing(work_dir: Path, rng: np.random.Generator, present: str = "t1_head.nii",
            **args: Any) -> dict[str, Any]:
    """An infeasible task's work directory: a head volume ``present`` is there, the file the
    instruction asks for is not."""
    return head(work_dir, rng, path=present, **args)


GENERATORS = {"head": head, "missing": missing}
