"""Tools: a folder ``envs/<tool>/`` (``tool.json``, ``adapter.py``, ``data.py``, ``getters.py``,
``snapshot/``, ``inside/``: code run inside the program) plus ``task_specs/<tool>/``, found by
:func:`discover` and driven through its :class:`ToolAdapter`.

``discovery`` reads the folders; ``adapter`` is the base class every tool's ``Adapter``
subclasses; ``host`` types what an adapter may ask of the machine its program runs on;
``reply_tag`` tags replies a program can only write into a file.
"""

from sciagent_gym.errors import ReplyTagError
from sciagent_gym.tasks.oracle_interface import ConsoleLanguage, spec_interface
from sciagent_gym.tools.adapter import DROP_REQUEST_CLIENT, ToolAdapter, load_adapter
from sciagent_gym.tools.discovery import (
    Requirement,
    ToolInfo,
    add_tools_root,
    discover,
    envs_root,
    load_tool_getters,
    load_tool_specs,
    remove_tools_root,
    task_specs_root,
    tool_info,
)
from sciagent_gym.tools.host import ChannelHost, ProgramHost
from sciagent_gym.tools.reply_tag import ChannelKey, ReplyKey

__all__ = ["DROP_REQUEST_CLIENT", "ChannelHost", "ChannelKey", "ConsoleLanguage", "ProgramHost",
           "ReplyKey",
           "ReplyTagError",
           "Requirement", "ToolAdapter",
           "ToolInfo", "add_tools_root", "discover", "envs_root", "load_adapter",
           "load_tool_getters", "load_tool_specs", "remove_tools_root", "task_specs_root",
           "spec_interface", "tool_info"]
