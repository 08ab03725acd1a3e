"""The chemistry catalogue of the structure database (:mod:`.db`): ion data and the compounds
its templates are built from.

Chemistries of five structure families of :data:`sciagent_gym.datagen.crystals.FAMILIES`,
their compounds plus charge-balanced substitutions (:data:`AX`, :data:`AX2`, :data:`ABX3`,
:data:`AB2X4`), each built as several polymorphs (the *core*, database v1; the polymorphs are
the recipes of :mod:`.recipes`):

- AX (1:1, e.g. ZnO, NaCl, GaAs): rock salt, caesium chloride, zinc blende and wurtzite, and
  rock salt and zinc blende under a tetragonal strain (c/a = 1.04 / 0.98: I4/mmm, I-4m2);
- AX2 (CaF2, TiO2, ...): fluorite and rutile;
- ABX3 (SrTiO3, CsPbBr3, ...): cubic perovskite and a tetragonally strained one (P4/mmm);
- AB2X4 (MgAl2O4, ...): spinel.

The *reserve* (database v2), of which each variant holds a seeded share: further
charge-balanced substitutions in the same families (:data:`RESERVE_AX`, :data:`RESERVE_AX2`,
:func:`reserve_abx3`, :func:`reserve_ab2x4`), and ordered substitutional solid solutions of the
AX compounds (:data:`ORDERED_IONS` on :data:`ORDERED_PARENTS`, built by
:func:`.recipes.ordered_recipes`).

:data:`CHI` and :data:`RADII` feed the lattice parameters (:mod:`.recipes`) and the toy models
(:mod:`.toy_models`): a change here changes templates, so bump :data:`.db.DB_VERSION`.
"""

from __future__ import annotations

#: Pauling electronegativities.
CHI = {"Li": 0.98, "Na": 0.93, "K": 0.82, "Rb": 0.82, "Cs": 0.79, "Tl": 1.62, "Ag": 1.93,
       "Cu": 1.90, "Be": 1.57, "Mg": 1.31, "Ca": 1.00, "Sr": 0.95, "Ba": 0.89, "Mn": 1.55,
       "Fe": 1.83, "Co": 1.88, "Ni": 1.91, "Zn": 1.65, "Cd": 1.69, "Pb": 2.33, "Sn": 1.96,
       "B": 2.04, "Al": 1.61, "Ga": 1.81, "In": 1.78, "Sc": 1.36, "Y": 1.22, "La": 1.10,
       "Nd": 1.14, "Cr": 1.66, "Si": 1.90, "Ge": 2.01, "Ti": 1.54, "Zr": 1.33, "Hf": 1.30,
       "Ce": 1.12, "Nb": 1.60, "Ta": 1.50, "C": 2.55, "N": 3.04, "P": 2.19, "As": 2.18,
       "Sb": 2.05, "O": 3.44, "S": 2.58, "Se": 2.55, "Te": 2.10, "F": 3.98, "Cl": 3.16,
       "Br": 2.96, "I": 2.66}
#: Approximate Shannon ionic radii (A, six-fold coordination) of the ions used.
RADII = {"Li": 0.76, "Na": 1.02, "K": 1.38, "Rb": 1.52, "Cs": 1.67, "Tl": 1.50, "Ag": 1.15,
         "Cu": 0.77, "Be": 0.45, "Mg": 0.72, "Ca": 1.00, "Sr": 1.18, "Ba": 1.35, "Mn": 0.83,
         "Fe": 0.78, "Co": 0.745, "Ni": 0.69, "Zn": 0.74, "Cd": 0.95, "Pb": 1.19, "Sn": 0.69,
         "B": 0.27, "Al": 0.535, "Ga": 0.62, "In": 0.80, "Sc": 0.745, "Y": 0.90, "La": 1.032,
         "Nd": 0.983, "Cr": 0.615, "Si": 0.40, "Ge": 0.53, "Ti": 0.605, "Zr": 0.72,
         "Hf": 0.71, "Ce": 0.87, "Nb": 0.64, "Ta": 0.64, "C": 1.49, "N": 1.46, "P": 2.12,
         "As": 2.22, "Sb": 2.45, "O": 1.40, "S": 1.84, "Se": 1.98, "Te": 2.21, "F": 1.33,
         "Cl": 1.81, "Br": 1.96, "I": 2.20}
#: Cations with an open d shell (their synthetic gaps are halved).
OPEN_D = {"Mn", "Fe", "Co", "Ni", "Cr", "Cu"}

#: 1:1 compounds (cation, anion).
AX = ([(a, x) for a in ("Li", "Na", "K", "Rb", "Cs", "Ag", "Tl") for x in ("F", "Cl", "Br", "I")]
      + [(a, x) for a in ("Be", "Mg", "Ca", "Sr", "Ba", "Mn", "Fe", "Co", "Ni", "Zn", "Cd",
                          "Pb") for x in ("O", "S", "Se", "Te")]
      + [(a, x) for a in ("B", "Al", "Ga", "In") for x in ("N", "P", "As", "Sb")]
      + [("Si", "C")])
#: 1:2 compounds (cation, anion).
AX2 = ([(a, "F") for a in ("Mg", "Ca", "Sr", "Ba", "Cd", "Pb", "Mn", "Fe", "Co", "Ni", "Zn")]
       + [(a, "O") for a in ("Ti", "Zr", "Hf", "Ce", "Sn", "Ge", "Si", "Mn", "Pb")])
#: Perovskites (A, B, X).
ABX3 = ([(a, b, "O") for a in ("Ca", "Sr", "Ba", "Pb") for b in ("Ti", "Zr", "Sn", "Hf")]
        + [(a, b, "O") for a in ("Na", "K") for b in ("Nb", "Ta")]
        + [(a, b, "O") for a in ("La", "Nd", "Y") for b in ("Al", "Ga", "Fe", "Cr", "Sc")]
        + [("Cs", b, x) for b in ("Pb", "Sn") for x in ("Cl", "Br", "I")]
        + [(a, b, "F") for a in ("K", "Rb") for b in ("Mg", "Zn", "Ni", "Mn")])
#: Spinels (A, B, X).
AB2X4 = [(a, b, "O") for a in ("Mg", "Zn", "Co", "Ni", "Fe", "Mn") for b in ("Al", "Cr", "Fe",
                                                                             "Ga")] \
    + [(a, b, "S") for a in ("Zn", "Cd") for b in ("Al", "In")]

#: Reserve (v2): the 1:1 compounds of the other trivalent cations with the pnictides.
RESERVE_AX = [(a, x) for a in ("Sc", "Y", "La", "Nd", "Cr") for x in ("N", "P", "As", "Sb")]
#: Reserve (v2): dichlorides and dibromides of the divalent cations, disulfides and
#: diselenides of the tetravalent ones (fluorite and rutile, as :data:`AX2`).
RESERVE_AX2 = ([(a, x) for a in ("Mg", "Ca", "Sr", "Ba", "Pb", "Cd", "Zn", "Mn", "Fe", "Co",
                                 "Ni") for x in ("Cl", "Br")]
               + [(a, x) for a in ("Ti", "Zr", "Hf", "Sn") for x in ("S", "Se")])
#: Cations and anions of the ordered solid solutions, by charge (cations of :data:`AX`).
ORDERED_IONS = {1: (("Li", "Na", "K", "Rb", "Cs", "Ag", "Tl"), ("F", "Cl", "Br", "I")),
                2: (("Be", "Mg", "Ca", "Sr", "Ba", "Mn", "Fe", "Co", "Ni", "Zn", "Cd", "Pb"),
                    ("O", "S", "Se", "Te")),
                3: (("B", "Al", "Ga", "In"), ("N", "P", "As", "Sb"))}
#: Parent structures of the ordered solid solutions.
ORDERED_PARENTS = ("rocksalt", "zincblende")


def reserve_abx3() -> list[tuple[str, str, str]]:
    """Reserve (v2) perovskites: the charge-balanced A-B-X combinations of these ions that
    :data:`ABX3` does not hold."""
    combos = ([(a, b, "O") for a in ("Ca", "Sr", "Ba", "Pb", "Cd")
               for b in ("Ti", "Zr", "Sn", "Hf", "Ce", "Ge", "Mn")]
              + [(a, b, "O") for a in ("Li", "Na", "K", "Rb", "Ag", "Tl") for b in ("Nb", "Ta")]
              + [(a, b, "O") for a in ("La", "Nd", "Y")
                 for b in ("Al", "Ga", "Fe", "Cr", "Sc", "Mn", "Co", "In")]
              + [(a, b, "F") for a in ("Na", "K", "Rb", "Cs", "Tl")
                 for b in ("Mg", "Zn", "Ni", "Mn", "Co", "Fe", "Ca", "Cd")]
              + [(a, b, x) for a in ("K", "Rb", "Cs") for b in ("Pb", "Sn", "Ge", "Ca", "Sr", "Cd")
                 for x in ("Cl", "Br", "I")])
    return [c for c in combos if c not in set(ABX3)]


def reserve_ab2x4() -> list[tuple[str, str, str]]:
    """Reserve (v2) spinels: A(2+) B(3+) oxides, sulfides and selenides :data:`AB2X4` does not
    hold (A and B different elements, so every spinel is a ternary)."""
    combos = ([(a, b, "O") for a in ("Mg", "Zn", "Co", "Ni", "Fe", "Mn", "Cd")
               for b in ("Al", "Cr", "Fe", "Ga", "In", "Mn", "Co", "Sc") if a != b]
              + [(a, b, "S") for a in ("Zn", "Cd", "Mn", "Fe", "Co", "Ni", "Mg")
                 for b in ("Al", "In", "Cr", "Ga")]
              + [(a, b, "Se") for a in ("Zn", "Cd", "Mn", "Fe", "Co") for b in ("Al", "In", "Cr",
                                                                                  "Ga")])
    return [c for c in combos if c not in set(AB2X4)]
