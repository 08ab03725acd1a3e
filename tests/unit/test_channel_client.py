"""ToolAdapter.run_client: the answer file, the timeout, and what a silent client said."""

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
        self.root, self.behave, self.killed = root, behave, []

    @property
    def paths(self) -> dict[str, str]:
        return {"home": str(self.root), "work": str(self.root), "tmp": str(self.root)}

    def spawn_in_sandbox(self, name: str, argv: list[str]) -> None:
        if "log" in self.behave:
            (self.root / f"{name}.log").write_text(self.behave["log"])
        if "answer" in self.behave:
            Path(argv[-1]).write_text(self.behave["answer"])

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
    host = StubHost(tmp_path, {"answer": '{"ok": true}'})
    answer = str(tmp_path / "a.json")
    assert adapter().run_client(host, "c1", ["client", answer], answer, 2.0) == '{"ok": true}'
    assert host.killed == ["c1"] and not Path(answer).exists()


def test_timeout_names_what_the_silent_client_printed(tmp_path):
    host = StubHost(tmp_path, {"log": "Traceback ...\nthe sync port is not reachable\n"})
    with pytest.raises(SciAgentError, match="gave no answer within 0s "
                       r"\(client output: (?s:.*)the sync port is not reachable\)"):
        adapter().run_client(host, "c2", ["client", "x"], str(tmp_path / "none"), 0.2)
    assert host.killed == ["c2"]


def test_timeout_without_client_output_says_only_that(tmp_path):
    host = StubHost(tmp_path, {})
    with pytest.raises(SciAgentError) as err:
        adapter().run_client(host, "c3", ["client", "x"], str(tmp_path / "none"), 0.1)
    assert "client output" not in str(err.value)
