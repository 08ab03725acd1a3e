"""Tags on what a program writes into a file of its zone (sciagent_gym.tools.reply_tag)."""

from __future__ import annotations

import ast
import hashlib
import hmac
import random
from pathlib import Path

import pytest

from sciagent_gym.tools import ChannelKey, ReplyKey, ReplyTagError, envs_root
from sciagent_gym.tools.reply_tag import P


def _macro_tag(key: ReplyKey, text: str) -> int:
    """What the ImageJ macro computes: doubles, charCodeAt (UTF-16 units), % on doubles."""
    raw = text.encode("utf-16-le")
    h = 0.0
    for i in range(0, len(raw), 2):
        h = (h * key.k1 + int.from_bytes(raw[i:i + 2], "little") + 1) % P
        assert h * key.k1 + key.k2 < 2 ** 53  # every intermediate value is exact in a double
    return int((h * key.k1 + key.k2) % P)


@pytest.mark.parametrize("text", ["", "42", "µm² 3.5", '{"n_images": 1, "titles": ["a b"]}',
                                  "x" * 5000, "line1\nline2\n", "\U0001f52c probe"])
def test_the_program_side_and_the_host_side_agree(text):
    key = ReplyKey.new()
    assert key.verify(f"{_macro_tag(key, text)}\n{text}") == text


def test_a_changed_reply_or_a_stale_tag_is_refused():
    key = ReplyKey.new()
    text = '{"n_images": 1, "pixel_width": 0.65}'
    genuine = f"{key.tag(text)}\n{text}"
    assert key.verify(genuine) == text
    with pytest.raises(ReplyTagError, match="not the program's"):
        key.verify(f"{key.tag(text)}\n{text.replace('1', '4242')}")
    with pytest.raises(ReplyTagError, match="not the program's"):
        ReplyKey.new().verify(genuine)  # another request's keys
    for malformed in (text, f"abc\n{text}", ""):
        with pytest.raises(ReplyTagError, match="no tag"):
            key.verify(malformed)


def test_forging_without_the_first_key_is_a_guess():
    """Knowing one genuine reply and its tag, a forger who shifts the tag by the difference a
    guessed first key predicts passes only when the guess is right."""
    rng = random.Random(7)
    wins = 0
    for text, forged in (("count 12", "count 13"), ("12", "13"), ("a", "ab"), ("ab", "b")):
        for _ in range(100):
            key = ReplyKey.new()
            t = key.tag(text)
            guess = ReplyKey(1 + rng.randrange(P - 1), 0)
            shifted = (t + guess.tag(forged) - guess.tag(text)) % P
            wins += shifted == key.tag(forged)
    assert wins == 0


def _qgis_side_tag(key: bytes):
    """``_tag`` as QGIS's channel defines it (envs/qgis/inside/channel.py, which imports qgis
    at its top, so only that function is taken out of it)."""
    source = (Path(envs_root()) / "qgis" / "inside" / "channel.py").read_text()
    func = next(n for n in ast.parse(source).body
                if isinstance(n, ast.FunctionDef) and n.name == "_tag")
    ns = {"hmac": hmac, "hashlib": hashlib, "_KEY": key}
    exec(compile(ast.Module([func], []), "channel.py", "exec"), ns)
    return ns["_tag"]


@pytest.mark.parametrize("text", ["", '{"ok": true, "out": 3}', "µm² \U0001f52c", "x" * 9000])
def test_the_qgis_channel_and_the_adapter_agree_on_tags(text):
    key = ChannelKey.new()
    program = _qgis_side_tag(key.key)
    request = key.sign("7-ab12", text)
    assert request.partition("\n")[0] == program("request", "7-ab12", text)
    assert key.verify("7-ab12", f"{program('answer', '7-ab12', text)}\n{text}") == text


def test_a_channel_answer_is_bound_to_its_key_its_request_and_its_direction():
    key = ChannelKey.new()
    text = '{"ok": true, "out": {"features": 12}}'
    genuine = f"{key.tag('answer', '3-aa', text)}\n{text}"
    assert key.verify("3-aa", genuine) == text
    refused = [
        f"{key.tag('answer', '3-aa', text)}\n{text.replace('12', '4242')}",  # changed
        genuine.replace("\n", "\n ", 1),  # one more character
        key.sign("3-aa", text),  # a request's tag is no answer's
        text,  # no tag
        "",
    ]
    for forged in refused:
        with pytest.raises(ReplyTagError, match="not the program's"):
            key.verify("3-aa", forged)
    with pytest.raises(ReplyTagError):
        key.verify("4-bb", genuine)  # an old answer for a later request
    with pytest.raises(ReplyTagError):
        ChannelKey.new().verify("3-aa", genuine)  # another launch's key
