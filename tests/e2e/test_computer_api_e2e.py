"""The computer API beyond pyautogui (clipboard, program control, windows) on the real display."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e


def _titles(env) -> list[str]:
    return [w.title for w in env.unwrapped.provider.windows()]


def test_clipboard_round_trip_and_paste(imagej_env):
    env = imagej_env
    env.reset(seed=0, options={"task": "count-nuclei"})
    _, _, _, _, info = env.step("computer.set_clipboard('52 nuclei, 0.5 µm')")
    assert "action_error" not in info
    obs, _, _, _, info = env.step("pyperclip.paste()")
    assert obs["terminal"] == "clipboard:\n52 nuclei, 0.5 µm"
    # A reset empties the clipboard: one episode's text never leaks into the next.
    env.reset(seed=0, options={"task": "count-nuclei"})
    obs, *_ = env.step("computer.get_clipboard()")
    assert obs["terminal"] == "clipboard:\n"


def test_window_list_activate_and_close(imagej_env):
    env = imagej_env
    env.reset(seed=0, options={"task": "count-nuclei"})
    obs, *_ = env.step("computer.list_windows()")
    assert "'ImageJ'" in obs["terminal"] and "nuclei" in obs["terminal"]
    provider = env.unwrapped.provider
    env.step("computer.activate_window('ImageJ')")
    assert [w.title for w in provider.windows() if w.active] == ["ImageJ"]
    _, _, _, _, info = env.step("computer.close_window('no such window')")
    assert "no window titled 'no such window'" in info["action_error"]


def test_launch_a_program_and_close_its_window(imagej_env):
    env = imagej_env
    env.reset(seed=0, options={"task": "count-nuclei"})
    obs, _, _, _, info = env.step("computer.launch('xmessage -title probe-window hello')")
    assert "action_error" not in info and obs["terminal"].startswith("launched:")
    provider = env.unwrapped.provider
    import time
    deadline = time.monotonic() + 10
    while "probe-window" not in _titles(env) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "probe-window" in _titles(env)
    env.step("computer.close_window('probe-window')")
    deadline = time.monotonic() + 10
    while "probe-window" in _titles(env) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "probe-window" not in _titles(env)
    assert provider.app_running()
