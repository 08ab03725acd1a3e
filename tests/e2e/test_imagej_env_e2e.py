"""The env contract on the real ImageJ under Xvfb: spaces, actions, CLI, budget, crashes."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from helpers import assert_dump_leaves_screen

import sciagent_gym  # noqa: F401
from sciagent_gym.errors import SciAgentError

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]


def test_make_without_import_registers_the_env():
    code = ("import gymnasium as gym; env = gym.make('sciagent_gym:SciGUI-ImageJ-v0'); "
            "print(env.spec.id, type(env.unwrapped).__name__); env.close()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, cwd="/")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["SciGUI-ImageJ-v0", "SciGUIEnv"]


def test_reset_gives_a_valid_observation(imagej_env):
    obs, info = imagej_env.reset(seed=3, options={"task": "count-nuclei"})
    assert imagej_env.observation_space.contains(obs)
    assert obs["screenshot"].shape == (800, 1280, 3) and obs["screenshot"].dtype == np.uint8
    assert obs["screenshot"].std() > 5  # ImageJ's window and the image are on screen
    assert "nuclei" in obs["instruction"] and obs["terminal"] == ""
    assert info["task_id"] == "imagej/count-nuclei"
    assert {w.title for w in imagej_env.unwrapped.provider.windows()} >= {"ImageJ", "nuclei.tif"}
    assert np.array_equal(imagej_env.render(), obs["screenshot"])


def test_same_seed_same_variant(imagej_env):
    _, a = imagej_env.reset(seed=11)
    _, b = imagej_env.reset(seed=11)
    assert (a["task_id"], a["variant"], a["instruction"]) == \
        (b["task_id"], b["variant"], b["instruction"])


def _text_window(env) -> int:
    """Open an ImageJ text window through the macro channel; return its window id."""
    base = env.unwrapped
    base.adapter.run_script(base.provider,
                            'run("Text Window...", "name=Typed width=60 height=8");')
    base.provider.wait_settled()
    wins = [w for w in base.provider.windows() if w.title == "Typed"]
    assert wins, [w.title for w in base.provider.windows()]
    return wins[0]


def test_typing_is_exact_symbols_and_upper_case(imagej_env):
    imagej_env.reset(seed=0, options={"task": "count-nuclei"})
    win = _text_window(imagej_env)
    cx, cy = win.x + win.width // 2, win.y + win.height // 2
    text = "Hello, World! 42 ~`@#$%^&*()_+-=[]{}|\\;:'\",.<>/? ABCxyz"
    obs, _, term, trunc, info = imagej_env.step(f"pyautogui.click({cx}, {cy})\n"
                                                f"pyautogui.write({text!r})")
    assert "action_error" not in info and not term and not trunc
    base = imagej_env.unwrapped
    typed = base.adapter.run_script(
        base.provider, 'selectWindow("Typed"); __out__ = getInfo("window.contents");')
    assert typed.rstrip("\n") == text


def test_bad_actions_do_nothing_and_the_episode_goes_on(imagej_env):
    imagej_env.reset(seed=0, options={"task": "count-nuclei"})
    bad = [
        ("pyautogui.click(5000, 10)", "off"),
        ("pyautogui.press('notakey')", "unknown key"),
        ("pyautogui.click(10,", "yntax"),
        ("os.system('rm -rf /')", None),
        ("pyautogui.click(x=foo, y=1)", None),
        ({"type": "teleport"}, "teleport"),
        (42, "unsupported"),
    ]
    for action, fragment in bad:
        obs, reward, term, trunc, info = imagej_env.step(action)
        assert "action_error" in info, action
        assert fragment is None or fragment in info["action_error"], info["action_error"]
        assert reward == 0.0 and not term and not trunc
        assert imagej_env.observation_space.contains(obs)
    _, _, term, _, info = imagej_env.step("pyautogui.moveTo(600, 400)")
    assert "action_error" not in info and not term


def test_cli_action_runs_in_the_sandbox(imagej_env):
    imagej_env.reset(seed=0, options={"task": "count-nuclei"})
    obs, _, _, _, info = imagej_env.step('run("echo hello > out.txt && cat out.txt && pwd")')
    assert "action_error" not in info
    assert "hello" in obs["terminal"] and "[exit 0]" in obs["terminal"]
    assert "/home/user/work" in obs["terminal"]
    assert (imagej_env.unwrapped.provider.host_work_dir / "out.txt").read_text() == "hello\n"
    obs, *_ = imagej_env.step({"type": "run", "command": "exit 3"})
    assert "[exit 3]" in obs["terminal"]


def test_cli_isolation_hides_host_gold_and_network(imagej_env):
    # gaussian-blur-save keeps its reference image in a host-side gold directory
    imagej_env.reset(seed=0, options={"task": "gaussian-blur-save"})
    base = imagej_env.unwrapped
    if base.provider.isolation != "bwrap":
        pytest.fail("bubblewrap isolation is not available; CLI isolation cannot be tested")
    gold_dir = base.task.gold_dir
    assert gold_dir is not None and any(gold_dir.iterdir())
    hidden = [str(REPO), str(base.provider.sandbox.root), sys.prefix, str(gold_dir)]
    for path in hidden:
        obs, *_ = imagej_env.step({"type": "run", "command": f"ls {path}"})
        assert "[exit 0]" not in obs["terminal"], (path, obs["terminal"])
    obs, *_ = imagej_env.step({"type": "run", "command": "cat /proc/net/dev"})
    interfaces = [line.split(":")[0].strip() for line in obs["terminal"].splitlines()
                  if ":" in line and "|" not in line]
    assert interfaces == ["lo"], obs["terminal"]


def test_cli_timeout_is_reported(imagej_env):
    imagej_env.reset(seed=0, options={"task": "count-nuclei"})
    obs, _, term, _, _ = imagej_env.step({"type": "run", "command": "sleep 30", "timeout": 0.5})
    assert "[timed out]" in obs["terminal"] and not term


def test_cli_timeout_with_a_detached_child_holding_the_output(imagej_env):
    """A child in its own session keeps the output pipe open after the timeout kills the
    command's group: the answer still comes, and the sandbox keeps working."""
    imagej_env.reset(seed=0, options={"task": "count-nuclei"})
    t0 = time.monotonic()
    obs, *_ = imagej_env.step({"type": "run", "timeout": 0.5,
                               "command": "echo started; setsid sleep 60 & sleep 30"})
    assert time.monotonic() - t0 < 10
    assert "[timed out]" in obs["terminal"] and "started" in obs["terminal"]
    obs, *_ = imagej_env.step({"type": "run", "command": "echo still-here"})
    assert "still-here" in obs["terminal"] and "[exit 0]" in obs["terminal"]


def test_step_budget_truncates_and_still_evaluates():
    env = gym.make("SciGUI-ImageJ-v0", task="count-nuclei", max_steps=2)
    try:
        env.reset(seed=0)
        _, r1, t1, tr1, info1 = env.step("WAIT")
        assert (r1, t1, tr1) == (0.0, False, False) and "evaluation" not in info1
        _, r2, t2, tr2, info2 = env.step("pyautogui.moveTo(10, 10)")
        assert tr2 and not t2
        assert info2["evaluation"]["score"] == r2 == 0.0
        with pytest.raises(gym.error.ResetNeeded):
            env.step("WAIT")
    finally:
        env.close()


def test_app_crash_mid_episode_ends_it_cleanly(imagej_env):
    imagej_env.reset(seed=0, options={"task": "count-nuclei"})
    imagej_env.unwrapped.provider.sandbox.kill("app")
    obs, reward, term, trunc, info = imagej_env.step("pyautogui.click(100, 100)")
    assert trunc and not term and "app_crashed" in info
    assert info["evaluation"]["score"] == 0.0
    assert imagej_env.observation_space.contains(obs)
    _, info = imagej_env.reset(seed=1)  # the env recovers on the next reset
    assert imagej_env.unwrapped.provider.app_running()


def test_done_fail_terminate_with_evaluation(imagej_env):
    imagej_env.reset(seed=0, options={"task": "count-nuclei"})
    _, reward, term, trunc, info = imagej_env.step("FAIL")
    assert term and not trunc and reward == 0.0
    assert set(info["evaluation"]) >= {"score", "success", "criteria"}
    for c in info["evaluation"]["criteria"]:
        assert set(c) >= {"name", "weight", "passed", "detail"}


def test_two_envs_in_one_process_do_not_collide():
    a = gym.make("SciGUI-ImageJ-v0", task="count-nuclei", modality="gui+cli")
    b = gym.make("SciGUI-ImageJ-v0", task="count-nuclei", modality="gui+cli")
    try:
        a.reset(seed=0)
        b.reset(seed=1)
        pa, pb = a.unwrapped.provider, b.unwrapped.provider
        assert pa.display_name != pb.display_name
        a.step('run("touch only-in-a")')
        assert (pa.host_work_dir / "only-in-a").exists()
        assert not (pb.host_work_dir / "only-in-a").exists()
        answer_a = a.unwrapped.adapter.run_script(pa, "__out__ = getTitle();")
        answer_b = b.unwrapped.adapter.run_script(pb, "__out__ = getTitle();")
        assert answer_a == answer_b == "nuclei.tif"
    finally:
        a.close()
        b.close()


def test_missing_program_names_the_package(monkeypatch):
    from sciagent_gym.errors import MissingProgramError
    from sciagent_gym.tools import Requirement, tool_info

    info = tool_info("imagej")
    monkeypatch.setattr(type(info), "requires", property(lambda self: (
        Requirement("definitely-not-installed-ij", "imagej"),)), raising=False)
    with pytest.raises(MissingProgramError, match="apt-get install -y imagej"):
        gym.make("SciGUI-ImageJ-v0")


def test_macro_errors_are_reported_not_hung(imagej_env):
    imagej_env.reset(seed=0, options={"task": "count-nuclei"})
    base = imagej_env.unwrapped
    with pytest.raises(SciAgentError, match="Macro Error"):
        base.adapter.run_script(base.provider, "thisIsNotAFunction(;", timeout=10)
    assert "Macro Error" not in {w.title for w in base.provider.windows()}


def test_state_dump_leaves_the_screen_as_it_was(imagej_env):
    assert_dump_leaves_screen(imagej_env, "imagej/count-nuclei")


def test_answer_action_lands_in_the_final_state(imagej_env):
    imagej_env.reset(seed=0, options={"task": "count-nuclei"})
    obs, reward, terminated, _, info = imagej_env.step('answer("12 nuclei")')
    assert not terminated and reward == 0 and "action_error" not in info
    assert obs["terminal"] == "answer recorded: 12 nuclei"
    imagej_env.step({"type": "answer", "text": "13"})      # the last answer counts
    imagej_env.step("DONE")
    assert imagej_env.unwrapped.final_state.answer == "13"
    imagej_env.reset(seed=0, options={"task": "count-nuclei"})
    imagej_env.step("DONE")
    assert imagej_env.unwrapped.final_state.answer is None  # answers do not carry over


def test_gui_modality_refuses_the_shell():
    env = gym.make("SciGUI-ImageJ-v0", task="count-nuclei", modality="gui", pool_size=0)
    try:
        _, info = env.reset(seed=0)
        assert info["modality"] == "gui" and info["cli_allowed"] is False
        *_, info = env.step('run("touch marker")')
        assert "run() refused: the task's modality is 'gui'" in info["action_error"]
        *_, info = env.step({"type": "launch", "command": "touch marker2"})
        assert "launch() refused" in info["action_error"]
        work = env.unwrapped.provider.host_work_dir
        assert not (work / "marker").exists() and not (work / "marker2").exists()
    finally:
        env.close()
