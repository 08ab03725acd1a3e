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
