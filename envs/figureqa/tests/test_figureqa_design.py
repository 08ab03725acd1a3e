"""FigureQA's pool design (issue 33): what a policy trained on the train split could learn
without reading a figure must not pay on the held-out items.

- the generators see the same train / held-out split as the core (they balance within it);
- the right letter (and the truth's kind, rank or angle) is dealt so that in every split
  (train, val, test), and every prefix of it in pool order, no letter leads another by more
  than one;
- open answers are spread so that no constant answer (the best one there is, not only the
  observed golds) passes more than 10 % of the held-out items under the criterion's own check;
- the readers the GUI oracles need for the varying parts of a figure (scale-bar labels,
  data-scaled axes) read them right.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from sciagent_gym.envs.figureqa import common, data, make_specs, perceive, ticks
from sciagent_gym.envs.figureqa import figures_macro as macro

from sciagent_gym.evaluation.checks import numeric
from sciagent_gym.tasks.task import variant_split
from sciagent_gym.tools import load_tool_specs

SPECS = load_tool_specs("figureqa")
FAMILIES = make_specs.FAMILIES
MC = [slug for slug, f in FAMILIES.items() if f["kind"] == "mc"]
OPEN = [slug for slug, f in FAMILIES.items() if f["kind"] == "open"]


def _held_out(slug: str) -> list[int]:
    return [i for i in range(common.POOL) if common.split_group(slug, i) == "heldout"]


@pytest.mark.parametrize("slug", sorted(FAMILIES))
def test_the_generators_split_the_pool_as_the_core_does(slug):
    spec = SPECS[f"figureqa/{slug}"]
    for i, q in enumerate(spec.queries):
        assert q["params"]["item"] == i
        core = "train" if variant_split(spec, i) == "train" else "heldout"
        assert common.split_group(slug, i) == core, (slug, i)
    assert len(_held_out(slug)) >= 30  # the prior audit scores on at least 30 unseen items


def _assert_blocks(seq: list, k: int, what: str) -> None:
    """Every prefix of ``seq`` holds each of the k values within one of the others."""
    counts: dict = {}
    values = set(seq)
    assert len(values) == k, (what, values)
    for n, v in enumerate(seq, 1):
        counts[v] = counts.get(v, 0) + 1
        low = min(counts.get(u, 0) for u in values)
        assert max(counts.values()) - low <= 1, (what, n, counts)


@pytest.mark.parametrize("slug", MC)
def test_the_right_letter_is_balanced_in_every_split(slug):
    """In every prefix of train, val and test no letter leads another by more than one; in
    val and test together (what the prior audit scores) none passes chance + 5 points."""
    fn = FAMILIES[slug]["fn"]
    spec = SPECS[f"figureqa/{slug}"]
    for split in ("train", "val", "test"):
        items = [i for i in range(common.POOL) if variant_split(spec, i) == split]
        draws = [data.CHOICES[fn](i) for i in items]
        _assert_blocks([d["letter"] for d in draws], 4, f"{slug} {split} letters")
        if fn == "phase_fraction":  # the truth's rank among the option values, too
            ranks = [sorted(d["option_values"].values()).index(d["option_values"][d["letter"]])
                     for d in draws]
            _assert_blocks(ranks, 4, f"{slug} {split} ranks")
        if fn in ("lattice_type", "hrtem_symmetry"):  # and what the truth is
            _assert_blocks([d["kind"] for d in draws], 4 if fn == "lattice_type" else 3,
                           f"{slug} {split} kinds")
    held = [data.CHOICES[fn](i)["letter"] for i in range(common.POOL)
            if variant_split(spec, i) != "train"]  # in pool order, as the audit takes them
    for n in range(30, len(held) + 1):
        top = max(held[:n].count(x) for x in "ABCD")
        assert top <= 0.30 * n, (slug, n, top)


@pytest.mark.parametrize("slug", OPEN)
def test_no_constant_answer_passes_more_than_a_tenth_of_the_held_out_items(slug, tmp_path):
    """The best constant there is: a window of the criterion's tolerance placed at each gold's
    edge covers the most golds any window can."""
    f = FAMILIES[slug]
    gen = data.GENERATORS[f["fn"]]
    golds = [float(gen(tmp_path, None, i)["value"]) for i in _held_out(slug)]
    abs_tol, rel_tol = f.get("abs_tol", 0.0), f.get("rel_tol", 0.0)
    candidates = [g + abs_tol for g in golds] if abs_tol or not rel_tol else \
        [g * (1 + rel_tol) for g in golds]
    best = max(sum(numeric(c, g, abs_tol=abs_tol, rel_tol=rel_tol)[0] for g in golds)
               for c in candidates)
    assert best <= 0.10 * len(golds), (slug, best, len(golds))
    assert len(set(golds)) >= len(golds) - 2, sorted(golds)


@pytest.mark.parametrize("log", [False, True])
def test_spread_values_cover_the_range_half_a_stratum_apart(log):
    for slug in ("uts", "porosity"):
        for group in ("train", "heldout"):
            items = [i for i in range(common.POOL) if common.split_group(slug, i) == group]
            vals = sorted(common.spread(slug, i, 10.0, 1000.0, log=log) for i in items)
            scaled = np.log(vals) if log else np.array(vals)
            lo, hi = (math.log(10), math.log(1000)) if log else (10.0, 1000.0)
            stratum = (hi - lo) / len(items)
            assert np.diff(scaled).min() >= 0.5 * stratum - 1e-9
            assert scaled[0] < lo + stratum and scaled[-1] > hi - stratum


@pytest.mark.parametrize("value,unit", [(0.5, "nm"), (1, "nm"), (2, "nm"), (5, "nm"),
                                        (10, "nm"), (1, "µm"), (2, "µm"), (50, "µm"),
                                        (500, "µm")])
def test_the_scale_bar_label_is_read_whatever_its_value(value, unit):
    content = np.full((common.BOX[3], common.BOX[2]), 200, np.uint8)
    rgb = common.image_figure(content, (value, 137), unit, "FQ-XX-00")
    gray = perceive._gray(rgb)
    assert perceive._bar_px(gray, (0, 0)) == 137
    assert perceive._bar_label(rgb, (0, 0), 137) == value


@pytest.mark.parametrize("xlim,ylim", [((0.0, 23.7), (0.0, 187.0)), ((0.0, 51.2), (0.0, 2115.0)),
                                       ((0.331, 0.487), (-41.3, -29.8)),
                                       ((3.1, 5.07), (-52.6, -38.1))])
def test_the_tick_reader_recovers_data_scaled_axes(xlim, ylim):
    x = np.linspace(*xlim, 5)
    rgb = macro.plot_arrhenius(x, np.linspace(*ylim, 5), (0.0, float(np.mean(ylim))),
                               xlim, ylim)
    frame = perceive._frame(rgb)
    left, top, right, bottom = frame
    fx, fy = ticks.x_axis(rgb, frame), ticks.y_axis(rgb, frame)
    for got, want, span in ((fx(left), xlim[0], xlim), (fx(right), xlim[1], xlim),
                            (fy(bottom), ylim[0], ylim), (fy(top), ylim[1], ylim)):
        assert abs(got - want) <= 0.005 * (span[1] - span[0]), (got, want)


def test_the_gui_oracle_gets_no_per_item_value_from_the_spec():
    """Perceivers get fixed conventions only: no scale-bar value or axis limit that varies."""
    for slug in ("uts", "arrhenius-activation-energy", "lattice-parameter", "hrtem-spacing",
                 "grain-size"):
        args = SPECS[f"figureqa/{slug}"].gui_oracle[1]["perceive"].get("args", {})
        assert not {"bar", "xlim", "ylim"} & set(args), (slug, args)

