"""CSMBench ported: figure items at four scales (the FigureQA tool's tasks, tagged
``csmbench``), multiple-choice accuracy and the open items' STS, BERTScore F1 and LLM-judge
scores (:mod:`.text_scores`), and ``sciagent-gym report``'s CSMBench table (:mod:`.report`).
The STS check the open items' specs use (``sts_at_least``) is a generic answer check
(``sciagent_gym.evaluation.answer_checks``); this package adds what only the benchmark's
evaluation needs.
"""

from __future__ import annotations

from sciagent_gym.benchmarks.csmbench.report import add_options, report_section
from sciagent_gym.benchmarks.registry import Benchmark, register_benchmark

register_benchmark(Benchmark("csmbench", "CSMBench", report_section, add_options))
