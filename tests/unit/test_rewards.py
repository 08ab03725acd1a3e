"""Rewards and episode reports are registered by name, so a ported benchmark adds its own
without a branch in the env (fake provider, fixture tool)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from sciagent_gym.env import SciGUIEnv
from sciagent_gym.evaluation.rewards import (
    REPORTS,
    REWARDS,
    EpisodeEnd,
    EpisodeReport,
    Reward,
    cheat_findings,
    get_reward,
    register_report,
    register_reward,
)
from sciagent_gym.tools.discovery import add_tools_root, remove_tools_root

FIXTURE_TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "tools"
SUM = "faketool/sum-numbers"


@pytest.fixture(scope="module", autouse=True)
def fixture_tools():
    add_tools_root(FIXTURE_TOOLS)
    yield
    remove_tools_root(FIXTURE_TOOLS)


@pytest.fixture
def registered():
    """A third benchmark's reward, refusing tasks without an answer criterion, and its
    report; both gone afterwards."""
    seen: list[EpisodeEnd] = []

    def final(end: EpisodeEnd) -> float:
        seen.append(end)
        return 0.0 if end.gave_up else end.evaluation.score / 2

    def refuses(evaluator):
        ok = any(c.get("getter", {}).get("fn") == "answer_number" for c in evaluator)
        return None if ok else "it asks for no number"

    reward = register_reward(Reward("halved", final, "half the partial score",
                                    refuses=refuses,
                                    audit=lambda end: "pays a cheat" if end.evaluation.score
                                    else None))
    report = register_report(EpisodeReport(
        "answered", lambda criteria, state: {"answer": state.answer} if state.answer else None))
    yield seen
    REWARDS.pop(reward.name)
    REPORTS.pop(report.key)


def the_sum(env) -> str:
    return str(env.task.gold["numbers"]["sum"])


def test_a_registered_reward_is_paid_by_name_with_its_report_in_info(registered):
    env = SciGUIEnv("faketool", task=SUM, provider="fake", screen_size=(160, 100),
                    reward="halved")
    try:
        env.reset(seed=1)
        env.step(f'answer("{the_sum(env)}")')
        _, reward, terminated, _, info = env.step("DONE")
        assert terminated and env.evaluation.score == pytest.approx(0.5)
        assert reward == pytest.approx(0.25)
        assert info["answered"] == {"answer": the_sum(env)}
        [end] = registered
        assert not end.gave_up and end.state.answer == the_sum(env)
        # the next episode gives up: FAIL on a feasible task earns nothing, and no answer
        # means no report
        env.reset(seed=2)
        _, reward, _, _, info = env.step("FAIL")
        assert reward == 0.0 and registered[-1].gave_up and "answered" not in info
    finally:
        env.close()


def test_a_reward_refuses_a_task_it_cannot_score_at_reset(registered):
    env = SciGUIEnv("faketool", task=SUM, provider="fake", screen_size=(160, 100),
                    reward="halved")
    try:
        spec = env.specs[SUM]
        env.specs[SUM] = replace(spec, evaluator=[
            c for c in spec.evaluator if c.get("getter", {}).get("fn") != "answer_number"])
        with pytest.raises(ValueError, match="cannot score faketool/sum-numbers: it asks"):
            env.reset(seed=0)
    finally:
        env.close()


def test_unknown_and_twice_registered_names_are_clear_errors(registered):
    with pytest.raises(ValueError, match=r"reward must be one of \(.*'halved'.*\), not 'x'"):
        get_reward("x")
    with pytest.raises(ValueError, match="reward 'halved' is already registered"):
        register_reward(Reward("halved", lambda end: 1.0, "another"))
    with pytest.raises(ValueError, match="episode report 'answered' is already registered"):
        register_report(EpisodeReport("answered", lambda c, s: None))


def test_cheat_findings_join_every_rewards_audit(registered):
    from types import SimpleNamespace

    paid = SimpleNamespace(score=0.5)
    end = EpisodeEnd([], SimpleNamespace(), paid, gave_up=False)
    assert cheat_findings(end) == "pays a cheat"
    assert cheat_findings(EpisodeEnd([], SimpleNamespace(), SimpleNamespace(score=0.0),
                                     gave_up=False)) is None
