"""AMIDE's world frame on the AMIDE tasks' fixed grid, and where its canvases draw it.

Positions are in AMIDE's own world frame, the one its "view center" readout and its ROI
dialogs show (measured on AMIDE 1.0.6, which reads NIfTI through its built-in (X)MedCon
library): AMIDE centres an imported NIfTI volume on the origin whatever its affine's
translation, with x growing towards voxel index 0 of the first axis, y along the second axis
and z towards index 0 of the third. For voxel (i, j, k) of the NIfTI array::

    x = N0 v / 2 - (i + 1/2) v,   y = (j + 1/2) v - N1 v / 2,   z = N2 v / 2 - (k + 1/2) v

The NIfTI files carry a diagonal affine centred on the volume, so their own (RAS) world frame
is AMIDE's with x and z negated.

Voxels are 2 mm cubes on a fixed 96 x 112 x 80 grid (192 x 224 x 160 mm), so the GUI's
canvases have one fixed layout.
"""

from __future__ import annotations

import numpy as np

SHAPE = (96, 112, 80)
VOXEL = 2.0


def world_axes(shape: tuple[int, int, int] = SHAPE, voxel: float = VOXEL
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """AMIDE world coordinates (mm) of the voxel centres along each NIfTI axis."""
    n0, n1, n2 = shape
    x = n0 * voxel / 2 - (np.arange(n0) + 0.5) * voxel
    y = (np.arange(n1) + 0.5) * voxel - n1 * voxel / 2
    z = n2 * voxel / 2 - (np.arange(n2) + 0.5) * voxel
    return x, y, z


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
