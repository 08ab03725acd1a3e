"""Typed provider configurations and the one factory: names and configurations are the same
thing, bad options are refused when made, and a new provider is one registered class."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from sciagent_gym.env import SciGUIEnv
from sciagent_gym.providers.factory import (
    CONFIGS,
    FakeConfig,
    LocalConfig,
    ProviderConfig,
    ProviderContext,
    QemuConfig,
    RemoteConfig,
    make_provider,
    provider_class,
    provider_config,
    register_provider,
)
from sciagent_gym.tools.discovery import add_tools_root, remove_tools_root

FIXTURE_TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "tools"


@pytest.fixture
def fake_tools():
    add_tools_root(FIXTURE_TOOLS)
    yield
    remove_tools_root(FIXTURE_TOOLS)


def test_every_name_has_a_config_and_a_class():
    assert list(CONFIGS) == ["local", "qemu", "remote", "fake"]
    assert [provider_class(n).__name__ for n in CONFIGS] == \
        ["LocalProvider", "QemuProvider", "RemoteProvider", "FakeProvider"]


@pytest.mark.parametrize(("make", "says"), [
    (lambda: LocalConfig(isolation="chroot"), "isolation"),
    (lambda: LocalConfig(pool_size=-1), "pool_size"),
    (lambda: LocalConfig(pool_size=2, pool_workers=3), "pool_workers"),
    (lambda: QemuConfig(memory_mb=64), "memory_mb"),
    (lambda: RemoteConfig(url="http://x"), "url= and token="),
    (lambda: provider_config("qemu", memroy_mb=1), "no option 'memroy_mb'"),
    (lambda: provider_config("vmware"), "unknown provider 'vmware'"),
])
def test_bad_options_are_refused_when_the_config_is_made(make, says):
    with pytest.raises(ValueError, match=says):
        make()


def test_configs_are_frozen_and_carry_their_pool():
    config = LocalConfig(pool_size=3, pool_workers=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.pool_size = 1  # type: ignore[misc]
    assert config.pool_size == 3 and QemuConfig().pool_size == 0 and FakeConfig().pool_size == 0


def test_a_name_and_its_config_make_the_same_env(fake_tools):
    named = SciGUIEnv("faketool", provider="fake", provider_options={"cli_isolated": False})
    typed = SciGUIEnv("faketool", provider=FakeConfig(cli_isolated=False))
    try:
        assert named.provider_config == typed.provider_config == FakeConfig(cli_isolated=False)
        named.reset(seed=0)
        typed.reset(seed=0)
        assert type(named.provider) is type(typed.provider)
        assert named.provider._cli_isolated is typed.provider._cli_isolated is False
    finally:
        named.close()
        typed.close()


def test_a_new_provider_is_one_registered_config(fake_tools):
    """What adding a provider takes: its configuration class, registered; the env then makes
    it by name with its options, and by config, with no other change."""

    @dataclass(frozen=True)
    class QuietConfig(ProviderConfig):
        name: ClassVar[str] = "quiet-fake"
        target: ClassVar[str] = "sciagent_gym.providers.fake:FakeProvider"
        built: ClassVar[list] = []

        def build(self, ctx: ProviderContext):
            self.built.append((ctx.tool.name, ctx.width, ctx.height))
            return self.provider_class()(ctx.width, ctx.height)

    register_provider(QuietConfig)
    try:
        env = SciGUIEnv("faketool", provider="quiet-fake", screen_size=(640, 400))
        env.reset(seed=0)
        env.close()
        assert QuietConfig.built == [("faketool", 640, 400)]
        made = make_provider(QuietConfig(), ProviderContext(env.adapter, 320, 200, None))
        try:
            assert made.width == 320
        finally:
            made.close()  # its temporary home and work directory
    finally:
        CONFIGS.pop("quiet-fake")
