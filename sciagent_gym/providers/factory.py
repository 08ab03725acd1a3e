"""Typed provider configurations and the one factory that turns one into a Provider.

``provider=`` of an env names a provider or passes its configuration:
``provider="qemu"`` with ``provider_options={"memory_mb": 4096}``, or the same as
``provider=QemuConfig(memory_mb=4096)``. Each configuration is a frozen dataclass that checks
its own fields; :func:`make_provider` builds the provider from it and the env's context
(tool, screen, settle). Adding a provider is one configuration class and one
:func:`register_provider` call here: the env never branches on a provider's name.
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from pathlib import Path

    from sciagent_gym.controller.settle import SettleConfig
    from sciagent_gym.providers.base import Provider
    from sciagent_gym.tools import ToolAdapter


@dataclass(frozen=True)
class ProviderContext:
    """What the env hands every provider it makes."""

    tool: ToolAdapter
    width: int
    height: int
    settle: SettleConfig | None


@dataclass(frozen=True)
class ProviderConfig:
    """A provider's own options. Subclasses name their provider (``name``) and its class
    (``target``: "module:Class", imported only when used) and implement :meth:`build`."""

    name: ClassVar[str] = ""
    target: ClassVar[str] = ""

    @classmethod
    def provider_class(cls) -> type[Provider]:
        """The Provider class (imported now, not before)."""
        module, _, name = cls.target.partition(":")
        return getattr(importlib.import_module(module), name)

    def build(self, ctx: ProviderContext) -> Provider:
        raise NotImplementedError

    @property
    def pool_size(self) -> int:
        """Spare sandboxes kept ready (0 where the provider keeps none)."""
        return 0

    @classmethod
    def from_env_args(cls, options: dict[str, Any], *, isolation: str, pool_size: int,
                      pool_workers: int, url: str | None, token: str | None,
                      reset_hook: Any) -> ProviderConfig:
        """The configuration the env's keyword arguments describe for ``provider=<name>``
        (``options``: its ``provider_options``). Here: the options alone, and the default
        ``pool_size=1`` means none; more is refused rather than ignored."""
        if pool_size > 1:
            raise ValueError(f"pool_size={pool_size}: the {cls.name} provider keeps no spare "
                             "sandboxes (use 0 or 1, which mean none there)")
        return _checked(cls, options)


@dataclass(frozen=True)
class LocalConfig(ProviderConfig):
    """This machine: Xvfb and bubblewrap zones. ``isolation``: "auto", "bwrap" or "none"
    (development only); ``pool_size`` spare sandboxes prepared by ``pool_workers`` threads."""

    name: ClassVar[str] = "local"
    target: ClassVar[str] = "sciagent_gym.providers.local.provider:LocalProvider"
    isolation: str = "auto"
    pool_size: int = 1
    pool_workers: int = 1

    def __post_init__(self) -> None:
        if self.isolation not in ("auto", "bwrap", "none"):
            raise ValueError(f"isolation must be 'auto', 'bwrap' or 'none', not "
                             f"{self.isolation!r}")
        if self.pool_size < 0:
            raise ValueError(f"pool_size must be >= 0, not {self.pool_size}")
        if self.pool_size and not 1 <= self.pool_workers <= self.pool_size:
            raise ValueError(f"pool_workers must be between 1 and pool_size "
                             f"({self.pool_size}), not {self.pool_workers}")

    @classmethod
    def from_env_args(cls, options: dict[str, Any], *, isolation: str, pool_size: int,
                      pool_workers: int, url: str | None, token: str | None,
                      reset_hook: Any) -> ProviderConfig:
        return _checked(cls, {"isolation": isolation, "pool_size": pool_size,
                              "pool_workers": pool_workers, **options})

    def build(self, ctx: ProviderContext) -> Provider:
        return self.provider_class()(ctx.width, ctx.height, self.isolation, ctx.settle,
                                     pool_size=self.pool_size, pool_workers=self.pool_workers,
                                     glx=ctx.tool.info.glx)


@dataclass(frozen=True)
class QemuConfig(ProviderConfig):
    """One VM per env from the tool's guest image (``image`` names another one)."""

    name: ClassVar[str] = "qemu"
    target: ClassVar[str] = "sciagent_gym.providers.qemu.provider:QemuProvider"
    image: str | None = None
    memory_mb: int = 2048
    cpus: int = 2
    accel: str = "auto"
    cache_dir: str | Path | None = None

    def __post_init__(self) -> None:
        if self.memory_mb < 256 or self.cpus < 1:
            raise ValueError(f"a VM needs memory_mb >= 256 and cpus >= 1, not "
                             f"{self.memory_mb} and {self.cpus}")

    def build(self, ctx: ProviderContext) -> Provider:
        return self.provider_class()(ctx.tool, ctx.width, ctx.height, ctx.settle,
                                     image=self.image, memory_mb=self.memory_mb,
                                     cpus=self.cpus, accel=self.accel,
                                     cache_dir=self.cache_dir)


@dataclass(frozen=True)
class RemoteConfig(ProviderConfig):
    """A control server elsewhere (``python -m sciagent_gym.server``): its ``url`` and
    ``token``; ``reset_hook`` restores the machine between episodes (a VM snapshot)."""

    name: ClassVar[str] = "remote"
    target: ClassVar[str] = "sciagent_gym.providers.remote.provider:RemoteProvider"
    url: str = ""
    token: str = ""
    reset_hook: Any = None
    timeout: float = 60.0
    connect_timeout: float = 30.0

    def __post_init__(self) -> None:
        if not (self.url and self.token):
            raise ValueError("provider='remote' needs url= and token= of a control server")

    @classmethod
    def from_env_args(cls, options: dict[str, Any], *, isolation: str, pool_size: int,
                      pool_workers: int, url: str | None, token: str | None,
                      reset_hook: Any) -> ProviderConfig:
        return super().from_env_args(
            {"url": url or "", "token": token or "", "reset_hook": reset_hook, **options},
            isolation=isolation, pool_size=pool_size, pool_workers=pool_workers, url=url,
            token=token, reset_hook=reset_hook)

    def build(self, ctx: ProviderContext) -> Provider:
        return self.provider_class()(self.url, self.token, ctx.width, ctx.height, ctx.settle,
                                     self.reset_hook, timeout=self.timeout,
                                     connect_timeout=self.connect_timeout)


@dataclass(frozen=True)
class FakeConfig(ProviderConfig):
    """In memory, for unit tests of the env's logic (no program, no display)."""

    name: ClassVar[str] = "fake"
    target: ClassVar[str] = "sciagent_gym.providers.fake:FakeProvider"
    cli_isolated: bool = True

    def build(self, ctx: ProviderContext) -> Provider:
        return self.provider_class()(ctx.width, ctx.height, cli_isolated=self.cli_isolated)


CONFIGS: dict[str, type[ProviderConfig]] = {}


def register_provider(config: type[ProviderConfig]) -> type[ProviderConfig]:
    """Make ``provider=config.name`` known (usable as a class decorator)."""
    if not config.name or not config.target:
        raise ValueError(f"{config.__name__} needs its name and target")
    CONFIGS[config.name] = config
    return config


for _config in (LocalConfig, QemuConfig, RemoteConfig, FakeConfig):
    register_provider(_config)


def _checked(config: type[ProviderConfig], options: dict[str, Any]) -> ProviderConfig:
    known = [f.name for f in dataclasses.fields(config)]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"provider {config.name!r} has no option "
                         f"{', '.join(map(repr, unknown))} (its options: "
                         f"{', '.join(known) or 'none'})")
    return config(**options)


def provider_config(name: str, **options: Any) -> ProviderConfig:
    """The configuration of provider ``name`` from keyword options; an unknown provider or
    option is a ValueError that lists what is known."""
    if name not in CONFIGS:
        raise ValueError(f"unknown provider {name!r} (available: {', '.join(CONFIGS)})")
    return _checked(CONFIGS[name], options)


def provider_class(name: str) -> type[Provider]:
    """The provider class behind ``provider=name`` (imported on demand)."""
    if name not in CONFIGS:
        raise ValueError(f"unknown provider {name!r} (available: {', '.join(CONFIGS)})")
    return CONFIGS[name].provider_class()


def make_provider(config: ProviderConfig, ctx: ProviderContext) -> Provider:
    """The provider ``config`` describes, for the env context ``ctx``."""
    return config.build(ctx)
