# Run in the program zone as: grass --tmp-mapset $HOME/grassdata/sci --exec python3 -I -c CODE
# (-I: no module from the current directory, the user site or PYTHON* variables, so GRASS's own
# package path is added here from GISBASE). Reads the maps of the user1 mapset (which the GUI
# holds locked; a temporary mapset of the same location reads them as name@user1 without
# touching that lock) and prints them as JSON on one line after a marker, on stdout: the pipe
# back to the sandbox helper. Every raster is measured on its own region (g.region
# raster=...), not the GUI's.
import json
import os
import sys

sys.path.insert(0, os.path.join(os.environ["GISBASE"], "etc", "python"))
import grass.script as gs  # noqa: E402

MAPSET = "user1"
MAX_MAPS = 60
MAX_CLASSES = 64
MAX_ROWS = 2000


def number(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if value == value and abs(value) != float("inf") else None


def raster(name):
    full = f"{name}@{MAPSET}"
    info = gs.parse_command("r.info", flags="g", map=full)
    out = {"datatype": info.get("datatype"), "rows": int(info.get("rows", 0)),
           "cols": int(info.get("cols", 0)), "ewres": number(info.get("ewres")),
           "nsres": number(info.get("nsres")), "north": number(info.get("north")),
           "south": number(info.get("south")), "east": number(info.get("east")),
           "west": number(info.get("west"))}
    gs.run_command("g.region", raster=full, quiet=True)
    stats = gs.parse_command("r.univar", flags="g", map=full)
    for key in ("n", "null_cells", "min", "max", "mean", "stddev", "sum"):
        out[key] = number(stats.get(key))
    if out["datatype"] == "CELL" and out["n"]:
        lines = gs.read_command("r.stats", flags="cn", input=full).splitlines()
        if len(lines) <= MAX_CLASSES:
            classes = {}
            for line in lines:
                parts = line.split()
                if len(parts) == 2:
                    classes[parts[0]] = int(parts[1])
            out["classes"] = classes
    return out


def vector(name):
    full = f"{name}@{MAPSET}"
    topo = gs.parse_command("v.info", flags="t", map=full)
    out = {k: int(v) for k, v in topo.items() if v.strip().lstrip("-").isdigit()}
    # Numeric attribute columns of layer 1 (n non-null, min, max, mean, sum), from at most
    # MAX_ROWS rows; a map without a table has none.
    try:
        table = gs.vector_db_select(full, layer=1)
    except Exception:  # noqa: BLE001 (no attribute table: GRASS raises its own error)
        return out
    values = list(table.get("values", {}).values())
    columns = {}
    if len(values) <= MAX_ROWS:
        for i, col in enumerate(table.get("columns", [])):
            nums = [number(row[i]) for row in values if i < len(row)]
            nums = [v for v in nums if v is not None]
            if nums:
                columns[col] = {"n": len(nums), "min": min(nums), "max": max(nums),
                                "mean": sum(nums) / len(nums), "sum": sum(nums)}
    out["columns"] = columns
    out["rows"] = len(values)
    return out


def region():
    path = os.path.join(gs.gisenv()["GISDBASE"], gs.gisenv()["LOCATION_NAME"], MAPSET, "WIND")
    found = {}
    with open(path) as fh:
        for line in fh.read(20000).splitlines():
            key, _, value = line.partition(":")
            found[key.strip()] = value.strip()
    return {"north": number(found.get("north")), "south": number(found.get("south")),
            "east": number(found.get("east")), "west": number(found.get("west")),
            "rows": number(found.get("rows")), "cols": number(found.get("cols")),
            "nsres": number(found.get("n-s resol")), "ewres": number(found.get("e-w resol"))}


state = {"rasters": {}, "vectors": {}, "errors": []}
try:
    state["region"] = region()
except Exception as exc:  # noqa: BLE001
    state["errors"].append(f"region: {exc}")
for kind, reader, key in (("raster", raster, "rasters"), ("vector", vector, "vectors")):
    try:
        names = gs.read_command("g.list", type=kind, mapset=MAPSET).split()
    except Exception as exc:  # noqa: BLE001
        state["errors"].append(f"g.list {kind}: {exc}")
        continue
    for name in sorted(names)[:MAX_MAPS]:
        try:
            state[key][name] = reader(name)
        except Exception as exc:  # noqa: BLE001
            state["errors"].append(f"{name}: {exc}")

sys.stdout.write("\n@@sciagent-grass-state " + json.dumps(state) + "\n")
sys.stdout.flush()
