"""CSMBench's open-answer scores beside STS: BERTScore F1 and the LLM judge (1-10).

BERTScore (Zhang et al., ICLR 2020) greedily matches each token of one text to its most similar
token of the other by the cosine of contextual embeddings: precision averages over the answer's
tokens, recall over the reference's, F1 is their harmonic mean. CSMBench does not say which
encoder it used; the only one shipped offline here is all-MiniLM-L6-v2, so this is a documented
variant (:data:`BERTSCORE_VARIANT`): its last (6th) layer's token states, no idf weighting, no
baseline rescaling, computed as the ``bert-score`` package does (special tokens are match
targets but carry no weight), except that a token's best match is its true maximum cosine:
bert-score zeroes padded positions of a batch, which floors a negative best match at 0 in every
sentence shorter than the batch's longest (tests/integration/test_text_scores.py shows both). Scores
are not comparable with the paper's numbers from a larger encoder; when the model is missing,
:func:`bertscore` says why instead of inventing one.

The judge follows the paper: a chat model rates the prediction against the reference from 1 to
10. It goes through :class:`~sciagent_gym.agents.prompt.PromptAgent`'s client (an
OpenAI-compatible ``/chat/completions`` endpoint, retries with back-off).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sciagent_gym.errors import SciAgentError

BERTSCORE_LAYER = 6
BERTSCORE_VARIANT = ("BERTScore F1 with all-MiniLM-L6-v2 token embeddings (layer 6 of 6), no "
                     "idf, no baseline rescaling")
JUDGE_MODEL = "gpt-4o-2024-11-20"  # CSMBench's judge; any served model name works
JUDGE_PROMPT = """\
You are grading an answer to a question about a materials-science figure. Compare the \
prediction with the reference answer and rate how well the prediction states the same \
scientific content (correct facts, quantities, mechanisms), on a scale from 1 (wrong or \
unrelated) to 10 (fully correct and equivalent). Reply with the integer score only.

Question: {question}
Reference answer: {reference}
Prediction: {prediction}"""
_SCORE = re.compile(r"\b(10|[1-9])\b")


@dataclass(frozen=True)
class BertScores:
    """Per-pair precision, recall and F1, or why they are not available."""

    precision: tuple[float, ...] = ()
    recall: tuple[float, ...] = ()
    f1: tuple[float, ...] = ()
    unavailable: str = ""

    @property
    def available(self) -> bool:
        return not self.unavailable


def _greedy(cand: np.ndarray, cand_w: np.ndarray, ref: np.ndarray, ref_w: np.ndarray
            ) -> tuple[float, float, float]:
    """Greedy cosine matching of unit token vectors; ``*_w`` weight each token in the mean."""
    sim = cand @ ref.T
    p = float(np.sum(sim.max(axis=1) * cand_w) / cand_w.sum()) if cand_w.sum() else 0.0
    r = float(np.sum(sim.max(axis=0) * ref_w) / ref_w.sum()) if ref_w.sum() else 0.0
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return p, r, f


def _token_states(texts: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
    """(unit token vectors, weights) per text: layer-6 states of MiniLM, [CLS]/[SEP] weight 0."""
    import torch

    from sciagent_gym.evaluation.sentence_model import load_model, one_thread

    st = load_model()
    bert, tok = st[0].auto_model, st.tokenizer
    special = {tok.cls_token_id, tok.sep_token_id}
    out = []
    with torch.no_grad(), one_thread():
        for text in texts:
            enc = tok(text.strip(), return_tensors="pt", truncation=True,
                      max_length=tok.model_max_length)
            states = bert(**enc, output_hidden_states=True).hidden_states[BERTSCORE_LAYER][0]
            vecs = states.numpy().astype(np.float64)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            ids = enc["input_ids"][0].tolist()
            out.append((vecs, np.array([0.0 if i in special else 1.0 for i in ids])))
    return out


def bertscore(answers: Sequence[str], references: Sequence[str]) -> BertScores:
    """BERTScore of each (answer, reference) pair (see :data:`BERTSCORE_VARIANT`), or the
    reason it is not available (the model or its runtime not installed)."""
    if len(answers) != len(references):
        raise ValueError(f"{len(answers)} answers but {len(references)} references")
    try:
        states = _token_states(list(answers) + list(references))
    except (SciAgentError, ImportError) as exc:
        return BertScores(unavailable=str(exc))
    n = len(answers)
    triples = [_greedy(*states[i], *states[n + i]) for i in range(n)]
    return BertScores(*(tuple(t[k] for t in triples) for k in range(3)))


# --- the LLM judge ---------------------------------------------------------------------------


def parse_judge(reply: str) -> int | None:
    """The 1-10 score in a judge's reply (its first integer in range), None when absent."""
    m = _SCORE.search(reply or "")
    return int(m.group(1)) if m else None


@dataclass
class Judge:
    """An LLM judge on an OpenAI-compatible endpoint (``url`` ends before /chat/completions)."""

    url: str
    model: str = JUDGE_MODEL
    api_key: str = ""
    timeout: float = 120.0
    retries: int = 3

    def __post_init__(self) -> None:
        from sciagent_gym.agents.prompt import PromptAgent

        self._client = PromptAgent(base_url=self.url, model=self.model, api_key=self.api_key,
                                   max_tokens=8, timeout=self.timeout, retries=self.retries)

    def score(self, prediction: str, reference: str, question: str = "") -> tuple[int | None,
                                                                                   str]:
        """(1-10 score or None when the reply holds none, the raw reply)."""
        text = JUDGE_PROMPT.format(question=question or "(not given)", reference=reference,
                                   prediction=prediction)
        reply = self._client._complete([{"role": "user", "content": text}])
        return parse_judge(reply), reply

    @property
    def usage(self) -> dict[str, Any]:
        return self._client.usage.to_dict()
