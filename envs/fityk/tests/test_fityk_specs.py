"""Offline checks of the Fityk task specs, their data generators, the getters and the replay.

No X display needed: specs are staged into tmp_path; the session replay (the state channel's
client, :file:`envs/fityk/inside/replay.py`) runs against hand-written logs with the host's
``cfityk``, as it runs inside the program zone.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import check_answer_units, requires

from sciagent_gym.evaluation import GETTERS, FinalState, GetterError
from sciagent_gym.tasks.spec import TaskSpec
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools import load_tool_getters, load_tool_specs

load_tool_getters("fityk")

from sciagent_gym.envs.fityk import data, profiles, spectra, xrd  # noqa: E402
from sciagent_gym.envs.fityk.getters import REPLAY, parse_peak_table  # noqa: E402

SPECS: dict[str, TaskSpec] = load_tool_specs("fityk")
SPEC_IDS = sorted(SPECS)
needs_cfityk = requires("cfityk", tool="fityk")


def test_all_fityk_specs_load_and_cover_the_rules():
    assert len(SPECS) >= 12
    assert {s.difficulty for s in SPECS.values()} == {"easy", "medium", "hard"}
    assert sum(s.infeasible for s in SPECS.values()) == 1
    assert all(s.modality == "gui" for s in SPECS.values())
    # the scripting modality: the real work typed as Fityk commands in its input line
    scripting = [s for s in SPECS.values() if "scripting" in s.tags]
    assert len(scripting) >= 2


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_no_credit_without_the_work(spec_id):
    spec = SPECS[spec_id]
    assert spec.evaluator[0].get("gate")
    assert spec.cheats or spec.infeasible
    for c in spec.evaluator:
        getter = c["getter"] if isinstance(c["getter"], str) else c["getter"]["fn"]
        if c.get("gate") or getter in ("file_exists", "agent_status", "answer_given"):
            assert c["weight"] == 0, (spec_id, c["name"])
        if getter.startswith("answer"):
            assert "answer" in spec.instruction


@pytest.mark.parametrize("seed", range(4))
def test_xrd_pattern_gold_matches_the_file(tmp_path, seed):
    gold = data.xrd_pattern(tmp_path, np.random.default_rng(seed), crop=[20.0, 60.0],
                            families=["rocksalt"], strongest_hkl="(200)")
    xy = np.loadtxt(tmp_path / "pattern.xy")
    assert len(xy) == gold["points"] and xy[0, 0] == 10.0 and xy[-1, 0] == 90.0
    s = gold["strongest"]
    assert s["hkl"] == "(200)"
    # the highest point is at the strongest reflection, and Bragg's law links d and a
    assert abs(xy[np.argmax(xy[:, 1]), 0] - s["two_theta"]) < 0.05
    assert math.isclose(s["d"] * 2, gold["a"], rel_tol=1e-3)
    assert s["d"] == pytest.approx(1.54184 / (2 * math.sin(math.radians(s["two_theta"] / 2))))
    inside = (xy[:, 0] >= 20.0) & (xy[:, 0] <= 60.0)
    assert gold["crop"]["points"] == inside.sum()
    assert gold["crop"]["sum_y"] == pytest.approx(xy[inside, 1].sum())
    assert 0 < gold["area_ratio_pct"] < 90


def test_xrd_pattern_width_step_and_texture(tmp_path):
    """Seeded profile widths over a log range with the asked step; a texture changes the
    relative intensities (the strongest reflection still the asked one), and the gold area
    ratio follows the textured heights."""
    widths, ratios = [], []
    for seed in range(6):
        gold = data.xrd_pattern(tmp_path, np.random.default_rng(seed), families=["rocksalt"],
                                strongest_hkl="(200)", fwhm=[0.04, 0.7], step=0.01)
        xy = np.loadtxt(tmp_path / "pattern.xy")
        assert len(xy) == gold["points"] == 8001 and gold["step"] == 0.01
        assert 0.04 <= gold["fwhm"] <= 0.7
        widths.append(gold["fwhm"])
        tex = data.xrd_pattern(tmp_path, np.random.default_rng(seed), families=["rocksalt"],
                               strongest_hkl="(200)", texture=[0.5, 1.8])
        assert tex["strongest"]["hkl"] == "(200)" and 0.5 <= tex["texture"]["march_r"] <= 1.8
        assert tex["area_ratio_pct"] == pytest.approx(tex["second"]["intensity"], rel=1e-6)
        ratios.append(tex["area_ratio_pct"])
    assert max(widths) / min(widths) > 3
    assert max(ratios) - min(ratios) > 15
    # March-Dollase: a random powder is r = 1; r < 1 favours planes normal to the axis
    assert xrd.march_dollase((2, 0, 0), (1, 0, 0), 1.0) == pytest.approx(1.0)
    assert xrd.march_dollase((1, 0, 0), (1, 0, 0), 0.6) > xrd.march_dollase(
        (1, 1, 1), (1, 0, 0), 0.6)


def test_spectrum_overrides(tmp_path):
    """Raman D/G area ratios, XPS component shares and PL band widths drawn per sample."""
    r = [data.spectrum(tmp_path, np.random.default_rng(s), "raman-carbon", ratio=[0.15, 5.0])
         for s in range(8)]
    assert all(0.15 <= g["area_d_g"] <= 5.0 for g in r)
    assert max(g["area_d_g"] for g in r) / min(g["area_d_g"] for g in r) > 3
    for s in range(8):
        g = data.spectrum(tmp_path, np.random.default_rng(s), "xps-c1s",
                          shares={"C-O": [10, 65], "O-C=O": [3, 25]})
        cc, co, _ = g["area_pcts"]
        assert 10 <= co <= 65 and abs(co - cc) > 5 and co * (100 / cc - 1) > 3
        assert sum(g["area_pcts"]) == pytest.approx(100)
        pl = data.spectrum(tmp_path, np.random.default_rng(s), "pl-doublet", axis=[400, 850],
                           fwhm={"green": [14, 40], "red": [28, 170]})
        assert pl["lo"] == 400 and pl["hi"] == 850
        assert pl["bands"]["red"]["fwhm"] >= 1.25 * pl["bands"]["green"]["fwhm"] - 1e-3
        assert 28 <= pl["bands"]["red"]["fwhm"] <= 170


def test_pseudo_voigt_area_and_scherrer():
    x = np.linspace(-50, 50, 200001)
    from sciagent_gym.datagen.crystals import pseudo_voigt

    numeric = np.trapezoid(3.0 * pseudo_voigt(x, 0.0, 0.2, 0.4), x)
    assert profiles.pv_area(3.0, 0.2, 0.4) == pytest.approx(numeric, rel=2e-3)
    # 0.2 deg FWHM at 2theta = 30 deg: about 41 nm
    assert xrd.scherrer_nm(30.0, 0.2) == pytest.approx(41.1, abs=0.2)


@pytest.mark.parametrize("kind", sorted(spectra.SPECTRA))
def test_spectrum_gold(tmp_path, kind):
    gold = data.spectrum(tmp_path, np.random.default_rng(3), kind)
    xy = np.loadtxt(tmp_path / "spectrum.dat")
    assert len(xy) == gold["points"]
    assert gold["centers"] == sorted(gold["centers"])
    assert sum(gold["area_pcts"]) == pytest.approx(100)
    for band in gold["sorted"]:
        assert band["hwhm"] * 2 == pytest.approx(band["fwhm"])


PEAKS = ("# PeakType\tCenter\tHeight\tArea\tFWHM\tparameters...\n"
         "%_1  Linear\tx\tx\tx\tx\t 93.38 0.556\n"
         "%pk  PseudoVoigt\t37.742\t7008.4\t860.48\t0.10526\t 7008.4 37.742 0.0526 0.2014\n")


def test_peak_table_parser():
    rows = parse_peak_table(PEAKS)
    assert rows[0]["type"] == "Linear" and rows[0]["center"] is None
    assert rows[1] == {"name": "pk", "type": "PseudoVoigt", "center": 37.742,
                       "height": 7008.4, "area": 860.48, "fwhm": 0.10526}
    for bad in ("", "hello\n", "%_1 Gaussian\tabc\t1\t2\t3\n"):
        with pytest.raises(GetterError):
            parse_peak_table(bad)


def test_peak_table_getter(tmp_path):
    (tmp_path / "t.txt").write_text(PEAKS)
    (tmp_path / "bin.txt").write_bytes(b"\x00\x01" * 100)
    state = FinalState(work_dir=tmp_path)
    get = GETTERS["fityk_peak_table"]
    assert get(state, "t.txt", type="PseudoVoigt") == [37.742]
    assert get(state, "t.txt", near=37.7, key="fwhm") == 0.10526
    with pytest.raises(GetterError):
        get(state, "bin.txt")
    with pytest.raises(GetterError):
        get(state, "missing.txt")


def test_session_getters_find_peaks_by_position():
    state = FinalState(work_dir=Path("/nonexistent"), app_state={"datasets": [
        {"index": 0, "points": 10, "peaks": [
            {"name": "a", "type": "Linear", "center": None},
            {"name": "b", "type": "Gaussian", "center": 30.0, "fwhm": 0.2},
            {"name": "c", "type": "PseudoVoigt", "center": 32.0, "fwhm": 0.3}]}]})
    assert GETTERS["fityk_peak"](state, near=31.9, key="fwhm") == 0.3
    assert GETTERS["fityk_peak"](state, key="center") == [30.0, 32.0]
    assert GETTERS["fityk_peak_count"](state, type="Gaussian") == 1
    with pytest.raises(GetterError):
        GETTERS["fityk_peak"](state, near=40.0)
    with pytest.raises(GetterError):
        GETTERS["fityk_dataset"](state, dataset=2)
    with pytest.raises(GetterError):
        GETTERS["fityk_peak"](FinalState(work_dir=Path("/x"), app_state_error="gone"), near=1)


# -- the replay (the state channel's client) ---------------------------------------------------


def _replay(tmp_path: Path, log: str, scripts: list | None = None) -> dict:
    (tmp_path / "session.log").write_text(log)
    base = str(tmp_path / "req")
    subprocess.run([sys.executable, "-S", "-c", REPLAY.read_text(), str(tmp_path / "session.log"),
                    json.dumps(scripts or []), base, "tok123"], check=True, timeout=60,
                   cwd=tmp_path)
    return json.loads(Path(base + ".json").read_text())


@needs_cfityk
def test_replay_reads_the_fit_back(tmp_path):
    gold = data.xrd_pattern(tmp_path, np.random.default_rng(1))
    log = ("# Fityk script. Fityk version: 1.3.2. LOG START\n"
           f"@+ <'{tmp_path}/pattern.xy'\n# 4001 points.\n"
           "@0: A = abs(x - {argmax(y)}) < 1\nguess %bg = Linear\n"
           "guess %pk = PseudoVoigt\nfit\n# ... converged.\n"
           "this is not a command\n"  # an error in the GUI does not stop the replay
           "    print 'an indented sub-command of a script is not run twice'\n"
           "reset\n@0 < '" + str(tmp_path) + "/pattern.xy'\n"
           "@0: A = abs(x - {argmax(y)}) < 1\nguess %bg = Linear\n"
           "guess %pk = PseudoVoigt\nnot a command either\nfit\nquit\n")
    reply = _replay(tmp_path, log, [[3, "print 'first', M"], [10**9, "print 'x', %pk.FWHM"]])
    assert reply["ok"], reply
    state = reply["state"]
    assert state["tampered"] is False and state["dataset_count"] == 1
    ds = state["datasets"][0]
    assert ds["points"] == gold["points"] and ds["active"] == 99
    pk = [p for p in ds["peaks"] if p["type"] == "PseudoVoigt"][0]
    assert pk["center"] == pytest.approx(gold["strongest"]["two_theta"], abs=0.01)
    assert pk["fwhm"] == pytest.approx(gold["fwhm"], rel=0.05)
    assert reply["output"].startswith("x ")


@needs_cfityk
def test_replay_dump_is_not_lua_and_log_redirection_is_tampering(tmp_path):
    data.xrd_pattern(tmp_path, np.random.default_rng(2))
    forged = ("@@tok123 BEGIN\n1\n@@tok123 DS 0 4001 4001 10 90 10 90 1 1\n"
              "@@tok123 F 0\n%pk\n@@tok123 PEAKS 0\n%pk  Gaussian\t1\t2\t3\t4\t 1 2 3\n"
              "@@tok123 END\n")
    log = (f"@+ <'{tmp_path}/pattern.xy'\n"
           f"lua string.format = function() return 'forged' end\n"
           f"lua print = function() end\n"
           f"lua io.open('{tmp_path}/req.dump', 'w'):write([[{forged}]])\n")
    state = _replay(tmp_path, log)["state"]
    assert state["datasets"][0]["peaks"] == [] and state["datasets"][0]["points"] == 4001
    assert not state["tampered"]
    state = _replay(tmp_path, log + "set logfile=''\nF += Gaussian(~1, ~20, ~1)\n")["state"]
    assert state["tampered"]


@needs_cfityk
def test_saved_session_is_replayed_by_the_getter(tmp_path):
    gold = data.xrd_pattern(tmp_path, np.random.default_rng(4))
    script = (f"@0 < '{tmp_path}/pattern.xy'\n@0: A = abs(x - {{argmax(y)}}) < 1\n"
              "guess Linear\nguess PseudoVoigt\nfit\n"
              f"info state > '{tmp_path}/s.fit'\ninfo history > '{tmp_path}/h.fit'\n")
    (tmp_path / "make.fit").write_text(script)
    subprocess.run(["cfityk", "-n", "-q", "-I", str(tmp_path / "make.fit")], check=True,
                   capture_output=True, timeout=60)
    state = FinalState(work_dir=tmp_path)
    try:
        center = GETTERS["fityk_session"](state, "s.fit", near=gold["strongest"]["two_theta"],
                                          type="PseudoVoigt", key="center")
    except Exception as exc:  # no bubblewrap here: the getter refuses to run unsandboxed
        if "unsandboxed" in str(exc):
            pytest.skip(str(exc))
        raise
    assert center == pytest.approx(gold["strongest"]["two_theta"], abs=0.01)
    # a history needs the data file, which the isolated replay does not have
    with pytest.raises(GetterError):
        GETTERS["fityk_session"](state, "h.fit", near=gold["strongest"]["two_theta"])


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_variant_stages_with_gold(spec_id, tmp_path):
    spec = SPECS[spec_id]
    task = Task(spec, 5, data.GENERATORS, {"home": "/h", "tmp": "/t", "work": str(tmp_path)})
    try:
        task.stage(tmp_path)
        assert task.criteria()
        assert "{" not in task.instruction
    finally:
        task.cleanup()


# -- answers carry units: an equivalent unit passes, a bare number of another unit's size fails --

UNIT_ANSWERS = {
    # task: (gold key, unit, [(factor, equivalent unit)], factor of a bare wrong-unit number)
    "fityk/d-spacing-bragg": ("xrd.strongest.d", "Å", [(0.1, "nm")], 0.1),
    "fityk/lattice-parameter-cubic": ("xrd.a", "Å", [(0.1, "nm")], 0.1),
    "fityk/scherrer-crystallite-size": ("xrd.strongest.scherrer_corr_nm", "nm",
                                        [(10, "Å"), (1e-3, "µm")], 10),
}


#: Answers that are pure numbers (a ratio of two fitted areas): no unit to declare.
DIMENSIONLESS_ANSWERS = {"fityk/raman-carbon-workflow"}


def test_every_answered_quantity_declares_its_unit():
    for spec in SPECS.values():
        for c in spec.evaluator:
            getter = c["getter"]
            if isinstance(getter, dict) and getter["fn"] == "answer_number":
                assert getter.get("unit") or spec.id in DIMENSIONLESS_ANSWERS, (spec.id,
                                                                                 c["name"])


@pytest.mark.parametrize("task_id", sorted(UNIT_ANSWERS))
def test_answer_units_convert_and_bare_numbers_mean_the_stated_unit(task_id, tmp_path):
    key, unit, equivalents, wrong = UNIT_ANSWERS[task_id]
    task = Task(SPECS[task_id], 0, data.GENERATORS, {"home": "/h", "tmp": "/t",
                                                    "work": str(tmp_path)})
    try:
        task.stage(tmp_path)
        check_answer_units(task, tmp_path, key, unit, equivalents, wrong)
    finally:
        task.cleanup()


# --- long-horizon tasks: stage by stage -------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1])
def test_raman_carbon_workflow_scores_each_stage(seed, tmp_path):
    """Replays the evaluator on what the stage negatives leave: loaded and fitted (4 of 10),
    plus the ratio answered (6 of 10), plus the exports (9 of 10); a stage counts only when the
    one before passed, and the data exported as the model fails the export stage."""
    from sciagent_gym.evaluation import evaluate

    spec = SPECS["fityk/raman-carbon-workflow"]
    assert "long-horizon" in spec.tags and spec.difficulty == "hard"
    task = Task(spec, seed, data.GENERATORS,
                {"home": "/home/user", "tmp": "/tmp", "work": str(tmp_path)})
    try:
        task.stage(tmp_path)
        assert 25 <= task.oracle_steps <= 60 and spec.max_steps >= 1.5 * task.oracle_steps
        g, p = task.gold["spec"], task.params
        bands = g["sorted"]
        app = {"datasets": [{"index": 0, "points": g["points"], "active": p["range"]["active"],
                             "peaks": [{"type": "Linear", "center": None}] + [
                                 {"type": "Lorentzian", "center": b["center"],
                                  "fwhm": b["fwhm"]} for b in bands]}]}

        def score(answer=None):
            return evaluate(task.criteria(), FinalState(
                work_dir=tmp_path, app_state=app, answer=answer,
                agent_status="done")).to_dict()

        res = score()
        assert res["score"] == pytest.approx(4 / 10) and res["stages_reached"] == 1
        answer = f"A(D)/A(G) = {g['area_d_g']:.3f}"
        res = score(answer)
        assert res["score"] == pytest.approx(6 / 10) and res["stages_reached"] == 2
        assert score(f"A(D)/A(G) = {g['height_d_g']:.3f}")["score"] == pytest.approx(4 / 10)
        (tmp_path / "raman.peaks").write_text(
            "# PeakType\tCenter\tHeight\tArea\tFWHM\tparameters...\n%bg  Linear\tx\tx\tx\tx\t 1 0\n"
            + "".join(f"%_{i}  Lorentzian\t{b['center']}\t{b['height']}\t{b['area']}\t"
                      f"{b['fwhm']}\t 1 2 3\n" for i, b in enumerate(bands, 1)))
        import tifffile

        x, curve = tifffile.imread(g["curve"])  # a host-side gold array
        noisy = np.loadtxt(tmp_path / "spectrum.dat")[:, 1]
        (tmp_path / "raman_fit.dat").write_text(
            "".join(f"{a} {n} {n}\n" for a, n in zip(x, noisy, strict=True)))
        assert score(answer)["score"] == pytest.approx(7 / 10)  # the data is not the fit
        (tmp_path / "raman_fit.dat").write_text(
            "".join(f"{a} {n} {c}\n" for a, n, c in zip(x, noisy, curve, strict=True)))
        res = score(answer)
        assert res["score"] == pytest.approx(9 / 10) and res["stages_reached"] == 3
    finally:
        task.cleanup()


def test_fityk_points_getter_reads_exported_columns(tmp_path):
    import tifffile

    ref = np.vstack([np.arange(5.0), np.array([1.0, 2.0, 5.0, 2.0, 1.0])])
    tifffile.imwrite(tmp_path / "ref.tif", ref)
    state = FinalState(work_dir=tmp_path)
    (tmp_path / "a.dat").write_text("# x\ty\tF(x)\n" + "".join(
        f"{x}\t{y + 0.1}\t{y}\n" for x, y in ref.T))
    get = GETTERS["fityk_points"]
    assert get(state, "a.dat", str(tmp_path / "ref.tif"), key="model_error") == 0
    assert get(state, "a.dat", str(tmp_path / "ref.tif"), column=1,
               key="model_error") == pytest.approx(0.1 / 4)
    (tmp_path / "b.dat").write_text("0 1 1\n1 2 2\n")
    assert get(state, "b.dat", str(tmp_path / "ref.tif"))["model_error"] is None
    (tmp_path / "c.dat").write_text("0 1 1\n1 2\n")
    with pytest.raises(GetterError):
        get(state, "c.dat", str(tmp_path / "ref.tif"))


@pytest.mark.parametrize("seed", [0, 1])
def test_xps_c1s_workflow_scores_each_stage(seed, tmp_path):
    """What the stage negatives leave: loaded, Shirley-subtracted and fitted (4 of 10), plus the
    share answered (6 of 10), plus the exports (9 of 10); a share given as a fraction, or 0.6
    points off the fit of the subtracted counts, does not pass."""
    import tifffile

    from sciagent_gym.evaluation import evaluate

    spec = SPECS["fityk/xps-c1s-workflow"]
    assert "long-horizon" in spec.tags and spec.difficulty == "hard"
    task = Task(spec, seed, data.GENERATORS,
                {"home": "/home/user", "tmp": "/tmp", "work": str(tmp_path)})
    try:
        task.stage(tmp_path)
        assert 25 <= task.oracle_steps <= 60 and spec.max_steps >= 1.5 * task.oracle_steps
        g = task.gold["spec"]
        fit = g["shirley_fit"]
        bands = [{"center": c, "fwhm": w, "area": a, "height": 1.0} for c, w, a in
                 zip(fit["centers"], fit["fwhms"], fit["areas"], strict=True)]
        app = {"datasets": [{"index": 0, "points": g["points"], "active": g["points"],
                             "sum_y": g["shirley"]["sum_y"],
                             "peaks": [{"type": "Gaussian", "center": b["center"],
                                        "fwhm": b["fwhm"]} for b in bands]}]}

        def score(answer=None):
            return evaluate(task.criteria(), FinalState(
                work_dir=tmp_path, app_state=app, answer=answer,
                agent_status="done")).to_dict()

        res = score()
        assert res["score"] == pytest.approx(4 / 10) and res["stages_reached"] == 1
        share = fit["area_pcts"][1]
        assert score(f"C–O: {share / 100:.4f}")["score"] == pytest.approx(4 / 10)
        assert score(f"C–O: {share + 0.6:.2f} %")["score"] == pytest.approx(4 / 10)
        answer = f"C–O: {share:.2f} %"
        res = score(answer)
        assert res["score"] == pytest.approx(6 / 10) and res["stages_reached"] == 2
        (tmp_path / "c1s.peaks").write_text(
            "# PeakType\tCenter\tHeight\tArea\tFWHM\tparameters...\n"
            + "".join(f"%_{i}  Gaussian\t{b['center']}\t{b['height']}\t{b['area']}\t"
                      f"{b['fwhm']}\t 1 2 3\n" for i, b in enumerate(bands, 1)))
        x, curve = tifffile.imread(g["curve"])
        noisy = np.loadtxt(tmp_path / "spectrum.dat")[:, 1]
        (tmp_path / "c1s_fit.dat").write_text(
            "".join(f"{a} {n} {n}\n" for a, n in zip(x, noisy, strict=True)))
        assert score(answer)["score"] == pytest.approx(7 / 10)  # the data is not the fit
        (tmp_path / "c1s_fit.dat").write_text(
            "".join(f"{a} {n} {c}\n" for a, n, c in zip(x, noisy, curve, strict=True)))
        res = score(answer)
        assert res["score"] == pytest.approx(9 / 10) and res["stages_reached"] == 3
        # without the Shirley subtraction the fitting stage fails, and the stages after it
        app["datasets"][0]["sum_y"] = g["shirley"]["sum_y_raw"]
        assert score(answer)["score"] == pytest.approx(3 / 10)
    finally:
        task.cleanup()


@pytest.mark.parametrize("seed", [0, 1])
def test_scherrer_lab6_standard_scores_each_stage(seed, tmp_path):
    """Both fits (2 of 5), plus the corrected size (4 of 5); the uncorrected size does not
    pass, and without the standard's fit the size is not counted (1 of 5)."""
    from sciagent_gym.evaluation import evaluate

    spec = SPECS["fityk/scherrer-lab6-standard"]
    task = Task(spec, seed, data.GENERATORS,
                {"home": "/home/user", "tmp": "/tmp", "work": str(tmp_path)})
    try:
        task.stage(tmp_path)
        assert 30 <= task.oracle_steps <= 60 and spec.max_steps >= 1.5 * task.oracle_steps
        g = task.gold["xrd"]
        std = g["standard"]
        assert 0.35 <= std["fwhm"] / g["fwhm"] <= 0.5
        pv = {"type": "PseudoVoigt", "center": g["strongest"]["two_theta"], "fwhm": g["fwhm"]}
        st = {"type": "PseudoVoigt", "center": std["two_theta"], "fwhm": std["fwhm"]}
        app = {"datasets": [{"index": 0, "points": g["points"], "peaks": [pv]},
                            {"index": 1, "points": std["points"], "peaks": [st]}]}

        def score(answer=None):
            return evaluate(task.criteria(), FinalState(
                work_dir=tmp_path, app_state=app, answer=answer,
                agent_status="done")).to_dict()["score"]

        tau = g["strongest"]["scherrer_corr_nm"]
        assert score() == pytest.approx(2 / 5)
        assert score(f"τ = {tau:.2f} nm") == pytest.approx(4 / 5)
        assert score(f"τ = {g['strongest']['scherrer_nm']:.2f} nm") == pytest.approx(2 / 5)
        app["datasets"][1]["peaks"] = []
        assert score(f"τ = {tau:.2f} nm") == pytest.approx(1 / 5)
    finally:
        task.cleanup()
