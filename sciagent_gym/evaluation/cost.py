"""Which criteria are cheap enough to score after every step (dense reward).

Cheap getters read small files or data already in memory (status, window list, single pixels);
OCR, SSIM, the app's state dump and sandbox commands are only affordable at the end of an
episode. A getter not listed here counts as expensive, so a new getter is never run per step by
accident.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CHEAP_GETTERS: frozenset[str] = frozenset(
    {
        # files in the work dir
        "file_exists",
        "file_text",
        "file_json",
        "file_sha256",
        "table_rows",
        "table_columns",
        "table_column",
        "table_cell",
        "table_records",
        # in-memory status and the answer
        "agent_status",
        "answer_given",
        "answer_text",
        "answer_number",
        "answer_numbers",
        "terminal_text",
        # the collected window list
        "window_titles",
        "window_exists",
        "modal_dialog",
        "focused_window",
        "window_count",
        # raw pixels of the screenshot
        "pixel_color",
        "region_mean_color",
        "region_fraction",
    }
)


def is_cheap(criterion: Any) -> bool:
    """True if a Criterion (or its JSON form, or a getter name) uses a cheap getter."""
    if isinstance(criterion, str):
        name: Any = criterion
    elif isinstance(criterion, Mapping):
        spec = criterion.get("getter")
        name = spec.get("fn") if isinstance(spec, Mapping) else spec
    else:
        name = getattr(criterion, "getter", None)
    return isinstance(name, str) and name in CHEAP_GETTERS
