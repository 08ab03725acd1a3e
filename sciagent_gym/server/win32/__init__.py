"""The control server's machine on a Windows desktop:
:class:`~sciagent_gym.server.win32.machine.Win32Machine`.

UNTESTED ON WINDOWS. Nothing in the Win32 half of this package has run on Windows: it is
written against the documented Win32 API (winuser.h, winbase.h, dwmapi.h) and only its pure
parts (key table, coordinate normalisation, INPUT structures and event lists, command builders,
the process table's bookkeeping) are tested, on Linux (tests/unit/test_win32_backend.py). See
vm_images/windows/README.md, "What is untested here".

It is the X11 :class:`~sciagent_gym.server.machine.Machine` with its display-specific parts
swapped: input through ``SendInput``, windows through ``EnumWindows``, the clipboard through
``OpenClipboard``, programs through a process table that kills trees with ``taskkill /T``
(``sandbox_agent`` relies on POSIX sessions). Settling, text files, tar trees and the provider
method names are inherited unchanged; file paths are confined as on Linux, also against names
only Windows reads as escapes (``C:x``, ``\\x``;
:func:`sciagent_gym.transfer.files.windows_unsafe`).
Every module imports anywhere; the Windows calls are bound on first use, and constructing
:class:`~sciagent_gym.server.win32.machine.Win32Machine` elsewhere raises RuntimeError.

Modules, one part each:

* :mod:`.keys`: the virtual-key table (key names and characters -> VK codes);
* :mod:`.inputs`: SendInput's INPUT structures and the event lists of mouse and key actions;
* :mod:`.winapi`: the Win32 functions, bound through ctypes on first use, and ``send_inputs``;
* :mod:`.screen`: screen grabs (``mss``) and repainting;
* :mod:`.controller`: input dispatch, an Action as SendInput events (the X11Controller's
  interface, with the screen);
* :mod:`.windows`: the window list, closing, activation, re-layout;
* :mod:`.clipboard`: the clipboard as Unicode text;
* :mod:`.processes`: programs by name, killed as trees, and cmd.exe commands;
* :mod:`.machine`: :class:`Win32Machine`, which puts them together.
"""
