"""Choosing a provider: clear errors before anything starts."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import sciagent_gym  # noqa: F401
from sciagent_gym.cli.main import main
from sciagent_gym.errors import ImageBuildError


def test_unknown_provider_names_the_choices():
    with pytest.raises(ValueError, match="unknown provider 'vm'.*local, qemu, remote"):
        gym.make("SciGUI-ImageJ-v0", provider="vm")


def test_remote_needs_url_and_token():
    with pytest.raises(ValueError, match="needs url= and token="):
        gym.make("SciGUI-ImageJ-v0", provider="remote", url="http://127.0.0.1:9")


def test_remote_server_unreachable_is_a_clear_error():
    from sciagent_gym.providers.remote import RemoteProvider

    with pytest.raises(TimeoutError, match="did not answer within 1s.*unreachable"):
        RemoteProvider("http://127.0.0.1:9", "x" * 32, connect_timeout=1.0)


def test_qemu_without_a_built_image_says_how_to_build_it(tmp_path):
    env = gym.make("SciGUI-ImageJ-v0", provider="qemu",
                   provider_options={"cache_dir": str(tmp_path)})
    with pytest.raises(ImageBuildError, match="sciagent-gym image build imagej"):
        env.reset(seed=0)
    env.close()


def test_cli_image_list_json(tmp_path, capsys):
    assert main(["image", "list", "--json", "--cache", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_cli_run_remote_without_url(capsys):
    code = main(["run", "--env", "SciGUI-ImageJ-v0", "--provider", "remote", "--token", "t"])
    assert code == 1 and "needs url= and token=" in capsys.readouterr().err


def test_remote_provider_settles_with_the_tools_own_windows():
    """tool.json "settle" (damage mode) reaches a remote or VM guest too: the provider sends
    the tool's floors with every settle once the program is started."""
    from types import SimpleNamespace

    from sciagent_gym.controller.settle import SettleConfig
    from sciagent_gym.providers.remote import RemoteProvider

    sent = []
    client = SimpleNamespace(settle=lambda config, canonical=False: sent.append(config),
                             launch=lambda *a, **k: None, expose_all=lambda: None,
                             execute=lambda actions: None)
    provider = object.__new__(RemoteProvider)
    provider._client, provider.width, provider.height = client, 1280, 800
    provider._paths = {"home": "/h", "work": "/h/work", "tmp": "/h/tmp"}
    provider.settle_config = provider._settle = SettleConfig.damage()
    provider.wait_ready = lambda tool, task: None
    tool = SimpleNamespace(info=SimpleNamespace(settle={"quiet": 0.3, "react": 0.1}),
                           snapshot_dir=SimpleNamespace(is_dir=lambda: False),
                           launch_argv=lambda p, t: ["prog"], launch_env=lambda p: {},
                           after_ready=lambda p, t: None)
    provider.start_program(tool)
    provider.wait_settled()
    assert [(c.quiet, c.react) for c in sent] == [(0.3, 0.1), (0.3, 0.1)]
    assert provider.settle_config.quiet == 0.04  # the env's own config is left as given
