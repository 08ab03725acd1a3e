"""tool.json "display": only known fields, and only tools proven without GLX leave it out."""

from __future__ import annotations

from sciagent_gym.tools.discovery import discover


def test_display_fields_are_known_and_typed():
    for name, info in discover().items():
        display = info.extra.get("display", {})
        assert set(display) <= {"glx"}, (name, display)
        assert isinstance(display.get("glx", True), bool), (name, display)


def test_opengl_tools_keep_glx():
    """PyMOL, ParaView and Avogadro draw with OpenGL: Xvfb must offer them GLX."""
    for name in ("pymol", "paraview", "avogadro"):
        assert discover()[name].extra.get("display", {}).get("glx", True), name
