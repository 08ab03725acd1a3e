"""The prompt agent against a small local server that speaks the chat-completions protocol and
answers from a script: a stand-in for the model only; the env it drives is the real ImageJ."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from sciagent_gym.agents import AgentError, PromptAgent, parse_reply
from sciagent_gym.cli.main import main


class ScriptedModel:
    """Serves /v1/chat/completions; each request takes the next scripted (status, reply)."""

    def __init__(self, script: list[tuple[int, str]]) -> None:
        self.script = list(script)
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                model.requests.append(body)
                model.headers.append(dict(self.headers))
                if self.path != "/v1/chat/completions":
                    self.send_error(404)
                    return
                status, reply = model.script.pop(0) if model.script else (200, "DONE")
                if status != 200:
                    self.send_response(status)
                    self.send_header("Retry-After", "0")
                    self.end_headers()
                    self.wfile.write(b'{"error": "scripted failure"}')
                    return
                payload = json.dumps({
                    "id": "x", "object": "chat.completion", "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": reply}}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 7,
                              "total_tokens": 107}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def model_server():
    servers = []

    def make(script):
        servers.append(ScriptedModel(script))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


OBS = {"screenshot": np.zeros((40, 60, 3), np.uint8)}


@pytest.mark.parametrize(("reply", "action"), [
    ("Click it.\n```python\npyautogui.click(10, 20)\n```", "pyautogui.click(10, 20)"),
    ("```\npyautogui.press('enter')\n```", "pyautogui.press('enter')"),
    ("The task is complete.\nDONE", "DONE"),
    ("**FAIL**", "FAIL"),
    ("pyautogui.write('abc')", "pyautogui.write('abc')"),
    ("", ""),
])
def test_parse_reply(reply, action):
    assert parse_reply(reply) == action


def test_messages_carry_instruction_image_and_bounded_history(model_server):
    server = model_server([(200, f"```python\npyautogui.click({i}, 1)\n```") for i in range(5)])
    agent = PromptAgent(base_url=server.url, model="m", api_key="secret", history=2)
    agent.reset("Count the nuclei.", (60, 40))
    for i in range(4):
        action, _ = agent.act(OBS, feedback="bad key 'foo'" if i == 3 else None)
        assert action == f"pyautogui.click({i}, 1)"
    last = server.requests[-1]["messages"]
    assert last[0]["role"] == "system" and "60x40" in last[0]["content"]
    # system + 2 earlier (user, assistant) pairs + the current user turn
    assert [m["role"] for m in last] == ["system", "user", "assistant", "user", "assistant",
                                         "user"]
    assert last[2]["content"] == "```python\npyautogui.click(1, 1)\n```"
    current = last[-1]["content"]
    assert "Count the nuclei." in current[0]["text"] and "bad key 'foo'" in current[0]["text"]
    assert current[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert server.headers[-1]["Authorization"] == "Bearer secret"
    assert agent.usage.calls == 4 and agent.usage.total_tokens == 4 * 107


def test_transient_errors_are_retried_then_given_up(model_server):
    server = model_server([(503, ""), (429, ""), (200, "WAIT")])
    agent = PromptAgent(base_url=server.url, model="m", backoff=0.01)
    agent.reset("x", (60, 40))
    assert agent.act(OBS)[0] == "WAIT"
    assert agent.usage.retries == 2 and agent.usage.calls == 1
    server.script = [(500, "")] * 3
    agent = PromptAgent(base_url=server.url, model="m", backoff=0.01, retries=2)
    agent.reset("x", (60, 40))
    with pytest.raises(AgentError, match="after 3 attempts"):
        agent.act(OBS)


def test_client_errors_and_missing_settings_are_clear(model_server, monkeypatch):
    server = model_server([(401, "")])
    agent = PromptAgent(base_url=server.url, model="m", backoff=0.01)
    agent.reset("x", (60, 40))
    with pytest.raises(AgentError, match="HTTP 401"):
        agent.act(OBS)
    for var in ("SCIAGENT_VLM_BASE_URL", "OPENAI_BASE_URL", "SCIAGENT_VLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(AgentError, match="base-url"):
        PromptAgent(model="m")
    with pytest.raises(AgentError, match="--model"):
        PromptAgent(base_url=server.url)
    agent = PromptAgent(base_url="http://127.0.0.1:9/v1", model="m", backoff=0.01, retries=1)
    agent.reset("x", (60, 40))
    with pytest.raises(AgentError, match="ConnectionError"):
        agent.act(OBS)


@pytest.mark.e2e
def test_vlm_policy_runs_the_real_env_and_writes_a_run_dir(model_server, tmp_path, capsys):
    server = model_server([
        (200, "I will click the image.\n```python\npyautogui.click(300, 300)\n```"),
        (200, "```python\npyautogui.frobnicate()\n```"),
        (503, ""),
        (200, "DONE"),
    ])
    out = tmp_path / "run"
    rc = main(["run", "--env", "SciGUI-ImageJ-v0", "--task", "imagej/count-nuclei",
               "--policy", "vlm", "--base-url", server.url, "--model", "scripted",
               "--episodes", "1", "--out", str(out), "-q"])
    assert rc == 0
    [ep] = [p for p in out.iterdir() if p.is_dir()]
    lines = [json.loads(x) for x in (ep / "trajectory.jsonl").read_text().splitlines()]
    steps = [x for x in lines if "reply" in x]
    assert [x["reply"] for x in steps][0].startswith("I will click")
    assert steps[1]["action_error"]  # the env rejected the unknown function ...
    assert "frobnicate" in json.dumps(server.requests[2]["messages"][-1])  # ... and said so
    assert steps[-1]["action"] == "DONE" and steps[-1]["evaluation"] is not None
    result = json.loads((ep / "result.json").read_text())
    assert result["policy"] == "vlm" and 0.0 <= result["score"] <= 1.0
    assert result["agent"]["calls"] == 3 and result["agent"]["retries"] == 1
    assert result["agent"]["total_tokens"] == 3 * 107
    assert all((ep / x["screenshot"]).is_file() for x in steps)
    assert main(["report", str(out)]) == 0
    assert "imagej/count-nuclei" in capsys.readouterr().out
    assert Path(out / "summary.json").is_file()
