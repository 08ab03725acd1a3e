"""DS9 set back to what a fresh start shows (the in-place restore of a soft reset): the
settings queried, their answers at launch and the commands that set them back."""

from __future__ import annotations

# What a fresh DS9 shows (DS9 8.4 defaults, as launched by launch_argv), set back by the
# adapter's restore_in_place: every setting the dump reads, the panels, and the settings the
# button bar and the mouse reach in short episodes (contrast/bias, region defaults,
# coordinate systems). Each entry is (query, answer at launch, command that sets it back;
# None: "query answer"); only settings whose answer differs are set, in this order.
# tests/e2e/test_soft_reset_e2e.py compares the result with a restart, frame and dump.
FRESH: list[tuple[str, str, str | None]] = [
    ("frame", "1", None), ("mode", "none", None),
    ("regions shape", "circle", None), ("regions color", "green", None),
    ("single", "yes", "single"), ("tile", "no", None), ("blink", "no", None),
    ("frame lock", "none", None), ("crosshair lock", "none", None),
    ("block", "1", "block to 1"), ("bin factor", "1 1", None),
    ("smooth", "no", None), ("smooth function", "gaussian", None),
    ("smooth radius", "3", None), ("smooth sigma", "1.5", None),
    ("contour", "no", None), ("contour nlevels", "5", None), ("contour smooth", "4", None),
    ("contour method", "smooth", None), ("contour scale", "linear", None),
    ("contour mode", "minmax", None),
    ("scale", "linear", "scale linear"), ("scale mode", "minmax", None),
    ("scale log exp", "1000", None), ("scale scope", "local", None),
    ("minmax mode", "scan", None), ("zscale contrast", ".25", None),
    ("cmap", "grey", "cmap grey"), ("cmap invert", "no", None), ("cmap value", "1 0.5", None),
    ("zoom", "1", "zoom to 1"), ("rotate", "0", "rotate to 0"),
    ("colorbar", "yes", None), ("colorbar numerics", "yes", None), ("grid", "no", None),
    ("wcs sky", "fk5", None), ("wcs skyformat", "sexagesimal", None),
    ("bg color", "white", "bg white"), ("nan color", "white", "nan white"),
    *[(f"view {k}", v, None) for k, v in [
        ("layout", "horizontal"), ("info", "yes"), ("panner", "yes"), ("magnifier", "yes"),
        ("buttons", "yes"), ("colorbar", "yes"), ("graph horizontal", "no"),
        ("graph vertical", "no"), ("filename", "yes"), ("object", "yes"), ("keyword", "no"),
        ("minmax", "no"), ("lowhigh", "no"), ("units", "no"), ("frame", "yes"),
        ("wcs", "yes"), ("physical", "yes"), ("image", "yes")]],
]
# Sent every time (cheap, and not all of it can be queried).
FRESH_ALWAYS = [
    "regions delete all", "crop reset",
    # the info panel's coordinate-name labels: hovering the image gives them a Times font
    # (for alpha, delta) that stays, 2 px wider, after their text is cleared on leaving it;
    # at launch they have the panel's font, as the 'x' label of the Physical row has
    "tcl {foreach ll {{} a b c d e f g h i j k l m n o p q r s t u v w x y z} "
    "{foreach aa {x y z} {$infobox(wcs$ll,$aa,nm) configure "
    "-font [$ds9(info).physicalXLabel cget -font]}}}",
    # the button bar's first section, as at launch (XPA splits a line at ';': two commands)
    "tcl {set buttons(major,current) $ds9(buttons).file}", "tcl {MajorButton}",
    # DS9's notes (an oracle reads a count it computed in DS9's Tcl back through them; an
    # agent may type into them): empty, as at launch
    "tcl {set ds9notes {}}",
]


def _same_answer(got: str, want: str) -> bool:
    """XPA answers compared as words, numbers as numbers ('.25' is '0.25', '1.0' is '1')."""
    a, b = got.split(), want.split()
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        try:
            if float(x) != float(y):
                return False
        except ValueError:
            if x.lower() != y.lower():
                return False
    return True


def fresh_commands(answers: list[str]) -> list[str]:
    """The commands that set back what differs from launch, given the answers to the
    :data:`FRESH` queries (in order), then :data:`FRESH_ALWAYS`."""
    out = [cmd or f"{query} {want}" for (query, want, cmd), got in zip(FRESH, answers,
                                                                       strict=True)
           if not _same_answer(got, want)]
    if any(c.startswith("contour ") for c in out):
        out.append("contour close")  # DS9 opens the Contour Parameters dialog to set them
    return out + FRESH_ALWAYS
