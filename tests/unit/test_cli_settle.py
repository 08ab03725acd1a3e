"""``--settle`` on ``run`` and ``audit``: the name reaches the env as its SettleConfig."""

from __future__ import annotations

import pytest

from sciagent_gym.cli.main import build_parser, main
from sciagent_gym.controller.settle import SettleConfig


@pytest.mark.parametrize("name, expected", [("frame", SettleConfig()),
                                            ("damage", SettleConfig.damage()),
                                            ("fast", SettleConfig.fast())])
def test_settle_names(name, expected):
    assert SettleConfig.named(name) == expected


def test_unknown_name_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown settle 'slow' .known: frame, damage, fast"):
        SettleConfig.named("slow")


def test_audit_passes_the_settle_to_the_env(monkeypatch):
    seen = {}

    class Report:
        passed, metrics = True, {"f1": 1.0}

        def table(self):
            return ""

    def fake_audit(tool, **kwargs):
        seen[tool] = kwargs["settle"]
        return Report()

    import sciagent_gym.runs.audit as audit
    monkeypatch.setattr(audit, "audit_tool", fake_audit)
    assert main(["audit", "--tool", "ds9", "--settle", "damage", "-q"]) == 0
    assert seen == {"ds9": SettleConfig.damage()}


def test_unknown_settle_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["run", "--env", "SciGUI-DS9-v0", "--settle", "slow"])
    assert exc.value.code == 2
    assert "invalid settle value: 'slow'" in capsys.readouterr().err


def test_default_is_the_envs_the_damage_settle():
    args = build_parser().parse_args(["audit", "--tool", "ds9"])
    assert args.settle is None  # the env's own: SettleConfig.default()
    assert SettleConfig.default() == SettleConfig.damage()
