"""The shared crystal generator against facts known without it (textbook values)."""

from __future__ import annotations

import numpy as np
import pytest
from pymatgen.core import Lattice, Structure

from sciagent_gym.datagen.crystals import (
    FAMILIES,
    cif_text,
    describe,
    make_crystal,
    nearest_neighbour,
    powder_pattern,
    xrd_peaks,
)


def test_rock_salt_nacl_has_its_textbook_density_peaks_and_bond():
    nacl = describe(Structure.from_spacegroup("Fm-3m", Lattice.cubic(5.64), ["Na", "Cl"],
                                              [[0, 0, 0], [0.5, 0.5, 0.5]]), order=["Na", "Cl"])
    assert (nacl.formula, nacl.spacegroup, nacl.spacegroup_number) == ("NaCl", "Fm-3m", 225)
    assert nacl.density == pytest.approx(2.164, abs=0.002)  # 4 x 58.44 u / (5.64 A)^3
    assert nearest_neighbour(nacl) == pytest.approx(2.82)  # a / 2
    peaks = {p.hkl: p for p in xrd_peaks(nacl)}
    # Bragg with Cu Ka (1.54184 A, Ka1/Ka2 weighted): d(200) = 2.82 A -> 31.73 deg, strongest
    assert peaks[(2, 0, 0)].two_theta == pytest.approx(31.73, abs=0.01)
    assert max(peaks.values(), key=lambda p: p.intensity).hkl == (2, 0, 0)
    assert (1, 0, 0) not in peaks  # forbidden in an F lattice


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_builds_its_space_group_and_is_seeded(family):
    a = make_crystal(np.random.default_rng(7), family)
    b = make_crystal(np.random.default_rng(7), family)
    assert a.gold() == b.gold()
    assert a.spacegroup == FAMILIES[family]["spacegroup"]
    assert a.structure.is_ordered and a.nsites == len(a.structure)
    nominal = [p["a"] for _, p in FAMILIES[family]["compounds"]]
    assert any(abs(a.lattice["a"] / n - 1) <= 0.0201 for n in nominal)
    assert 1.0 < nearest_neighbour(a) < 3.6  # a real bond, not overlapping atoms
    assert f"_symmetry_Int_Tables_number   {a.spacegroup_number}" in cif_text(a)


def test_spinel_is_ab2o4_with_56_sites():
    for seed in range(8):
        c = make_crystal(np.random.default_rng(seed), "spinel")
        assert c.nsites == 56 and c.formula.endswith("2O4"), c.formula


def test_powder_pattern_puts_its_maximum_on_the_strongest_peak():
    rng = np.random.default_rng(3)
    crystal = make_crystal(rng, "perovskite")
    peaks = xrd_peaks(crystal)
    pattern = powder_pattern(rng, peaks, noise=False)
    strongest = max(peaks, key=lambda p: p.intensity)
    assert pattern.two_theta[np.argmax(pattern.counts)] == pytest.approx(strongest.two_theta,
                                                                          abs=0.03)
    noisy = powder_pattern(np.random.default_rng(4), peaks)
    assert np.all(noisy.counts >= 0) and np.all(noisy.counts == np.round(noisy.counts))
    text = noisy.xy_text("2theta counts")
    assert text.startswith("# 2theta counts\n") and len(text.splitlines()) == 1 + len(noisy.counts)
