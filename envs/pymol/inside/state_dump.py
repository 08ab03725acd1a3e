"""Sent to the running PyMOL by the adapter and run there (GUI thread) to dump its state.

It reads and never changes anything. Leaves a JSON-able dict in ``__out__``; the names
``cmd`` (pymol.cmd) is provided by the caller's namespace.
"""
# ruff: noqa: F821  (``cmd`` comes from the namespace the adapter runs this in)

REPS = ("lines", "sticks", "spheres", "cartoon", "ribbon", "surface", "mesh", "dots",
        "nonbonded", "nb_spheres", "labels")


def _color_names():
    names = {}
    for name, index in cmd.get_color_indices():
        names.setdefault(index, name)
    return names


def _color_name(index, names):
    if index in names:
        return names[index]
    if index >= 0x40000000:
        return "0x%06x" % (index & 0xFFFFFF)
    return str(index)


def _group(selection, names):
    """Atom count, representation counts and colours of one selection (by element too)."""
    atoms = cmd.count_atoms(selection)
    out = {"atoms": atoms, "reps": {}, "colors": {}, "element_colors": {}}
    if not atoms:
        return out
    for rep in REPS:
        out["reps"][rep] = cmd.count_atoms(f"({selection}) and rep {rep}")
    seen = []
    cmd.iterate(selection, "seen.append((elem, color))", space={"seen": seen})
    for elem, color in seen:
        name = _color_name(color, names)
        out["colors"][name] = out["colors"].get(name, 0) + 1
        per = out["element_colors"].setdefault(elem, {})
        per[name] = per.get(name, 0) + 1
    return out


def _dump():
    names = _color_names()
    objects = {}
    for name in cmd.get_names("objects"):
        kind = cmd.get_type(name)
        obj = {"type": kind.split(":")[-1]}
        if kind == "object:molecule":
            sel = f"%{name}"
            obj.update(_group(sel, names))
            obj["enabled"] = name in cmd.get_names("objects", enabled_only=1)
            obj["chains"] = cmd.get_chains(sel)
            obj["solvent_atoms"] = cmd.count_atoms(f"({sel}) and solvent")
            obj["polymer_atoms"] = cmd.count_atoms(f"({sel}) and polymer")
            obj["organic_atoms"] = cmd.count_atoms(f"({sel}) and organic")
            obj["hydrogens"] = cmd.count_atoms(f"({sel}) and hydro")
            obj["residues"] = cmd.count_atoms(f"({sel}) and name CA and polymer")
            obj["by_chain"] = {(c or "_"): _group(f"({sel}) and chain '{c}'", names)
                               for c in obj["chains"]}
            obj["organic"] = _group(f"({sel}) and organic", names)
            obj["polymer"] = _group(f"({sel}) and polymer", names)
            xyz = cmd.get_coords(sel)
            if xyz is not None and len(xyz):
                obj["centroid"] = [float(v) for v in xyz.mean(axis=0)]
            ca = cmd.get_coords(f"({sel}) and name CA")
            if ca is not None and len(ca):
                obj["ca_centroid"] = [float(v) for v in ca.mean(axis=0)]
        elif kind == "object:measurement":
            obj["distances"] = _distances(name)
        objects[name] = obj
    selections = {}
    for name in cmd.get_names("selections"):
        selections[name] = {"atoms": cmd.count_atoms(name),
                            "residues": len({(m, c, s, r) for m, c, s, r in _residues(name)})}
    bg = cmd.get_setting_tuple("bg_rgb")[1]
    if isinstance(bg, (list, tuple)) and len(bg) == 1:
        bg = bg[0]
    bg_rgb = list(cmd.get_color_tuple(bg)) if isinstance(bg, int) else list(bg)
    bg_name = _color_name(bg, names) if isinstance(bg, int) else None
    return {"objects": objects, "object_names": list(objects),
            "selections": selections,
            "background": {"rgb": [round(float(v), 4) for v in bg_rgb], "name": bg_name},
            "view": [round(float(v), 4) for v in cmd.get_view()],
            "total_atoms": cmd.count_atoms("all")}


def _distances(name):
    """Lengths of the distance pairs of a measurement object (PyMOL 2.5 has no
    get_raw_distances): its session data holds, per state, the pair end points."""
    out = []
    try:
        entry = [e for e in cmd.get_session(name, 1)["names"] if e and e[0] == name][0]
        for dset in entry[5][2]:
            if not dset:
                continue
            n, xyz = int(dset[0]), dset[1]
            for i in range(0, n - 1, 2):
                a, b = xyz[3 * i:3 * i + 3], xyz[3 * i + 3:3 * i + 6]
                out.append(round(sum((p - q) ** 2 for p, q in zip(a, b, strict=True))
                                 ** 0.5, 4))
    except Exception:
        pass
    return out


def _residues(selection):
    found = []
    cmd.iterate(selection, "found.append((model, chain, segi, resi))", space={"found": found})
    return found


__out__ = _dump()
