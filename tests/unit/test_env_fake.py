"""SciGUIEnv's own logic, and the fake provider it runs on here: no display, no program.

The env is made with ``provider="fake"`` (:mod:`sciagent_gym.providers.fake`) on the fixture
tool ``faketool`` (``tests/fixtures/tools``, joined with ``add_tools_root``): its tasks are
staged into a real temporary work directory and scored by the real evaluator from files, the
answer and the fake program's ``app_state``. A test plays the program through the provider:
``env.provider.respond`` reacts to GUI actions, ``app_state`` is what a state dump reads,
``script_command`` says what a shell command does, ``crash()`` ends the program.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from gymnasium.error import ResetNeeded

from sciagent_gym.actions import types as A
from sciagent_gym.env import PROVIDERS, SciGUIEnv, provider_class
from sciagent_gym.errors import FakeProviderError
from sciagent_gym.evaluation.rewards import REWARDS
from sciagent_gym.providers.base import Provider
from sciagent_gym.providers.fake import FakeProvider
from sciagent_gym.tasks.task import HELDOUT_SPLIT, STATUS_GATE, split_of
from sciagent_gym.tools.discovery import add_tools_root, discover, remove_tools_root

FIXTURE_TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "tools"
SUM, REPORT, HELDOUT = "faketool/sum-numbers", "faketool/write-report", "faketool/count-lines"
SIZE = (160, 100)


@pytest.fixture(scope="module", autouse=True)
def fixture_tools():
    add_tools_root(FIXTURE_TOOLS)
    yield
    remove_tools_root(FIXTURE_TOOLS)


@pytest.fixture
def make():
    """``make(**env kwargs)``: a fake-provider env on the fixture tool, closed after the test."""
    made: list[SciGUIEnv] = []

    def _make(**kwargs) -> SciGUIEnv:
        kwargs.setdefault("screen_size", SIZE)
        env = SciGUIEnv("faketool", provider=kwargs.pop("provider", "fake"), **kwargs)
        made.append(env)
        return env

    yield _make
    for env in made:
        env.close()


def the_sum(env: SciGUIEnv) -> int:
    return env.task.gold["numbers"]["sum"]


def save_on_click(provider: FakeProvider, action: A.Action) -> None:
    """The fake program's Save button: any click writes sum.txt and marks the state saved."""
    if isinstance(action, A.Click):
        total = sum(int(v) for v in (provider.host_work_dir / "numbers.txt").read_text().split())
        (provider.host_work_dir / "sum.txt").write_text(f"{total}\n")
        provider.app_state["saved"] = True


def our_temp_dirs() -> set[str]:
    """This process's package temp dirs (``sciagent-<kind>-<pid>-*``)."""
    return {p.name for p in Path(tempfile.gettempdir()).glob(f"sciagent-*-{os.getpid()}-*")}


# -- the fake provider itself ------------------------------------------------------------------

def test_fake_reset_restores_home_and_stages_inputs(make):
    env = make(task=SUM)
    env.reset(seed=3)
    fake = env.provider
    work, home = fake.host_work_dir, Path(fake.paths["home"])
    numbers = (work / "numbers.txt").read_text()
    assert len(numbers.split()) == env.task.params["count"]
    assert (home / ".fakerc").read_text() == "theme = dark\n"  # the snapshot home
    assert Path(fake.paths["work"]) == work and work.is_relative_to(fake.root)
    (work / "stray.txt").write_text("left by the last episode")
    (home / ".fakerc").write_text("changed")
    env.reset(seed=3)
    assert not (work / "stray.txt").exists()
    assert (home / ".fakerc").read_text() == "theme = dark\n"
    assert (work / "numbers.txt").read_text() == numbers  # same seed, same inputs
    env.reset(seed=4)
    assert (work / "numbers.txt").read_text() != numbers


def test_fake_frames_are_deterministic_and_follow_actions(make):
    a, b = make(task=SUM), make(task=SUM)
    start_a, _ = a.reset(seed=0)
    start_b, _ = b.reset(seed=0)
    assert start_a["screenshot"].shape == (SIZE[1], SIZE[0], 3)
    assert np.array_equal(start_a["screenshot"], start_b["screenshot"])
    after_a = a.step("pyautogui.click(40, 30)")[0]["screenshot"]
    after_b = b.step("pyautogui.click(40, 30)")[0]["screenshot"]
    assert not np.array_equal(after_a, start_a["screenshot"])
    assert np.array_equal(after_a, after_b)
    key_a = a.step("pyautogui.press('a')")[0]["screenshot"]
    key_b = b.step("pyautogui.press('b')")[0]["screenshot"]
    assert not np.array_equal(key_a, after_a)  # a key press shows too
    assert not np.array_equal(key_a, key_b)
    assert a.provider.executed == [A.Click(40, 30), A.Press("a")]
    assert a.provider.pointer_xy == (40, 30)
    a.reset(seed=0)
    assert a.provider.executed == []
    assert np.array_equal(a.provider.screenshot(), start_a["screenshot"])


def test_fake_scripted_commands_and_refusals(make):
    env = make(task=REPORT)
    env.reset(seed=0)
    fake = env.provider
    fake.script_command("echo ok > report.txt", files={"report.txt": "ok\n"})
    fake.script_command("make", output="boom\n", returncode=2)
    result = fake.run_command("echo ok > report.txt")
    assert (result.returncode, result.output) == (0, "")
    assert (fake.host_work_dir / "report.txt").read_text() == "ok\n"
    assert fake.run_command("make").terminal_text("make").endswith("boom\n[exit 2]")
    assert fake.commands == ["echo ok > report.txt", "make"]
    with pytest.raises(FakeProviderError, match="'ls -l' has no scripted result"):
        fake.run_command("ls -l")
    with pytest.raises(FakeProviderError, match="cannot start programs"):
        fake.spawn_in_sandbox("helper", ["sleep", "1"])
    with pytest.raises(FakeProviderError, match="cannot start"):
        fake.launch_command("x", ["sleep", "5"])
    with pytest.raises(ValueError, match="inside the work directory"):
        fake.script_command("evil", files={"../outside.txt": "x"})
    # a real tool's state channel fails as with a dead program, never with made-up data
    with pytest.raises(FakeProviderError):
        env.adapter.run_client(fake, "client", "/nowhere", argv=["client"], timeout=1.0)
    with pytest.raises(FakeProviderError, match="cannot start channel clients"):
        env.adapter.call_client(fake, "client", code="pass", timeout=1.0)


def test_fake_windows_clipboard_and_files(make):
    env = make(task=SUM)
    env.reset(seed=0)
    fake = env.provider
    (main,) = fake.windows()
    assert (main.title, main.active) == ("Fake Tool", True)
    dialog = fake.open_window("Save As", modal=True)
    assert [w.active for w in fake.windows()] == [False, True]
    fake.activate_window(main.id)
    assert [w.active for w in fake.windows()] == [True, False]
    fake.close_window(dialog)
    assert [w.title for w in fake.windows()] == ["Fake Tool"]
    with pytest.raises(FakeProviderError, match="no window with id 99"):
        fake.close_window(99)
    fake.set_clipboard("copied")
    assert fake.get_clipboard() == "copied"
    answer = Path(fake.paths["tmp"]) / "answer.txt"
    answer.write_text("42")
    assert fake.read_file(str(answer), remove=True) == "42" and not answer.exists()
    assert fake.read_file(str(answer)) is None
    with pytest.raises(FakeProviderError, match="outside the fake sandbox"):
        fake.read_file("/etc/hostname")
    env.reset(seed=0)
    assert fake.get_clipboard() == "" and len(fake.windows()) == 1


def test_fake_crash_and_close(make):
    env = make(task=SUM)
    env.reset(seed=0)
    fake = env.provider
    assert fake.app_running()
    fake.crash("java.lang.OutOfMemoryError")
    assert not fake.app_running() and fake.windows() == []
    assert fake.app_log_tail().endswith("java.lang.OutOfMemoryError")
    root = fake.root
    assert root.is_dir()
    fake.close()
    assert not root.exists() and fake.root is None
    fake.close()  # twice is fine
    with pytest.raises(FakeProviderError, match="closed"):
        fake.screenshot()
    with pytest.raises(FakeProviderError, match="closed"):
        _ = fake.paths


def test_capabilities_are_declared_per_class():
    from sciagent_gym.providers.local.provider import LocalProvider
    from sciagent_gym.providers.qemu.provider import QemuProvider
    from sciagent_gym.providers.remote import RemoteProvider

    assert (LocalProvider.supports_soft_reset, LocalProvider.supports_pool) == (True, True)
    for cls in (FakeProvider, RemoteProvider, QemuProvider):
        assert (cls.supports_soft_reset, cls.supports_pool) == (False, False), cls
    assert [provider_class(name).__name__ for name in PROVIDERS] == \
        ["LocalProvider", "QemuProvider", "RemoteProvider", "FakeProvider"]

    assert issubclass(FakeProvider, Provider)
    fake = FakeProvider(*SIZE)
    try:
        with pytest.raises(NotImplementedError, match="supports_soft_reset is False"):
            fake.soft_reset(None, None)
        with pytest.raises(NotImplementedError, match="supports_pool is False"):
            fake.prefetch(None, [])
    finally:
        fake.close()


# -- reward modes --------------------------------------------------------------------------------

def test_reward_modes_are_the_ones_tested():
    # "stbench" is tested in test_stbench_reward_mode.py (it needs a query's metric criteria)
    from sciagent_gym.benchmarks import load_all  # what constructing an env does

    load_all()
    assert set(REWARDS) == {"partial", "binary", "dense", "stbench"}


@pytest.mark.parametrize("mode, answer_only, everything", [
    ("partial", 0.5, 1.0),
    ("binary", 0.0, 1.0),
    ("dense", 0.5, 1.0),
])
def test_final_reward_per_mode(make, mode, answer_only, everything):
    env = make(task=SUM, reward=mode)
    env.reset(seed=1)
    rewards = [env.step(f'answer("{the_sum(env)}")')[1]]
    rewards.append(env.step("DONE")[1])
    assert sum(rewards) == pytest.approx(answer_only)
    assert env.evaluation.score == pytest.approx(0.5)
    if mode != "dense":
        assert rewards[0] == 0.0

    env.reset(seed=1)
    env.provider.respond = save_on_click
    rewards = [env.step(f'answer("{the_sum(env)}")')[1], env.step("pyautogui.click(50, 50)")[1]]
    obs, last, terminated, truncated, info = env.step("DONE")
    assert sum(rewards) + last == pytest.approx(everything)
    assert info["evaluation"]["success"] is True and terminated and not truncated


def test_dense_reward_tracks_cheap_progress_and_sums_to_the_score(make):
    env = make(task=SUM, reward="dense")
    env.reset(seed=2)
    env.provider.respond = save_on_click
    assert env.step("pyautogui.press('space')")[1] == 0.0  # nothing done yet
    assert env.step(f'answer("{the_sum(env)}")')[1] == pytest.approx(0.5)  # 2 of 4 weight
    assert env.step("pyautogui.click(10, 60)")[1] == pytest.approx(0.25)  # sum.txt (cheap)
    # the program's "saved" flag is an app-state criterion: expensive, only scored at the end
    assert env.step('answer("1")')[1] == pytest.approx(-0.5)  # a wrong answer takes it back
    final = env.step(f'answer("{the_sum(env)}")')[1]
    assert final == pytest.approx(0.5)
    last = env.step("DONE")[1]
    assert last == pytest.approx(0.25)  # the expensive criterion, paid at the end
    assert env.evaluation.score == pytest.approx(1.0)


def test_partial_rewards_are_zero_until_the_end(make):
    env = make(task=SUM)
    env.reset(seed=0)
    env.provider.respond = save_on_click
    for action in (f'answer("{the_sum(env)}")', "pyautogui.click(5, 5)"):
        assert env.step(action)[1:4] == (0.0, False, False)
    assert env.step("DONE")[1] == 1.0


def test_a_changed_protected_input_is_no_success(make):
    env = make(task=SUM, reward="binary")
    env.reset(seed=0)
    total = the_sum(env)

    def save_and_scribble(provider, action):
        save_on_click(provider, action)
        (provider.host_work_dir / "numbers.txt").write_text("0\n")

    env.provider.respond = save_and_scribble
    env.step(f'answer("{total}")')
    env.step("pyautogui.click(5, 5)")
    _, reward, _, _, info = env.step("DONE")
    assert reward == 0.0
    # the right answer, but a requirement broken: half the score, never 1.0 (it was)
    assert info["evaluation"]["score"] == pytest.approx(0.5)
    assert info["evaluation"]["success"] is False
    assert not info["evaluation"]["criteria"][0]["passed"]  # "input numbers.txt unchanged"


# -- episode ends ----------------------------------------------------------------------------------

def test_truncation_at_max_steps(make):
    env = make(task=SUM, max_steps=3)
    _, info = env.reset(seed=0)
    assert info["max_steps"] == 3
    for _ in range(2):
        assert env.step("pyautogui.press('a')")[2:4] == (False, False)
    _, reward, terminated, truncated, info = env.step("pyautogui.press('a')")
    assert (terminated, truncated, info["end"], info["steps"]) == (False, True, "truncated", 3)
    assert reward == 0.0 and "evaluation" in info
    with pytest.raises(ResetNeeded):
        env.step("pyautogui.press('a')")


def test_default_step_budget_is_the_specs(make):
    env = make(task=SUM)
    _, info = env.reset(seed=0)
    assert info["max_steps"] == 6 == env.task.spec.max_steps
    for _ in range(5):
        assert not env.step("pyautogui.press('a')")[3]
    assert env.step("pyautogui.press('a')")[3]


@pytest.mark.parametrize("word, end, score", [("DONE", "done", 0.5), ("FAIL", "fail", 0.0)])
def test_done_and_fail_terminate(make, word, end, score):
    """Both end the episode; on a feasible task FAIL scores 0 whatever was done before it."""
    env = make(task=SUM)
    env.reset(seed=0)
    env.step(f'answer("{the_sum(env)}")')
    _, reward, terminated, truncated, info = env.step(word)
    assert (terminated, truncated, info["end"]) == (True, False, end)
    assert reward == pytest.approx(score) and info["evaluation"]["score"] == pytest.approx(score)
    assert env.final_state.agent_status == end
    gate = next(c for c in info["evaluation"]["criteria"] if c["name"] == STATUS_GATE)
    assert gate["passed"] == (word == "DONE") and not info["evaluation"]["success"]


def test_nothing_after_done_in_the_same_step_is_performed(make):
    env = make(task=SUM)
    env.reset(seed=0)
    _, _, terminated, _, info = env.step([A.Done(), A.Click(3, 3)])
    assert terminated and info["end"] == "done" and env.provider.executed == []


def test_a_crash_truncates_with_the_programs_output(make):
    env = make(task=SUM)
    env.reset(seed=0)

    def crash_on_f(provider, action):
        if action == A.Press("f"):
            provider.crash("core dumped")

    env.provider.respond = crash_on_f
    assert not env.step("pyautogui.press('g')")[3]
    _, reward, terminated, truncated, info = env.step("pyautogui.press('f')")
    assert (terminated, truncated, info["end"], reward) == (False, True, "crashed", 0.0)
    assert "Fake Tool exited" in info["app_crashed"] and "core dumped" in info["app_crashed"]
    assert env.final_state.app_state is None
    assert env.final_state.app_state_error == "the program is not running"


def test_a_zone_over_its_memory_budget_truncates_and_the_next_reset_is_normal(make):
    env = make(task=SUM)
    env.reset(seed=0)
    env.step(f'answer("{the_sum(env)}")')
    reason = "agent zone used 4.30 GiB of 4.00 GiB (processes 4.00 GiB, tmpfs 300 MiB)"

    def bomb_on_m(provider, action):
        if action == A.Press("m"):
            provider.exceed_limit(reason)

    env.provider.respond = bomb_on_m
    stops = env.provider.agent_stops
    _, reward, terminated, truncated, info = env.step("pyautogui.press('m')")
    assert (terminated, truncated, info["end"], info["limit"]) == (False, True, "limit", reason)
    assert env.provider.agent_stops > stops  # the zone's processes were ended
    # the reward is the evaluator's on the final state (the answer still counts)
    assert reward == pytest.approx(info["evaluation"]["score"]) == pytest.approx(0.5)
    assert env.final_state.agent_status == "limit"
    with pytest.raises(ResetNeeded):
        env.step("WAIT")
    env.reset(seed=0)
    assert env.provider.limit_exceeded() is None
    _, _, terminated, truncated, info = env.step("pyautogui.press('m')")
    assert info["end"] == "limit"  # the budget is checked again in the new episode
    env.reset(seed=0)
    _, _, terminated, truncated, info = env.step("pyautogui.press('a')")
    assert not (terminated or truncated) and "limit" not in info


def test_a_stopped_program_zone_ends_as_limit_not_crash_even_with_done(make):
    env = make(task=SUM)
    env.reset(seed=0)
    env.provider.respond = lambda p, a: p.exceed_limit("program zone used 7 GiB", "program")
    _, _, _, truncated, info = env.step("pyautogui.press('x')")
    assert (truncated, info["end"], info["limit"]) == (True, "limit", "program zone used 7 GiB")
    assert "app_crashed" not in info and not env.provider.app_running()
    env.reset(seed=0)
    env.provider.exceed_limit()  # between steps (a background process), then DONE
    _, _, terminated, truncated, info = env.step("DONE")
    assert (terminated, truncated, info["end"]) == (False, True, "limit")


# -- actions ---------------------------------------------------------------------------------------

def test_a_bad_action_is_reported_and_keeps_the_episode(make):
    env = make(task=SUM)
    start, _ = env.reset(seed=0)
    env.step(f'answer("{the_sum(env)}")')
    obs, reward, terminated, truncated, info = env.step("pyautogui.frobnicate(1, 2)")
    assert "frobnicate" in info["action_error"]
    assert info["parsed"] == [] and env.provider.executed == []
    assert (reward, terminated, truncated, info["steps"]) == (0.0, False, False, 2)
    assert np.array_equal(obs["screenshot"], start["screenshot"])
    assert "answer recorded" in obs["terminal"]  # the observation keeps what came before
    _, _, _, _, info = env.step({"type": "click", "x": 10_000, "y": 5})
    assert "action_error" in info and env.provider.executed == []
    assert env.step("DONE")[1] == pytest.approx(0.5)  # the earlier answer still counts


def test_an_action_the_program_rejects_is_reported(make):
    env = make(task=SUM)
    env.reset(seed=0)

    def broken(provider, action):
        raise RuntimeError("widget gone")

    env.provider.respond = broken
    _, _, terminated, truncated, info = env.step("pyautogui.click(7, 7)")
    assert info["action_error"] == "Click failed: widget gone"
    assert not (terminated or truncated)


def test_the_last_answer_counts_and_does_not_end_the_episode(make):
    env = make(task=SUM)
    obs, _ = env.reset(seed=5)
    assert obs["terminal"] == ""
    obs, _, terminated, _, _ = env.step('answer("3")')
    assert not terminated and obs["terminal"] == "answer recorded: 3"
    env.step(f'answer("{the_sum(env)} units")')
    env.step("DONE")
    assert env.final_state.answer == f"{the_sum(env)} units"
    assert env.evaluation.criteria[1].passed  # "answer is the sum"


def test_computer_api_actions_through_the_fake(make):
    env = make(task=SUM)
    env.reset(seed=0)
    env.step({"type": "set_clipboard", "text": "42"})
    obs = env.step({"type": "get_clipboard"})[0]
    assert obs["terminal"] == "clipboard:\n42"
    env.provider.open_window("Results")
    obs = env.step({"type": "list_windows"})[0]
    assert "'Results'" in obs["terminal"] and "'Fake Tool'" in obs["terminal"]
    env.step({"type": "close_window", "title": "results"})
    assert [w.title for w in env.provider.windows()] == ["Fake Tool"]
    info = env.step({"type": "activate_window", "title": "Nope"})[4]
    assert "no window titled 'Nope'" in info["action_error"]


def test_settle_capped_is_reported(make):
    env = make(task=SUM)
    env.reset(seed=0)
    assert "settle_capped" not in env.step("pyautogui.click(3, 3)")[4]
    env.provider.animating = True
    assert env.step("pyautogui.click(3, 3)")[4]["settle_capped"] is True
    assert "settle_capped" not in env.step('answer("1")')[4]  # no screen action, no settle


# -- the shell, by modality ------------------------------------------------------------------------

def test_cli_refused_on_a_gui_task(make):
    env = make(task=SUM)
    _, info = env.reset(seed=0)
    assert (info["modality"], info["cli_allowed"]) == ("gui", False)
    env.provider.script_command("echo 1 > sum.txt", files={"sum.txt": "1\n"})
    info = env.step('run("echo 1 > sum.txt")')[4]
    assert "run() refused: the task's modality is 'gui'" in info["action_error"]
    info = env.step({"type": "launch", "command": "echo 1 > sum.txt"})[4]
    assert "launch() refused" in info["action_error"]
    assert env.provider.commands == [] and not (env.provider.host_work_dir / "sum.txt").exists()


def test_cli_on_a_gui_cli_task(make):
    env = make(task=REPORT)
    _, info = env.reset(seed=0)
    assert (info["modality"], info["cli_allowed"]) == ("gui+cli", True)
    env.provider.script_command("echo ok > report.txt", output="", files={"report.txt": "ok\n"})
    obs, *_ = env.step('run("echo ok > report.txt")')
    assert obs["terminal"] == "$ echo ok > report.txt\n[exit 0]"
    info = env.step('run("rm -rf /")')[4]
    assert "no scripted result" in info["action_error"]
    _, reward, *_ = env.step("DONE")
    assert reward == 1.0


@pytest.mark.parametrize("task, modality, allowed", [
    (SUM, "gui+cli", True), (REPORT, "gui", False), (REPORT, None, True), (SUM, None, False)])
def test_modality_override(make, task, modality, allowed):
    env = make(task=task, modality=modality)
    _, info = env.reset(seed=0)
    assert info["cli_allowed"] is allowed
    assert info["modality"] == (modality or env.task.spec.modality)
    env.provider.script_command("true")
    info = env.step('run("true")')[4]
    assert ("action_error" not in info) is allowed
    assert env.provider.commands == (["true"] if allowed else [])


def test_cli_needs_isolation_unless_allowed_unsafe(make):
    env = make(task=REPORT, provider_options={"cli_isolated": False})
    _, info = env.reset(seed=0)
    assert info["cli_allowed"] is False
    assert "isolated sandbox" in env.step('run("true")')[4]["action_error"]
    env = make(task=REPORT, provider_options={"cli_isolated": False}, allow_unsafe_cli=True)
    _, info = env.reset(seed=0)
    assert info["cli_allowed"] is True


# -- task selection and splits ---------------------------------------------------------------------

def test_splits_draw_from_their_side(make):
    for split in ("train", "test"):
        env = make(split=split)
        for seed in range(8):
            _, info = env.reset(seed=seed)
            assert info["task_id"] != HELDOUT
            assert info["split"] == split == split_of(info["task_id"], info["variant"])
    env = make(split=HELDOUT_SPLIT)
    assert env.task_ids == [HELDOUT]
    for seed in range(4):
        _, info = env.reset(seed=seed)
        assert (info["task_id"], info["split"]) == (HELDOUT, HELDOUT_SPLIT)


def test_without_a_split_every_task_is_drawn(make):
    env = make()
    seen = {env.reset(seed=seed)[1]["task_id"] for seed in range(30)}
    assert seen == {SUM, REPORT, HELDOUT}
    _, info = env.reset(seed=0, options={"task": "count-lines", "variant": 7})
    assert (info["task_id"], info["variant"], info["split"]) == (HELDOUT, 7, HELDOUT_SPLIT)


def test_a_fixed_task_outside_the_split_is_refused():
    with pytest.raises(ValueError, match="is a held-out task"):
        SciGUIEnv("faketool", provider="fake", task="count-lines", split="train")
    with pytest.raises(ValueError, match="is not a held-out task"):
        SciGUIEnv("faketool", provider="fake", task="sum-numbers", split=HELDOUT_SPLIT)
    with pytest.raises(ValueError, match="unknown task 'nope'"):
        SciGUIEnv("faketool", provider="fake", task="nope")


def test_reset_info_and_observation(make):
    env = make(task=SUM, hints=True, obs_size=(80, 50), expose_state=True)
    obs, info = env.reset(seed=9)
    assert set(info) >= {"task_id", "variant", "split", "instruction", "difficulty", "max_steps",
                         "modality", "cli_allowed", "timings", "state"}
    assert obs["screenshot"].shape == (50, 80, 3) and env.observation_space.contains(obs)
    assert obs["instruction"] == info["instruction"] == env.task.instruction
    assert f"holds {env.task.params['count']} whole numbers" in obs["instruction"]
    assert obs["instruction"].endswith("Hint: Select all, then Sum.")
    assert env.provider.paths["work"] in obs["instruction"]
    assert info["state"] == {"open": ["numbers.txt"]}
    env.provider.app_state["zoom"] = 2
    assert env.step("pyautogui.press('a')")[4]["state"]["zoom"] == 2
    step_info = env.step("DONE")[4]
    assert set(step_info) >= {"timings", "steps", "parsed", "evaluation", "end"}


# -- lifecycle and options -------------------------------------------------------------------------

def test_reset_and_close_leave_no_temp_dirs(make):
    before = our_temp_dirs()
    env = SciGUIEnv("faketool", provider="fake", screen_size=SIZE, task=SUM, reward="dense")
    try:
        env.reset(seed=0)
        root = env.provider.root
        env.step(f'answer("{the_sum(env)}")')
        env.step("DONE")
        assert env.final_state.work_dir.is_dir()  # the frozen copy lives until the next reset
        frozen = env.final_state.work_dir
        env.reset(seed=1)
        assert not frozen.exists()
        assert our_temp_dirs() - before == {root.name}
    finally:
        env.close()
    assert env.provider is None and not root.exists()
    assert our_temp_dirs() == before


def test_soft_reset_and_pool_are_refused_where_unsupported():
    remote = {"url": "http://127.0.0.1:9", "token": "t" * 32}
    for name, extra in (("fake", {}), ("remote", remote), ("qemu", {})):
        with pytest.raises(ValueError, match=f"soft_reset=1: the {name} provider cannot"):
            SciGUIEnv("faketool", provider=name, soft_reset=1, **extra)
        with pytest.raises(ValueError, match=f"pool_size=2: the {name} provider keeps no"):
            SciGUIEnv("faketool", provider=name, pool_size=2, pool_workers=1, **extra)
        for size in (0, 1):  # 1 is the default: it means no spare here
            env = SciGUIEnv("faketool", provider=name, pool_size=size, **extra)
            assert env.pool_size == 0 and env.provider is None  # nothing started yet
            env.close()
    env = SciGUIEnv("faketool", provider="local", pool_size=2, soft_reset=3)
    assert (env.pool_size, env.soft_reset, env.provider) == (2, 3, None)
    env.close()


def test_the_fixture_tool_is_only_there_while_added():
    add_tools_root(FIXTURE_TOOLS)
    assert "faketool" in discover()
    remove_tools_root(FIXTURE_TOOLS)
    try:
        assert "faketool" not in discover()
        with pytest.raises(KeyError, match="unknown tool 'faketool'"):
            SciGUIEnv("faketool", provider="fake")
    finally:
        add_tools_root(FIXTURE_TOOLS)
    with pytest.raises(FileNotFoundError, match="not a tools root"):
        add_tools_root(FIXTURE_TOOLS / "envs")
