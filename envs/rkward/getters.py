"""RKWard getters: objects of the live R session (through the state channel's dump) and rows of
CSV tables that R wrote.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.rkward.getters``.
A missing object, key or row raises GetterError, which fails the criterion.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sciagent_gym.evaluation import GetterError, register
from sciagent_gym.evaluation.dotted import LookupFailure, dotted_get
from sciagent_gym.evaluation.getters.tables import read_table

if TYPE_CHECKING:
    from sciagent_gym.evaluation import FinalState


def _objects(state: FinalState) -> dict[str, Any]:
    if state.app_state is None:
        raise GetterError(f"R session state unavailable: {state.app_state_error or 'no reason'}")
    objects = state.app_state.get("objects")
    if not isinstance(objects, dict):
        raise GetterError("the R session dump has no object list")
    return objects


@register("r_object")
def r_object(state: FinalState, name: str, key: str | None = None,
             absolute: bool = False) -> Any:
    """The summary of the R object ``name`` in RKWard's global environment (see
    ``inside/state_dump.R``), or the value at dotted ``key`` in it ("columns.age.mean",
    "coefficients.dose"); ``absolute`` gives a number's absolute value (a t statistic whose
    sign only says which group R took first)."""
    objects = _objects(state)
    if name not in objects:
        shown = ", ".join(sorted(objects)[:20]) or "none"
        raise GetterError(f"no R object {name!r} in the session (objects: {shown})")
    value = objects[name]
    if key is not None:
        try:
            value = dotted_get(value, key)
        except LookupFailure as exc:
            raise GetterError(f"R object {name!r}, {key!r}: {exc}") from None
    if absolute:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise GetterError(f"R object {name!r}, {key!r}: not a number ({value!r})")
        value = abs(value)
    return value


@register("r_object_names")
def r_object_names(state: FinalState) -> list[str]:
    """Names of the objects in RKWard's global environment."""
    return sorted(_objects(state))


@register("csv_lookup")
def csv_lookup(state: FinalState, path: str, key_column: str, key: str, column: str) -> Any:
    """The cell of ``column`` in the one row of the CSV table ``path`` whose ``key_column``
    reads ``key`` (R's ``write.csv`` quotes text and may add a row-name column)."""
    table = read_table(state, path)
    k = table.column_index(key_column)
    c = table.column_index(column)
    rows = [r for r in table.rows if str(r[k]).strip().strip('"') == key]
    if len(rows) != 1:
        raise GetterError(f"{path}: {len(rows)} rows with {key_column} = {key!r} (want one)")
    return rows[0][c]


@register("plot_difference")
def plot_difference(state: FinalState, path: str, reference_path: str) -> float:
    """How much a saved plot differs from the gold render of the same R code (an absolute host
    path): the share of the ink (pixels darker than light grey in either image) whose grey
    level differs by more than 64. The same code over the same data gives 0; another variable,
    another grouping or another size moves boxes, points and labels. Both are compared as
    8-bit grey: R's png device writes palette images whose palette order depends on the
    drawing."""
    from pathlib import Path

    import numpy as np

    from sciagent_gym.evaluation.getters._limits import open_image
    from sciagent_gym.evaluation.getters.reading import existing_file

    def grey(p: Path, label: str) -> np.ndarray:
        with open_image(p, label) as im:
            return np.asarray(im.convert("L"), dtype=np.int16)

    ref_path = Path(str(reference_path))
    if not ref_path.is_absolute() or not ref_path.is_file():
        raise GetterError(f"reference {reference_path!r}: not an existing absolute host path")
    got = grey(existing_file(state, path), path)
    ref = grey(ref_path, f"reference {ref_path}")
    if got.shape != ref.shape:
        raise GetterError(f"{path}: {got.shape[1]}x{got.shape[0]} pixels, the requested plot "
                          f"is {ref.shape[1]}x{ref.shape[0]}")
    ink = (got < 200) | (ref < 200)
    if not ink.any():
        raise GetterError(f"{path}: a blank image")
    return float(np.count_nonzero(np.abs(got - ref)[ink] > 64) / np.count_nonzero(ink))
