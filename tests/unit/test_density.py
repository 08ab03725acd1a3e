"""The density run's logic on the fake provider (fixture tool): levels are added until the p95
limit, memory or max_envs stops them, step errors are counted and survived, and every env and
driver thread ends, also when making an env fails. Latency is simulated by a wrapper."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import gymnasium as gym
import pytest

from sciagent_gym.cli.main import build_parser
from sciagent_gym.env import SciGUIEnv
from sciagent_gym.runs import density
from sciagent_gym.tools.discovery import add_tools_root, remove_tools_root

FIXTURE_TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "tools"
FAST = {"pace": 0.02, "duration": 0.15, "margin_mb": 0.0}


@pytest.fixture(scope="module", autouse=True)
def fixture_tools():
    add_tools_root(FIXTURE_TOOLS)
    yield
    remove_tools_root(FIXTURE_TOOLS)


class Fake(gym.Wrapper):
    """The fake env with a simulated program time per step, a failing step, a close count."""

    made: list[Fake] = []

    def __init__(self, delay: float = 0.0, fail_at: int | None = None) -> None:
        super().__init__(SciGUIEnv("faketool", provider="fake", screen_size=(160, 100),
                                   max_steps=10 ** 6))
        self.delay, self.fail_at, self.steps, self.closed = delay, fail_at, 0, False
        self.actions: list[str] = []
        Fake.made.append(self)

    def step(self, action):
        self.steps += 1
        self.actions.append(action)
        if self.steps == self.fail_at:
            raise RuntimeError("the fake program crashed")
        if self.delay:
            time.sleep(self.delay)  # the simulated program's work, not a readiness wait
        return super().step(action)

    def close(self):
        self.closed = True
        super().close()


@pytest.fixture(autouse=True)
def made():
    Fake.made = []
    yield Fake.made
    assert all(e.closed for e in Fake.made)
    assert not [t for t in threading.enumerate() if t.name.startswith("density-env-")]


def test_levels_up_to_max_envs(made):
    r = density.run_density(max_envs=3, p95_limit=5.0, make_env=Fake, **FAST)
    assert [lv["envs"] for lv in r["levels"]] == [1, 2, 3]
    assert r["stop_reason"] == "max_envs" and r["held_envs"] == 3 and not r["errors"]
    for lv in r["levels"]:
        assert lv["latency_s"]["n"] > 0 and lv["loadavg"] and len(lv["reset_s"]) == 1
        assert lv["latency_s"]["p95"] >= lv["latency_s"]["p50"] > 0
    assert len(made) == 3 and all(e.steps > 0 for e in made)
    assert not any(a == "DONE" for e in made for a in e.actions)  # harmless actions only
    text = density.format_density(r)
    assert "held 3 envs" in text and "max_envs" in text


def test_add_several_per_level():
    r = density.run_density(max_envs=5, add=2, p95_limit=5.0, make_env=Fake, **FAST)
    assert [lv["envs"] for lv in r["levels"]] == [2, 4, 5]


def test_stops_at_the_first_level_over_the_p95_limit():
    r = density.run_density(max_envs=4, p95_limit=0.01, make_env=lambda: Fake(delay=0.03),
                            **FAST)
    assert [lv["envs"] for lv in r["levels"]] == [1]
    assert r["stop_reason"] == "p95" and r["held_envs"] == 0
    assert r["levels"][0]["latency_s"]["p50"] >= 0.03


def test_stops_when_memory_would_run_out():
    avail = iter([10_000.0, 10_000.0, 100.0, 100.0])
    r = density.run_density(max_envs=4, p95_limit=5.0, make_env=Fake,
                            mem_available=lambda: next(avail), **{**FAST, "margin_mb": 500.0})
    assert [lv["envs"] for lv in r["levels"]] == [1] and r["stop_reason"] == "memory"
    none = density.run_density(max_envs=4, make_env=Fake, mem_available=lambda: 10.0,
                               **{**FAST, "margin_mb": 500.0})
    assert none["levels"] == [] and none["held_envs"] == 0


def test_a_step_error_is_counted_and_the_env_goes_on(made):
    r = density.run_density(max_envs=1, p95_limit=5.0, make_env=lambda: Fake(fail_at=2),
                            **FAST)
    assert len(r["errors"]) == 1 and "crashed" in r["errors"][0]
    assert r["levels"][0]["drivers_alive"] == 1 and made[0].steps > 2


def test_everything_closes_when_making_an_env_fails(made):
    def make():
        if len(made) == 2:
            raise RuntimeError("no display")
        return Fake()

    with pytest.raises(RuntimeError, match="no display"):
        density.run_density(max_envs=4, p95_limit=5.0, make_env=make, **FAST)
    assert len(made) == 2  # both closed, both drivers ended (the fixture checks)


def test_bad_arguments():
    with pytest.raises(ValueError):
        density.run_density(max_envs=0, make_env=Fake)


def test_memory_and_cpu_readers_on_this_process():
    import os

    mem = density.tree_memory([os.getpid()])
    assert mem["pss_mb"] > 1 and mem["rss_mb"] >= mem["pss_mb"]
    assert mem["pss_mb_by_program"]
    assert density.cpu_seconds([os.getpid()]) > 0
    assert density.mem_available_mb() > 0
    busy, total = density.machine_busy()
    assert 0 <= busy <= total


def test_plot_and_cli_options(tmp_path):
    r = density.run_density(max_envs=2, p95_limit=5.0, make_env=Fake, **FAST)
    density.plot_density(r, tmp_path / "d.png")
    assert (tmp_path / "d.png").stat().st_size > 1000
    args = build_parser().parse_args(["bench", "--density", "--env", "SciGUI-DS9-v0",
                                      "--max-envs", "16", "--pace", "2", "--p95-limit", "0.4"])
    assert args.density and args.max_envs == 16 and args.pace == 2.0 and args.spares == 0
    assert args.func.__name__ == "_bench"


def test_bench_names_no_default_env(capsys):
    """The core picks no tool: `bench` (and `--density`) without --env is a clear error, and
    run_density needs an env or a factory."""
    from sciagent_gym.cli.main import main

    assert main(["bench", "--density"]) != 0
    assert "--env" in capsys.readouterr().err
    with pytest.raises(ValueError, match="env_id"):
        density.run_density(max_envs=1)
