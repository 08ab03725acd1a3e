"""The remote provider: an env whose program runs on another machine (a VM guest, a remote
host, Windows) behind the control server, reached over HTTP by :class:`ControlClient`.

``provider`` is the Provider; ``client`` the server's client, which only this provider uses.
"""

from sciagent_gym.providers.remote.client import ControlClient
from sciagent_gym.providers.remote.provider import RemoteProvider

__all__ = ["ControlClient", "RemoteProvider"]
