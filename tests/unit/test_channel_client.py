"""ToolAdapter.run_client and call_client: the answer file or the client's stdout, the timeout,
what a silent or failing client said, and that every client is ended."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciagent_gym.errors import SciAgentError
from sciagent_gym.tools.adapter import ToolAdapter
from sciagent_gym.tools.discovery import ToolInfo


class StubHost:
    """A ChannelHost whose "sandbox" is a folder; a spawned client does what ``behave`` says."""

    ready_scale = 1.0

    def __init__(self, root: Path, behave: dict[str, str]) -> None:
        self.root, self.behave, self.killed, self.calls = root, behave, [], []

    @property
    def paths(self) -> dict[str, str]:
        return {"home": str(self.root), "work": str(self.root), "tmp": str(self.root)}

    def call_in_sandbox(self, name: str, *, code: str | None = None,
                        args: list[str] | None = None, argv: list[str] | None = None,
                        stdin: str = "") -> None:
        self.calls.append({"code": code, "args": args, "argv": argv, "stdin": stdin})
        if "log" in self.behave:
            (self.root / f"{name}.log").write_text(self.behave["log"])
        if "answer" in self.behave:
            Path(self.behave["answer_path"]).write_text(self.behave["answer"])

    def collect_in_sandbox(self, name: str) -> dict:
        if "stdout" not in self.behave and "returncode" not in self.behave:
            return {"done": False}
        return {"done": True, "output": self.behave.get("stdout"),
                "returncode": self.behave.get("returncode", 0)}

    def kill_in_sandbox(self, name: str) -> None:
        self.killed.append(name)

    def read_file(self, path: str, remove: bool = False) -> str | None:
        p = Path(path)
        if not p.is_file():
            return None
        text = p.read_text()
        if remove:
            p.unlink()
        return text


def adapter() -> ToolAdapter:
    return ToolAdapter(ToolInfo("stub", "Stub-v0", "Stub", "test", (), Path(".")))


def test_answer_is_read_and_the_client_ended(tmp_path):
    answer = str(tmp_path / "a.json")
    host = StubHost(tmp_path, {"answer": '{"ok": true}', "answer_path": answer})
    got = adapter().run_client(host, "c1", answer, argv=["client"], stdin="secret",
                               timeout=2.0)
    assert got == '{"ok": true}'
    assert host.killed == ["c1"] and not Path(answer).exists()
    assert host.calls == [{"code": None, "args": None, "argv": ["client"], "stdin": "secret"}]


def test_timeout_names_what_the_silent_client_printed(tmp_path):
    host = StubHost(tmp_path, {"log": "Traceback ...\nthe sync port is not reachable\n"})
    with pytest.raises(SciAgentError, match="gave no answer within 0s "
                       r"\(client output: (?s:.*)the sync port is not reachable\)"):
        adapter().run_client(host, "c2", str(tmp_path / "none"), code="pass", timeout=0.2)
    assert host.killed == ["c2"]


def test_timeout_without_client_output_says_only_that(tmp_path):
    host = StubHost(tmp_path, {})
    with pytest.raises(SciAgentError) as err:
        adapter().run_client(host, "c3", str(tmp_path / "none"), code="pass", timeout=0.1)
    assert "client output" not in str(err.value)


def test_call_client_returns_stdout_and_passes_args_off_the_command_line(tmp_path):
    host = StubHost(tmp_path, {"stdout": '{"ok": true}'})
    got = adapter().call_client(host, "c4", code="CLIENT", args=["1", "nonce"], timeout=1.0)
    assert got == '{"ok": true}' and host.killed == ["c4"]
    assert host.calls == [{"code": "CLIENT", "args": ["1", "nonce"], "argv": None,
                           "stdin": ""}]


def test_call_client_failure_names_the_exit_status_and_the_log(tmp_path):
    host = StubHost(tmp_path, {"stdout": "", "returncode": 3, "log": "port not reachable"})
    with pytest.raises(SciAgentError, match=r"failed \(exit 3\) \(client output: port not"):
        adapter().call_client(host, "c5", argv=["sh"], stdin="x", timeout=1.0)
    assert host.killed == ["c5"]


def test_call_client_lost_or_oversized_reply_is_an_error(tmp_path):
    host = StubHost(tmp_path, {"stdout": None, "returncode": 0})
    with pytest.raises(SciAgentError, match="gave no reply"):
        adapter().call_client(host, "c6", code="pass", timeout=1.0)


def test_call_client_check_gives_up_early(tmp_path):
    host = StubHost(tmp_path, {})

    def check() -> None:
        raise SciAgentError("a dialog opened")

    with pytest.raises(SciAgentError, match="a dialog opened"):
        adapter().call_client(host, "c7", code="pass", timeout=30.0, check=check)
    assert host.killed == ["c7"]
