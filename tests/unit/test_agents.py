"""The prompt agent against a small local server that speaks the chat-completions protocol and
answers from a script: a stand-in for the model only; the env it drives is the real ImageJ."""

from __future__ import annotations

import numpy as np
import pytest

from sciagent_gym.agents import AgentError, PromptAgent, parse_reply

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


def test_a_worked_example_comes_before_the_turns_and_only_when_given(model_server):
    server = model_server([(200, "DONE"), (200, "DONE")])
    agent = PromptAgent(base_url=server.url, model="m", api_key="k")
    agent.reset("Turn the grid on.", (60, 40), example="Instruction: Turn the grid off.\n1. DONE")
    agent.act(OBS)
    msgs = server.requests[-1]["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert "worked example" in msgs[1]["content"] and "grid off" in msgs[1]["content"]
    agent.reset("Turn the grid on.", (60, 40))
    agent.act(OBS)
    assert [m["role"] for m in server.requests[-1]["messages"]] == ["system", "user"]
