"""sciagent-gym: Gymnasium environments that drive real scientific desktop software.

``import sciagent_gym`` registers one env id per tool folder (``SciGUI-ImageJ-v0``, ...,
and code envs such as ``SciCode-Materials-v0``);
``gym.make("sciagent_gym:SciGUI-ImageJ-v0")`` does the same without the import.
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["SciGUIEnv", "__version__"]


def __getattr__(name: str):
    """``sciagent_gym.SciGUIEnv`` on first use: the control server in a bare guest imports
    this package without Gymnasium."""
    if name == "SciGUIEnv":
        from sciagent_gym.env import SciGUIEnv

        return SciGUIEnv
    raise AttributeError(f"module 'sciagent_gym' has no attribute {name!r}")


def _register_all() -> None:
    try:
        import gymnasium as gym
    except ImportError:  # the control server inside a bare VM guest needs no Gymnasium
        return
    from sciagent_gym.tools import discover

    for name, info in discover().items():
        if info.env_id not in gym.registry:
            gym.register(id=info.env_id, entry_point="sciagent_gym.env:SciGUIEnv",
                         kwargs={"tool": name}, disable_env_checker=False)


_register_all()
