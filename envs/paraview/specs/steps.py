"""The GUI steps the ParaView oracles share: File > Open, Save Data (CSV), Save State, the
Python Shell, the quick launch, and the event-loop sync before reading the screen."""

from __future__ import annotations

MAIN = {"await_window": "^ParaView 5\\.11", "focused": True}
APPLY = "pyautogui.click(50, 460)"
INFO_TAB = "pyautogui.click(132, 407)"
PROPS_TAB = "pyautogui.click(43, 407)"


# A round trip through ParaView's event loop: the quick-launch box ("Dialog") opens only once
# the GUI has finished what it was doing (a first render under software OpenGL freezes it for
# seconds, and a frozen window looks settled). Used before reading the screen.
SYNC = ["pyautogui.hotkey('ctrl', 'space')",
        {"await_window": "^Dialog$", "focused": True, "timeout": 90},
        "pyautogui.press('escape')", {"await_window": "^Dialog$", "gone": True, "timeout": 60}]


def open_file(name):
    """File > Open through ParaView's own dialog, then Apply."""
    return [MAIN,
            "pyautogui.hotkey('ctrl', 'o')",
            {"await_window": "^Open File:", "focused": True},
            f"pyautogui.write('{{work}}/{name}')\npyautogui.press('enter')",
            {"await_window": "^Open File:", "gone": True},
            {"await_window": "^ParaView 5\\.11", "focused": True},
            APPLY]


def save_data(name, precision=None):
    """File > Save Data as CSV (the writer follows the extension), Configure Writer, OK."""
    steps = ["pyautogui.hotkey('ctrl', 's')",
             {"await_window": "^Save File:", "focused": True},
             f"pyautogui.write('{{work}}/{name}')\npyautogui.press('enter')",
             {"await_window": "^Configure Writer \\(CSVWriter\\)", "focused": True}]
    if precision is not None:
        steps += [{"in_window": "^Configure Writer", "do": ["pyautogui.tripleClick(336, 150)"]},
                  f"pyautogui.hotkey('ctrl', 'a')\npyautogui.write('{precision}')"]
    steps += [{"in_window": "^Configure Writer", "do": ["pyautogui.click(522, 358)"]},
              {"await_window": "^Configure Writer", "gone": True}]
    return steps


def python_shell():
    """View > Python Shell, wait for it, click into its prompt."""
    return ["pyautogui.click(98, 29)", "pyautogui.click(145, 375)", *SYNC,
            "pyautogui.click(700, 640)"]


def quick_launch(name):
    """Ctrl+Space, the filter's name, Enter: ParaView's quick launch."""
    return ["pyautogui.hotkey('ctrl', 'space')",
            {"await_window": "^Dialog$", "focused": True},
            f"pyautogui.write('{name}')\npyautogui.press('enter')",
            {"await_window": "^Dialog$", "gone": True}]


def save_state(name):
    """File > Save State..., the file name, Enter."""
    return ["pyautogui.click(21, 29)", "pyautogui.click(72, 145)",
            {"await_window": "^Save State File", "focused": True},
            f"pyautogui.write('{{work}}/{name}')\npyautogui.press('enter')",
            {"await_window": "^Save State File", "gone": True}]
