"""The oracle-interface classifier: console code, shell commands and dialogs in GUI oracles."""

from __future__ import annotations

from sciagent_gym.tasks.oracle_interface import ConsoleLanguage, classify, count_use

PYMOL = ConsoleLanguage(code=r"^\s*(select|align|color|png)\b", windows=r"PyMOL")


def test_menus_when_nothing_typed_is_console_code():
    steps = ["pyautogui.click(10, 20)", {"await_window": "^Save As$", "focused": True},
             "pyautogui.write('{work}/out.png')\npyautogui.press('enter')", "DONE"]
    assert classify(steps, PYMOL) == "menus"


def test_console_when_code_is_typed_and_only_own_windows_and_file_choosers_are_used():
    steps = [{"await_window": "^PyMOL$", "focused": True},
             "pyautogui.write('select pocket, resn LIG')\npyautogui.press('enter')",
             {"await_window": "^Save As$", "focused": True},
             "pyautogui.write('x.pse')", "DONE"]
    use = count_use(steps, PYMOL)
    assert (use.code_lines, use.dialogs, use.interface) == (1, (), "console")


def test_mixed_when_a_dialog_does_part_of_the_work():
    steps = ["pyautogui.write('color red, chain A')",
             {"await_window": "^Align$", "focused": True}, "pyautogui.click(5, 5)", "DONE"]
    assert classify(steps, PYMOL) == "mixed"


def test_a_dialog_only_dismissed_or_read_does_no_work():
    steps = ["pyautogui.write('png out.png')",
             {"await_window": "^Plot$"}, {"read": {"region": [0, 0, 9, 9]}, "answer": "{output}"},
             {"await_window": "^Search$", "focused": True}, "pyautogui.press('escape')", "DONE"]
    assert classify(steps, PYMOL) == "console"


def test_in_window_blocks_are_dialogs_and_their_typing_counts():
    steps = [{"in_window": "^Expression$", "do": ["pyautogui.write('select x, y')"]}, "DONE"]
    use = count_use(steps, PYMOL)
    assert (use.code_lines, use.dialogs) == (1, ("^Expression$",))


def test_shell_commands_are_console_work_without_a_console_language():
    assert classify([{"action": {"type": "run", "command": "ls"}}, "DONE"], None) == "console"
    assert classify(["run('ls')", "DONE"], None) == "console"
    assert classify(["pyautogui.write('select a')", "DONE"], None) == "menus"


def test_multi_line_text_counts_each_code_line():
    steps = ['pyautogui.write("select a\\ncolor red\\n12")', {"action": {"type": "type",
                                                                         "text": "png x"}}]
    assert count_use(steps, PYMOL).code_lines == 3


def test_toggle_steps_are_opened_up():
    steps = [{"toggle": "t", "then": ["pyautogui.write('align a, b')"]}, "DONE"]
    assert classify(steps, PYMOL) == "console"


def test_tool_interfaces_count_feasible_gui_tasks_only():
    from types import SimpleNamespace as S

    from sciagent_gym.runs.interfaces import tool_interfaces

    specs = [S(modality="gui", infeasible=False, oracle_interface="menus"),
             S(modality="gui", infeasible=False, oracle_interface="console"),
             S(modality="gui", infeasible=False, oracle_interface="mixed"),
             S(modality="gui", infeasible=False, oracle_interface=None),
             S(modality="gui", infeasible=True, oracle_interface="menus"),
             S(modality="gui+cli", infeasible=False, oracle_interface="menus")]
    counts = tool_interfaces("t", specs)
    assert (counts.menus, counts.mixed, counts.console, counts.without) == (1, 1, 1, 1)
    assert counts.share == 0.25
    assert tool_interfaces("t", []).share == 1.0  # no gui task: nothing to prove
