"""Offline checks of the Praat task specs, their data generators and the Praat getters.

No X display needed: specs are loaded and staged into tmp_path (the generators call espeak-ng
and ``praat --run`` headless on the host). The TextGrid parser is fed files in Praat's own long
and short text formats (as ``praat --run`` writes them, and as literal text), plus malformed,
truncated and binary ones.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sciagent_gym.evaluation import GETTERS, FinalState, GetterError, evaluate
from sciagent_gym.tasks.spec import TaskSpec, load_specs
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools import load_adapter, load_tool_getters, task_specs_root

load_tool_getters("praat")

from sciagent_gym.envs.praat import data  # noqa: E402
from sciagent_gym.envs.praat.getters import parse_textgrid  # noqa: E402

SPECS: dict[str, TaskSpec] = load_specs(task_specs_root(), "praat")
SPEC_IDS = sorted(SPECS)
SANDBOX = {"home": "/home/user", "tmp": "/tmp"}
HAVE_TOOLS = shutil.which("praat") is not None and shutil.which("espeak-ng") is not None
needs_tools = pytest.mark.skipif(not HAVE_TOOLS, reason="praat and espeak-ng are needed")


def make_task(spec: TaskSpec, seed: int, work: Path) -> Task:
    return Task(spec, seed, data.GENERATORS, {**SANDBOX, "work": str(work)})


# --- specs ---------------------------------------------------------------------------------


def test_all_praat_specs_load():
    assert len(SPECS) >= 10
    for spec_id, spec in SPECS.items():
        assert spec.tool == "praat"
        assert Path(spec.source).stem == spec.slug, spec_id


@needs_tools
@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_stage_writes_inputs_and_gold(spec_id, tmp_path):
    spec = SPECS[spec_id]
    for seed in (0, 1):
        work = tmp_path / f"seed{seed}"
        task = make_task(spec, seed, work)
        try:
            task.stage(work)
            for name in (*spec.open, *spec.protect):
                assert (work / name).is_file(), name
            for gen, values in task.gold.items():
                for key, value in values.items():
                    if isinstance(value, float):
                        assert math.isfinite(value), (gen, key)
            assert task.criteria() and task.steps("oracle")
            for name in spec.negatives:
                assert task.steps(name)
            text = task.instruction
            assert "{" not in text and "$gold" not in text and ">" not in text, text
            # nothing done: every feasible task scores 0 (the gate fails)
            result = evaluate(task.criteria(), FinalState(work_dir=work, app_state=None))
            assert not result.success
        finally:
            task.cleanup()


@needs_tools
def test_staging_is_reproducible(tmp_path):
    spec = SPECS["praat/mean-f0-segment"]
    a, b = make_task(spec, 3, tmp_path / "a"), make_task(spec, 3, tmp_path / "b")
    try:
        a.stage(tmp_path / "a")
        b.stage(tmp_path / "b")
        assert a.input_hashes == b.input_hashes
        assert a.gold["speech"]["mean_f0"] == b.gold["speech"]["mean_f0"]
    finally:
        a.cleanup()
        b.cleanup()


def test_adapter_metadata():
    adapter = load_adapter("praat")
    assert adapter.info.env_id == "SciGUI-Praat-v0"
    assert adapter.info.domain == "phonetics"
    assert (adapter.snapshot_dir / ".praat-dir" / "prefs5").is_file()
    assert not (adapter.snapshot_dir / ".praat-dir" / "pid").exists()
    assert set(adapter.generators) >= {"speech", "segment", "tones", "vowels"}


# --- generators ----------------------------------------------------------------------------


def test_intensity_matches_praat_definition():
    t = np.arange(16000) / 16000
    x = 0.1 * np.sin(2 * np.pi * 440 * t)
    expected = 10 * math.log10(0.005 / 4e-10)
    assert data.intensity_db(x) == pytest.approx(expected, abs=1e-6)


def test_tones_reference_is_the_concatenation(tmp_path):
    gold = data.tones(tmp_path, np.random.default_rng(0), ["a", "b", "c"], ["c", "a", "b"])
    parts = [data.read_wav(tmp_path / f"{n}.wav")[0] for n in ("c", "a", "b")]
    assert np.allclose(gold["array"][0], np.concatenate(parts), atol=1e-6)
    assert gold["total_duration"] == pytest.approx(sum(gold["durations"].values()))


@needs_tools
def test_vowels_gold_is_near_the_synthesised_formant(tmp_path):
    gold = data.vowels(tmp_path, np.random.default_rng(1), "v.wav", "a", "i", at=0.25)
    assert gold["f1"] == pytest.approx(gold["f1_synth"], rel=0.1)
    assert abs(gold["f1"] - gold["f1_other"]) > 200


# --- praat_wav / number_in_file ------------------------------------------------------------


def test_praat_wav_and_similarity(tmp_path):
    import tifffile

    t = np.arange(8000) / 8000
    x = data.write_wav(tmp_path / "s.wav", 0.2 * np.sin(2 * np.pi * 300 * t), 8000)
    state = FinalState(work_dir=tmp_path)
    info = GETTERS["praat_wav"](state, "s.wav")
    assert info["sampling_frequency"] == 8000 and info["duration"] == pytest.approx(1.0)
    assert info["intensity_db"] == pytest.approx(data.intensity_db(x))
    ref = tmp_path / "ref.tif"
    tifffile.imwrite(ref, x[None, :].astype(np.float32))
    assert GETTERS["praat_wav_similarity"](state, "s.wav", str(ref)) > 0.999
    tifffile.imwrite(ref, x[None, :4000].astype(np.float32))
    assert GETTERS["praat_wav_similarity"](state, "s.wav", str(ref)) == 0.0
    (tmp_path / "junk.wav").write_bytes(b"RIFF0000WAVEjunk")
    with pytest.raises(GetterError, match="cannot read"):
        GETTERS["praat_wav"](state, "junk.wav")
    with pytest.raises(GetterError, match="not found"):
        GETTERS["praat_wav"](state, "missing.wav")


def test_number_in_file(tmp_path):
    state = FinalState(work_dir=tmp_path)
    (tmp_path / "a.txt").write_text("112.25 Hz\n")
    assert GETTERS["number_in_file"](state, "a.txt") == pytest.approx(112.25)
    (tmp_path / "b.txt").write_text("no number here")
    with pytest.raises(GetterError, match="0 number"):
        GETTERS["number_in_file"](state, "b.txt")
    (tmp_path / "c.txt").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(GetterError):
        GETTERS["number_in_file"](state, "c.txt")


# --- TextGrid parser -----------------------------------------------------------------------

LONG = '''File type = "ooTextFile"
Object class = "TextGrid"

xmin = 0
xmax = 2.5
tiers? <exists>
size = 2
item []:
    item [1]:
        class = "IntervalTier"
        name = "words"
        xmin = 0
        xmax = 2.5
        intervals: size = 3
        intervals [1]:
            xmin = 0
            xmax = 0.4
            text = ""
        intervals [2]:
            xmin = 0.4
            xmax = 1.1
            text = "say ""hi"""
        intervals [3]:
            xmin = 1.1
            xmax = 2.5
            text = "end"
    item [2]:
        class = "TextTier"
        name = "tones"
        xmin = 0
        xmax = 2.5
        points: size = 1
        points [1]:
            number = 0.7
            mark = "H*"
'''

SHORT = '''File type = "ooTextFile"
Object class = "TextGrid"

0
2.5
<exists>
2
"IntervalTier"
"words"
0
2.5
3
0
0.4
""
0.4
1.1
"say ""hi"""
1.1
2.5
"end"
"TextTier"
"tones"
0
2.5
1
0.7
"H*"
'''


@pytest.mark.parametrize("text", [LONG, SHORT], ids=["long", "short"])
def test_textgrid_long_and_short_forms(text):
    grid = parse_textgrid(text)
    assert grid["tier_names"] == ["words", "tones"]
    words = grid["tiers"][0]
    assert words["boundaries"] == [0.4, 1.1]
    assert words["labels"] == ['say "hi"', "end"]
    assert words["texts"] == ["", 'say "hi"', "end"]
    assert grid["tiers"][1]["times"] == [0.7] and grid["tiers"][1]["marks"] == ["H*"]


def test_textgrid_utf16_and_getter_tier(tmp_path):
    (tmp_path / "g.TextGrid").write_bytes(LONG.replace("end", "énd").encode("utf-16"))
    state = FinalState(work_dir=tmp_path)
    assert GETTERS["praat_textgrid"](state, "g.TextGrid", tier="words", key="labels") == \
        ['say "hi"', "énd"]
    with pytest.raises(GetterError, match="no tier named"):
        GETTERS["praat_textgrid"](state, "g.TextGrid", tier="phones")


@pytest.mark.parametrize(("content", "message"), [
    (LONG[: LONG.index("intervals [3]")], "truncated"),
    (LONG.replace('"IntervalTier"', '"FancyTier"'), "unknown tier class"),
    (LONG.replace("size = 2", "size = two"), "malformed"),
    (LONG.replace('xmax = 1.1\n            text = "say', 'xmax = 0.1\n            text = "say'),
     "ends before"),
    ("just some text\n", "not a Praat TextGrid"),
    ("ooBinaryFile TextGrid \x00\x01", "binary"),
    ("", "not a Praat TextGrid"),
])
def test_textgrid_malformed_files_fail_cleanly(tmp_path, content, message):
    (tmp_path / "bad.TextGrid").write_text(content)
    with pytest.raises(GetterError, match=message):
        GETTERS["praat_textgrid"](FinalState(work_dir=tmp_path), "bad.TextGrid")


def test_textgrid_missing_file_is_a_failed_criterion(tmp_path):
    task = make_task(SPECS["praat/annotate-textgrid"], 0, tmp_path)
    task.gold = {"speech": {"duration": 3.0}}
    task.staged = True
    try:
        result = evaluate(task.criteria(), FinalState(work_dir=tmp_path))
        assert not result.success and result.score == 0
    finally:
        task.cleanup()


@needs_tools
@pytest.mark.parametrize("form", ["text", "short text"])
def test_textgrid_as_praat_writes_it(tmp_path, form):
    script = tmp_path / "w.praat"
    out = tmp_path / "w.TextGrid"
    script.write_text(
        'Create TextGrid: 0, 3, "words sil", "sil"\n'
        'Insert boundary: 1, 0.5\nInsert boundary: 1, 1.25\n'
        'Set interval text: 1, 2, "sea ""x"" é"\nInsert point: 2, 0.7, "p"\n'
        f'Save as {form} file: "{out}"\n')
    subprocess.run(["praat", "--run", str(script)], check=True, timeout=60,
                   env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    grid = parse_textgrid(out.read_bytes())
    assert grid["xmax"] == 3 and grid["tier_names"] == ["words", "sil"]
    assert grid["tiers"][0]["boundaries"] == [0.5, 1.25]
    assert grid["tiers"][0]["labels"] == ['sea "x" é']
    assert grid["tiers"][1]["class"] == "TextTier" and grid["tiers"][1]["times"] == [0.7]


def test_glottal_pulses_stay_inside_the_sound():
    from sciagent_gym.envs.praat.data import glottal_pulses

    n = int(0.5 * 11025)
    for f0 in np.linspace(110, 130, 20001):  # 110.0001 Hz put a pulse at index n before
        idx = glottal_pulses(float(f0), 11025, n)
        assert idx.max() < n and len(idx) >= int(0.5 * f0)
