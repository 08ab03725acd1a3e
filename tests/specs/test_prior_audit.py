"""The prior audit in CI (issue 33): on this run's sample of tools, no scored answer criterion
may be passed by a constant answer on more than 10% of unseen variants (multiple choice: chance
+ 5 points) or be decided by the instruction, except those still listed in PRIOR_OPEN, which
the generators are being fixed for; a listed criterion that holds now must leave the list.
Offline (variants staged host-side, no program started), so any tool can be sampled: two a run,
rotating; the full table is benchmarks/results/prior-all.json (`sciagent-gym audit --prior
--json`, ~40 min)."""

from __future__ import annotations

import pytest
from rotation import audit_sample

from sciagent_gym.runs.prior import audit_prior
from sciagent_gym.tools import discover

pytestmark = pytest.mark.timeout(1800)

#: Criteria above target on 2026-12-07 (benchmarks/results/prior-all.json), by tool.
PRIOR_OPEN: dict[str, set[str]] = {
}
#: Two tools a run, in turn (staging 60 variants a task takes 10 s to 5 min a tool: R, PyMOL
#: and Jmol compute gold values in headless programs); ``SCIAGENT_AUDIT_ALL=1`` takes all.
SAMPLE = audit_sample(sorted(discover()), budget=2)


@pytest.mark.parametrize("tool", SAMPLE)
def test_no_constant_answer_pays_and_the_data_decides(tool):
    report = audit_prior(tool)
    assert not report.errors, report.errors
    failing = {f"{c.task_id}: {c.criterion}": c for c in report.criteria if not c.ok}
    known = PRIOR_OPEN.get(tool, set())
    new = {k: (round(c.share, 2), c.best, f"{c.determined}/{c.groups}")
           for k, c in failing.items() if k not in known}
    assert not new, f"above target (share, best constant, instruction-decided groups): {new}"
    fixed = sorted(known - set(failing))
    assert not fixed, f"these hold now: drop them from PRIOR_OPEN: {fixed}"
