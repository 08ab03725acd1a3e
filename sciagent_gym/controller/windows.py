"""Top-level windows of a display as the window manager sees them (EWMH)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from Xlib import X, Xatom, protocol
from Xlib.error import XError

from sciagent_gym.controller.xconnect import open_display


@dataclass(frozen=True)
class WindowInfo:
    id: int
    title: str
    wm_class: str
    x: int
    y: int
    width: int
    height: int
    active: bool
    modal: bool
    window_type: str = "normal"  # EWMH _NET_WM_WINDOW_TYPE without its prefix, lower case

    def to_dict(self) -> dict:
        return asdict(self)


class WindowLister:
    """Reads ``_NET_CLIENT_LIST`` and friends from one display connection."""

    def __init__(self, display_name: str) -> None:
        self._dpy = open_display(display_name)
        self._root = self._dpy.screen().root
        atom = self._dpy.intern_atom
        self._client_list = atom("_NET_CLIENT_LIST")
        self._active = atom("_NET_ACTIVE_WINDOW")
        self._name = atom("_NET_WM_NAME")
        self._utf8 = atom("UTF8_STRING")
        self._state = atom("_NET_WM_STATE")
        self._modal = atom("_NET_WM_STATE_MODAL")
        self._close = atom("_NET_CLOSE_WINDOW")
        self._type = atom("_NET_WM_WINDOW_TYPE")
        self._type_names: dict[int, str] = {}

    def list(self) -> list[WindowInfo]:
        for _ in range(3):
            try:
                return self._list_once()
            except XError:
                continue  # a root property changed between the two reads of one lookup
        return self._list_once()

    def _list_once(self) -> list[WindowInfo]:
        prop = self._root.get_full_property(self._client_list, Xatom.WINDOW)
        active = self._root.get_full_property(self._active, Xatom.WINDOW)
        active_id = int(active.value[0]) if active is not None and len(active.value) else 0
        out = []
        for wid in (prop.value if prop is not None else []):
            try:
                out.append(self._info(int(wid), active_id))
            except XError:
                continue  # the window vanished while we looked
        return out

    def _info(self, wid: int, active_id: int) -> WindowInfo:
        win = self._dpy.create_resource_object("window", wid)
        name = win.get_full_property(self._name, self._utf8)
        if name is not None:
            title = name.value.decode("utf-8", "replace") if isinstance(name.value, bytes) \
                else str(name.value)
        else:
            title = win.get_wm_name() or ""
            if isinstance(title, bytes):
                title = title.decode("latin-1")
        wm_class = win.get_wm_class() or ("", "")
        geom = win.get_geometry()
        pos = win.translate_coords(self._root, 0, 0)
        state = win.get_full_property(self._state, Xatom.ATOM)
        modal = state is not None and self._modal in list(state.value)
        attrs = win.get_attributes()
        return WindowInfo(
            id=wid, title=title, wm_class=wm_class[-1] if wm_class else "",
            x=-pos.x, y=-pos.y, width=geom.width, height=geom.height,
            active=(wid == active_id) and attrs.map_state == X.IsViewable, modal=modal,
            window_type=self._window_type(win),
        )

    def _window_type(self, win) -> str:
        prop = win.get_full_property(self._type, Xatom.ATOM)
        if prop is None or not len(prop.value):
            return "normal"
        atom = int(prop.value[0])
        if atom not in self._type_names:
            name = self._dpy.get_atom_name(atom)
            self._type_names[atom] = name.removeprefix("_NET_WM_WINDOW_TYPE_").lower()
        return self._type_names[atom]

    def close_window(self, window_id: int) -> None:
        """Send ``_NET_CLOSE_WINDOW`` to the window manager, as a click on the close button."""
        win = self._dpy.create_resource_object("window", window_id)
        event = protocol.event.ClientMessage(
            window=win, client_type=self._close, data=(32, [X.CurrentTime, 2, 0, 0, 0]))
        self._root.send_event(event, event_mask=X.SubstructureRedirectMask
                              | X.SubstructureNotifyMask)
        self._dpy.sync()

    def activate(self, window_id: int) -> None:
        """Ask the window manager to raise and focus a window (``_NET_ACTIVE_WINDOW``, sent as
        a pager would, so focus-stealing prevention does not refuse it)."""
        win = self._dpy.create_resource_object("window", window_id)
        event = protocol.event.ClientMessage(
            window=win, client_type=self._active, data=(32, [2, X.CurrentTime, 0, 0, 0]))
        self._root.send_event(event, event_mask=X.SubstructureRedirectMask
                              | X.SubstructureNotifyMask)
        self._dpy.sync()

    def nudge(self, window_id: int) -> None:
        """Resize a window by one pixel and back, so its toolkit lays it out again.

        Java sometimes lays out a frame's menu bar before the help menu is registered (the
        Help menu then sits next to the others instead of at the right edge); a resize makes
        AWT redo the layout, giving the same frame on every start.
        """
        win = self._dpy.create_resource_object("window", window_id)
        geom = win.get_geometry()
        win.configure(width=geom.width + 1)
        self._dpy.sync()
        win.configure(width=geom.width)
        self._dpy.sync()

    def close(self) -> None:
        self._dpy.close()
