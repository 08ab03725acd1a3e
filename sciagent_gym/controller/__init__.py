"""Acting on a display and reading it: ``base`` (input dispatch shared with the Windows
server), ``x11`` (XTest input, screen grabs), ``settle`` (when the screen is still), ``windows``
(the window list), ``clipboard``, ``xconnect`` (opening the display)."""
