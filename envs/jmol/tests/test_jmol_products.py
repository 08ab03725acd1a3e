"""Jmol tasks' multi-product pieces (issue 33 item 5): the supercell's XYZ file judged against
the loaded cell, and the perceiver that reads several numbers off one OCR of the screen."""

from __future__ import annotations

import numpy as np
import pytest

from sciagent_gym.errors import StepError
from sciagent_gym.evaluation import Criterion, FinalState, evaluate
from sciagent_gym.tools import load_tool_getters

load_tool_getters("jmol")

from sciagent_gym.envs.jmol import getters, perceive  # noqa: E402

#: A wurtzite-like hexagonal cell (gamma 120) with four sites, as the state dump gives it.
CELL = {"a": 3.2, "b": 3.2, "c": 5.2, "alpha": 90.0, "beta": 90.0, "gamma": 120.0}
SITES = [("Zn", (1 / 3, 2 / 3, 0.0)), ("Zn", (2 / 3, 1 / 3, 0.5)),
         ("O", (1 / 3, 2 / 3, 0.38)), ("O", (2 / 3, 1 / 3, 0.88))]


def _xyz(tmp_path, block, packed=False, name="supercell.xyz"):
    m = getters.cell_matrix(CELL)
    rows = []
    for i in range(block[0] + packed):
        for j in range(block[1] + packed):
            for k in range(block[2] + packed):
                for el, f in SITES:
                    q = np.array(f) + (i, j, k)
                    if (q > np.array(block) + 1e-9).any():
                        continue
                    rows.append(f"{el} " + " ".join(f"{v:.5f}" for v in q @ m))
    (tmp_path / name).write_text(f"{len(rows)}\ntitle\n" + "\n".join(rows) + "\n")
    return len(rows)


def _score(tmp_path, getter, check, cell=CELL):
    crit = Criterion.from_dict({"name": "c", "getter": getter, "check": check})
    state = FinalState(work_dir=tmp_path, app_state={"cell": cell})
    return evaluate([crit], state).criteria[0]


@pytest.mark.parametrize("packed", [False, True])
def test_xyz_supercell_counts_each_site_of_the_block_once(tmp_path, packed):
    atoms = _xyz(tmp_path, [2, 2, 1], packed=packed)
    getter = {"fn": "jmol_xyz_supercell", "path": "supercell.xyz", "n": [2, 2, 1],
              "key": "block_sites"}
    assert _score(tmp_path, getter, {"op": "equals", "expected": 16}).passed
    assert (atoms > 16) == packed  # boundary copies on the outer faces are allowed


def test_xyz_supercell_fails_on_a_wrong_block_and_a_missing_file(tmp_path):
    _xyz(tmp_path, [2, 2, 2])
    getter = {"fn": "jmol_xyz_supercell", "path": "supercell.xyz", "n": [2, 2, 1],
              "key": "block_sites"}
    beyond = _score(tmp_path, getter, {"op": "equals", "expected": 16})
    assert not beyond.passed and "beyond" in beyond.detail
    _xyz(tmp_path, [1, 1, 1])
    assert not _score(tmp_path, getter, {"op": "equals", "expected": 16}).passed
    missing = dict(getter, path="other.xyz")
    assert not _score(tmp_path, missing, {"op": "equals", "expected": 16}).passed
    no_cell = _score(tmp_path, getter, {"op": "equals", "expected": 16}, cell=None)
    assert not no_cell.passed and "no crystal" in no_cell.detail


def test_ocr_fields_fills_the_template_from_one_reading(monkeypatch):
    from sciagent_gym import sdk

    monkeypatch.setattr(sdk, "ocr_region", lambda rgb, psm=6, scale=2: (
        "$ show unitcell\na=4.596, b=4.596, c=2.96, alpha=90.0, beta=90.0, gamma=90.0\n"
        "oabc=[{0.0 0.0 0.0}]\nvolume=62. 52472686767559\n"))
    pattern = (r"(?<![A-Za-z])a\s*=\s*(?P<a>[0-9]+\s*[.,]\s*[0-9]+)\s*,\s*b\s*=.{0,20}?"
               r"(?<![A-Za-z])c\s*=\s*(?P<c>[0-9]+\s*[.,]\s*[0-9]+).*?"
               r"volume\s*=\s*(?P<v>[0-9]+\s*[.,]\s*[0-9]{1,3})")
    out = perceive.ocr_fields(np.zeros((4, 4, 3), np.uint8), pattern, "a = {a}, c = {c}, V = {v}")
    assert out == "a = 4.596, c = 2.96, V = 62.524"
    with pytest.raises(StepError):
        perceive.ocr_fields(np.zeros((4, 4, 3), np.uint8), r"density=(?P<d>\d+)", "{d}")
