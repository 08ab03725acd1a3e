"""Query pools (ST-Bench): a spec's fixed list of scoped queries, its variants, and a per-task
split in ST-Bench's proportions fixed by query id (fake provider, fixture tool)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from sciagent_gym.env import SciGUIEnv
from sciagent_gym.errors import TaskSpecError
from sciagent_gym.tasks.queries import QUERY_SPLITS, query_order, query_split, split_sizes
from sciagent_gym.tasks.spec import count_variants, parse_spec
from sciagent_gym.tasks.task import episode_split
from sciagent_gym.tools.discovery import add_tools_root, remove_tools_root

FIXTURE_TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "tools"
SUM = "faketool/sum-numbers"
SCOPES = ["snow", "arid", "karst", "coastal", "alpine", "boreal", "tropical", "urban",
          "glacial", "steppe", "delta", "plateau", "wetland", "prairie", "volcanic", "desert",
          "tundra", "savanna", "mangrove", "loess"]
QUERIES = [{"id": f"{name}-basins", "scope": f"only the {name} basins",
            "params": {"count": 3 + i % 4}} for i, name in enumerate(SCOPES)]


@pytest.fixture(scope="module", autouse=True)
def fixture_tools():
    add_tools_root(FIXTURE_TOOLS)
    yield
    remove_tools_root(FIXTURE_TOOLS)


def spec_data(**changes):
    data = json.loads((FIXTURE_TOOLS / "task_specs" / SUM.replace("/", "/")
                       ).with_suffix(".json").read_text())
    data["instruction"] = "For {scope} ({query}): " + data["instruction"]
    data["queries"] = QUERIES
    data.update(changes)
    return data


@pytest.fixture
def env():
    env = SciGUIEnv("faketool", task=SUM, provider="fake", screen_size=(160, 100))
    env.specs[SUM] = parse_spec(spec_data(), "sum-numbers.json")
    yield env
    env.close()


def test_split_sizes_follow_st_bench_proportions():
    # 20 * 1184/2067 = 11.46 -> 11 train; 20 * 391/2067 = 3.78 -> 4 val; the rest, 5, test
    assert split_sizes(20) == {"train": 11, "val": 4, "test": 5}
    assert split_sizes(5) == {"train": 3, "val": 1, "test": 1}
    total = sum(QUERY_SPLITS.values())
    assert total == 2067
    for n in range(5, 60):
        sizes = split_sizes(n)
        assert sum(sizes.values()) == n and min(sizes.values()) >= 1, n
        assert abs(sizes["train"] / n - 1184 / total) <= 0.5 / n + 1e-9


def test_a_query_keeps_its_split_whatever_order_the_spec_lists_it_in():
    spec = parse_spec(spec_data(), "s.json")
    splits = {q["id"]: query_split(SUM, spec.queries, i) for i, q in enumerate(spec.queries)}
    assert Counter(splits.values()) == {"train": 11, "val": 4, "test": 5}
    shuffled = tuple(reversed(spec.queries))
    again = {q["id"]: query_split(SUM, shuffled, i) for i, q in enumerate(shuffled)}
    assert again == splits
    # another task cuts its pool differently (the order is a hash of task and query id)
    assert query_order("faketool/other", spec.queries) != query_order(SUM, spec.queries)
    assert count_variants(spec) == 20


def test_reset_by_query_id_fills_scope_and_query_params(env):
    _, info = env.reset(seed=0, options={"query": "karst-basins"})
    assert info["variant"] == 2 and info["query"] == "karst-basins"
    assert info["instruction"].startswith("For only the karst basins (karst-basins): ")
    assert env.task.params["count"] == 3 + 2 % 4  # the query's params override the spec's
    assert info["split"] == query_split(SUM, env.specs[SUM].queries, 2)
    assert len((env.provider.host_work_dir / "numbers.txt").read_text().split()) == 5


def test_a_run_pins_a_query_and_records_it(env, tmp_path):
    from sciagent_gym.runs.rollout import run_episode

    result = run_episode(env, "oracle", seed=5, options={"query": "arid-basins"},
                         out_dir=tmp_path / "ep")
    assert (result.query, result.variant, result.policy) == ("arid-basins", 1, "oracle")
    saved = json.loads((tmp_path / "ep" / "result.json").read_text())
    assert saved["query"] == "arid-basins"


def test_drawn_variants_are_query_indices_of_the_asked_split():
    for split in ("train", "val", "test"):
        env = SciGUIEnv("faketool", task=SUM, provider="fake", screen_size=(160, 100),
                        split=split)
        env.specs[SUM] = parse_spec(spec_data(), "sum-numbers.json")
        try:
            seen = set()
            for seed in range(40):
                _, info = env.reset(seed=seed)
                assert 0 <= info["variant"] < 20 and info["split"] == split
                seen.add(info["query"])
            assert len(seen) == split_sizes(20)[split]  # 40 draws reach the whole split
        finally:
            env.close()


def test_unknown_query_or_variant_is_a_clear_error_and_the_episode_goes_on(env):
    env.reset(seed=0, options={"query": "snow-basins"})
    env.step('answer("1")')
    for bad in ({"query": "lunar-basins"}, {"variant": 20}, {"variant": -1}):
        with pytest.raises(ValueError, match="snow-basins"):
            env.reset(seed=1, options=bad)
    # the running episode was not given up: it still takes steps and ends normally
    _, _, terminated, _, info = env.step("DONE")
    assert terminated and env.evaluation is not None and env.task.params["query"] == "snow-basins"


def test_held_out_query_pool_counts_under_heldout_tasks():
    spec = parse_spec(spec_data(heldout=True), "s.json")
    assert {episode_split(spec, i) for i in range(20)} == {"heldout-tasks"}
    plain = replace(spec, heldout=False)
    assert {episode_split(plain, i) for i in range(20)} == {"train", "val", "test"}


@pytest.mark.parametrize("queries, message", [
    (QUERIES[:4], "at least 5"),
    ([*QUERIES[:5], QUERIES[0]], "unique"),
    ([*QUERIES[:5], {"id": "x", "scope": ""}], "non-empty"),
    ([*QUERIES[:5], {"id": "x", "scope": "s", "params": {"scope": "y"}}], "literal"),
    ([*QUERIES[:5], {"id": "x", "scope": "s", "params": {"n": {"int": [1, 2]}}}], "literal"),
    ([*QUERIES[:5], {"id": "Bad Id", "scope": "s"}], "slug"),
    ([*QUERIES[:5], {"id": "x", "scope": "s", "extra": 1}], "id, scope, params"),
])
def test_bad_query_pools_are_rejected_naming_the_entry(queries, message):
    with pytest.raises(TaskSpecError, match=message):
        parse_spec(spec_data(queries=queries), "s.json")
