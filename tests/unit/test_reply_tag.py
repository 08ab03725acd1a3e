"""The one-time tag on replies a program writes into a file (sciagent_gym.tools.reply_tag)."""

from __future__ import annotations

import random

import pytest

from sciagent_gym.tools import ReplyKey, ReplyTagError
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
