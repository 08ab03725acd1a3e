"""Writing a head volume as the files the AMIDE tasks hand the program: a NIfTI file, or an
AMIDE study as a flat ``.xif`` file laid out as AMIDE's own "Save Study As" writes it (raw
data and XML parts that point at each other), for the tasks that start with it open.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.amide.frame import SHAPE, VOXEL


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
