"""A baseline agent for any OpenAI-compatible chat-completions endpoint.

Each turn sends the instruction, the last few (screenshot, reply) pairs and the current
screenshot (a PNG data URL) and asks for pyautogui code or one of DONE / FAIL / WAIT. The reply
goes to ``env.step`` as it is, so the env's own parser (``ast`` against a whitelist, never
executed) decides what is valid; a rejected reply comes back to the model as feedback on the
next turn. Transient failures (connection errors, timeouts, HTTP 429 and 5xx) are retried with
exponential back-off, honouring ``Retry-After``; tokens and wall time are counted per episode.
"""

from __future__ import annotations

import base64
import io
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import requests
from PIL import Image

from sciagent_gym.errors import AgentError

SYSTEM_PROMPT = """\
You operate a scientific desktop program on a Linux screen of {width}x{height} pixels, like a \
scientist at the keyboard. Each turn you see the task, your last few actions and the current \
screenshot. Answer with Python code that uses pyautogui (click, doubleClick, rightClick, moveTo, \
dragTo, scroll, write, press, hotkey, keyDown, keyUp) and time.sleep, in one ```python block, \
or with exactly one word: DONE when the task is complete, FAIL when it cannot be done, WAIT to \
let the program work. Coordinates are screen pixels from the top-left corner."""

_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.S)
_SPECIAL = ("DONE", "FAIL", "WAIT")
_TRANSIENT = {408, 409, 425, 429, 500, 502, 503, 504}


EXAMPLE_PROMPT = """\
A worked example: the same task solved on another variant, on the same screen layout. Its
values (numbers, names, places) differ from yours: follow the way, not the values.
"""


def parse_reply(text: str) -> str:
    """The action in a model's reply: a fenced code block, else a lone DONE/FAIL/WAIT line,
    else the whole text (which the env will then accept or reject with a reason)."""
    fenced = _FENCE.findall(text or "")
    if fenced:
        return fenced[-1].strip()
    lines = [ln.strip().strip("`*.").upper() for ln in (text or "").splitlines() if ln.strip()]
    for word in _SPECIAL:
        if word in lines:
            return word
    return (text or "").strip()


def png_data_url(frame: np.ndarray, size: tuple[int, int] | None = None) -> str:
    img = Image.fromarray(frame)
    if size is not None:
        img = img.resize(size, Image.BILINEAR)
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=1)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


@dataclass
class Usage:
    """What an episode cost: model calls, retries, tokens and seconds spent waiting."""

    calls: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_seconds: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "retries": self.retries,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "total_tokens": self.total_tokens, "model_seconds": round(self.model_seconds, 3)}


@dataclass
class PromptAgent:
    """Screenshot + instruction + recent history in, one action string out.

    ``base_url`` ends before ``/chat/completions`` (e.g. ``http://127.0.0.1:8000/v1``).
    Unset options come from ``SCIAGENT_VLM_BASE_URL`` / ``OPENAI_BASE_URL``,
    ``SCIAGENT_VLM_MODEL`` and ``SCIAGENT_VLM_API_KEY`` / ``OPENAI_API_KEY``.
    """

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    history: int = 3
    image_size: tuple[int, int] | None = None
    max_tokens: int = 512
    temperature: float = 0.0
    timeout: float = 120.0
    retries: int = 5
    backoff: float = 1.0
    max_backoff: float = 30.0
    usage: Usage = field(default_factory=Usage)

    def __post_init__(self) -> None:
        env = os.environ
        self.base_url = (self.base_url or env.get("SCIAGENT_VLM_BASE_URL")
                         or env.get("OPENAI_BASE_URL") or "")
        self.model = self.model or env.get("SCIAGENT_VLM_MODEL") or ""
        self.api_key = (self.api_key if self.api_key is not None else
                        env.get("SCIAGENT_VLM_API_KEY") or env.get("OPENAI_API_KEY") or "")
        if not self.base_url:
            raise AgentError("no endpoint: pass base_url (--base-url) or set "
                             "SCIAGENT_VLM_BASE_URL")
        if not self.model:
            raise AgentError("no model: pass model (--model) or set SCIAGENT_VLM_MODEL")
        if self.history < 0 or self.retries < 0:
            raise ValueError("history and retries must be >= 0")
        self._session = requests.Session()
        self._turns: list[tuple[str, str]] = []
        self._instruction = ""
        self._screen = (0, 0)
        self._example = ""

    # -- episode API (what rollouts call) ---------------------------------------------------
    def reset(self, instruction: str, screen: tuple[int, int], example: str = "") -> None:
        """Start an episode. ``example``: a worked example shown before the first turn (a
        demonstration of the same task on another variant, :meth:`Demo.as_text`)."""
        self._instruction, self._screen = instruction, screen
        self._example = example
        self._turns = []
        self.usage = Usage()

    def act(self, obs: dict[str, Any], feedback: str | None = None) -> tuple[str, str]:
        """(action string for ``env.step``, the model's raw reply) for observation ``obs``.

        ``feedback`` (e.g. why the env rejected the last action) is shown to the model."""
        image = png_data_url(obs["screenshot"], self.image_size)
        reply = self._complete(self.messages(image, feedback))
        self._turns.append((image, reply))
        return parse_reply(reply), reply

    def messages(self, image: str, feedback: str | None = None) -> list[dict[str, Any]]:
        width, height = self._screen
        msgs: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT.format(width=width, height=height)}]
        if self._example:
            msgs.append({"role": "user", "content": EXAMPLE_PROMPT + self._example})
            msgs.append({"role": "assistant", "content": "Understood; I will solve my own task."})
        recent = self._turns[-self.history:] if self.history else []
        first = len(self._turns) - len(recent)
        for k, (old_image, reply) in enumerate(recent):
            msgs.append({"role": "user", "content": [
                {"type": "text", "text": f"Screenshot before your action {first + k + 1}."},
                {"type": "image_url", "image_url": {"url": old_image}}]})
            msgs.append({"role": "assistant", "content": reply})
        text = f"Task: {self._instruction}\nStep {len(self._turns) + 1}. Current screenshot:"
        if feedback:
            text = f"Your last action was rejected: {feedback}\n" + text
        msgs.append({"role": "user", "content": [
            {"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": image}}]})
        return msgs

    # -- the wire -----------------------------------------------------------------------------
    def _complete(self, messages: list[dict[str, Any]]) -> str:
        url = self.base_url.rstrip("/") + "/chat/completions"
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        body = {"model": self.model, "messages": messages, "max_tokens": self.max_tokens,
                "temperature": self.temperature}
        last = ""
        for attempt in range(self.retries + 1):
            wait = min(self.max_backoff, self.backoff * 2 ** attempt)
            t0 = time.monotonic()
            try:
                resp = self._session.post(url, json=body, headers=headers,
                                          timeout=self.timeout)
            except (requests.ConnectionError, requests.Timeout) as exc:
                last = f"{type(exc).__name__}: {exc}"
            else:
                if resp.status_code == 200:
                    self.usage.model_seconds += time.monotonic() - t0
                    self.usage.calls += 1
                    return self._read(resp)
                last = f"HTTP {resp.status_code}: {resp.text[:300]}"
                if resp.status_code not in _TRANSIENT:
                    raise AgentError(f"{url} refused the request: {last}")
                retry_after = resp.headers.get("Retry-After", "")
                if retry_after.replace(".", "", 1).isdigit():
                    wait = min(self.max_backoff, float(retry_after))
            if attempt < self.retries:
                self.usage.retries += 1
                time.sleep(wait)
        raise AgentError(f"{url} failed after {self.retries + 1} attempts: {last}")

    def _read(self, resp: requests.Response) -> str:
        try:
            data = resp.json()
            message = data["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise AgentError(f"not a chat-completions answer ({exc}): {resp.text[:300]}") from None
        usage = data.get("usage") or {}
        self.usage.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.usage.completion_tokens += int(usage.get("completion_tokens") or 0)
        content = message.get("content")
        if isinstance(content, list):  # some servers answer with content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        return content or ""
