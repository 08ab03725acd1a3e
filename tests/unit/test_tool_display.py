"""tool.json "display": only known fields, and only tools proven without GLX leave it out."""

from __future__ import annotations

from sciagent_gym.tools.discovery import discover


def test_display_fields_are_typed_at_discovery():
    assert all(isinstance(info.glx, bool) for info in discover().values())


def test_opengl_tools_keep_glx():
    """PyMOL, ParaView and Avogadro draw with OpenGL: Xvfb must offer them GLX."""
    for name in ("pymol", "paraview", "avogadro"):
        assert discover()[name].glx, name
