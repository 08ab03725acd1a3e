"""Open Babel (``obabel``) on the host, over the XDrawChem generators' own trusted input: the
canonical SMILES, Hill formula and weight of a SMILES or a molfile, and the elemental
composition in mass percent. Gold values never enter the sandbox.
"""

from __future__ import annotations

import re
import subprocess
from typing import Any

#: Standard atomic weights (IUPAC 2013, abridged) for the elemental analysis.
MASS = {"H": 1.008, "C": 12.011, "N": 14.007, "O": 15.999, "F": 18.998, "S": 32.06,
        "Cl": 35.45, "Br": 79.904, "I": 126.904, "P": 30.974}


def _obabel(args: list[str], stdin: str | None = None, timeout: float = 60.0) -> str:
    res = subprocess.run(["obabel", *args], input=stdin, capture_output=True, text=True,
                         timeout=timeout, check=False)
    if res.returncode != 0 or not res.stdout.strip():
        raise RuntimeError(f"obabel {' '.join(args)} failed: {res.stderr.strip()[-300:]}")
    return res.stdout


def props_of_molfile(text: str) -> dict[str, Any]:
    """Canonical SMILES, Hill formula and weight of a (trusted) molfile, by Open Babel, read
    the way the getters read a saved file (elements, charges and bond orders only)."""
    from .formats import parse_molfile
    from .getters import clean_molfile

    clean = clean_molfile(parse_molfile(text, "generated molfile").molecules[0])
    out = _obabel(["-imol", "-ocan", "--append", "formula MW"], stdin=clean)
    line = out.strip().splitlines()[0]
    smiles, _, rest = line.partition("\t")
    formula, mw = rest.split()[:2]
    return {"can": smiles.strip(), "formula": formula, "mw": round(float(mw), 3)}


def canonical(smiles: str) -> dict[str, Any]:
    """The props of a SMILES as they come out of a molfile (the way saved files are read)."""
    return props_of_molfile(_obabel([f"-:{smiles}", "-omol", "--gen2d"]))


def composition(formula: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for el, n in re.findall(r"([A-Z][a-z]?)(\d*)", formula):
        counts[el] = counts.get(el, 0) + (int(n) if n else 1)
    return counts


def mass_percent(formula: str) -> dict[str, float]:
    counts = composition(formula)
    total = sum(MASS[el] * n for el, n in counts.items())
    return {el: round(100.0 * MASS[el] * n / total, 3) for el, n in counts.items()}
