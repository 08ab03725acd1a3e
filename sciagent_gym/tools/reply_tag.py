"""Tags on what a program writes into a file of its zone, so a replaced file is caught.

:class:`ChannelKey` (HMAC-SHA256 both ways) for programs that can compute one;
:class:`ReplyKey`, a one-time tag, for languages with no hash function.

Where a program can only answer by writing a file into its zone's /tmp (ImageJ's macros), any
other process of the zone can replace that file between its writing and its reading: a shell
started from the program's console would. So the request carries two fresh random keys and the
program tags its reply with a polynomial evaluated at the first key, masked by the second
(a Carter-Wegman one-time MAC), which takes only integer arithmetic below 2**53 (a macro
language's doubles). Seeing one genuine reply and its tag tells nothing about the first key,
so a replaced reply passes with probability at most (its length in UTF-16 units) / P, about
3e-5 for a 2,000-character reply. Keys are used once. A process that reads the program's memory
(same uid, a dumpable program) could still learn them: this stops the file race, not that.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import ClassVar

from sciagent_gym.errors import ReplyTagError

#: A prime below 2**26: a running value times a key stays exact in a double.
P = 67108859


@dataclass(frozen=True)
class ReplyKey:
    """The two keys of one request (see the module docstring)."""

    k1: int
    k2: int
    #: the modulus, for the program's side of the computation
    P: ClassVar[int] = P

    @classmethod
    def new(cls) -> ReplyKey:
        return cls(1 + secrets.randbelow(P - 1), secrets.randbelow(P))

    def tag(self, text: str) -> int:
        """Horner's rule over the UTF-16 code units of ``text`` (each plus one) at ``k1``, times
        ``k1``, plus ``k2``, modulo P: what the program computes (``charCodeAt`` gives those
        units)."""
        h = 0
        units = text.encode("utf-16-le")
        for i in range(0, len(units), 2):
            h = (h * self.k1 + int.from_bytes(units[i:i + 2], "little") + 1) % P
        # one more factor of k1: no unit of the reply enters the tag with a known coefficient
        # (else changing the last character by d would change the tag by d)
        return (h * self.k1 + self.k2) % P

    def verify(self, tagged: str) -> str:
        """The reply of ``tagged`` (its tag, a newline, the reply) if the tag matches."""
        head, sep, text = tagged.partition("\n")
        if not sep or not head.strip().isdigit():
            raise ReplyTagError("the reply carries no tag")
        if int(head.strip()) != self.tag(text):
            raise ReplyTagError("the reply's tag does not match: it was not the program's")
        return text


@dataclass(frozen=True)
class ChannelKey:
    """An HMAC-SHA256 key shared by an adapter and a program that can compute one (Python
    inside QGIS): both directions of a file channel carry a tag, so a process of the zone that
    replaces a request or an answer file is caught. Unlike :class:`ReplyKey` it lives as long
    as the program: the program gets it once, at launch, in a way no other process of its zone
    can read (see the tool's channel), so it is never sent with a request."""

    key: bytes

    @classmethod
    def new(cls) -> ChannelKey:
        return cls(secrets.token_bytes(32))

    @property
    def hex(self) -> str:
        return self.key.hex()

    def tag(self, kind: str, name: str, text: str) -> str:
        """The tag of one ``kind`` ("request" or "answer") of request ``name``: bound to both,
        so neither a request's tag nor an old answer can stand in for another."""
        msg = b"\0".join((kind.encode(), name.encode(), text.encode("utf-8", "surrogatepass")))
        return hmac.new(self.key, msg, hashlib.sha256).hexdigest()

    def sign(self, name: str, code: str) -> str:
        """A request's file content: its tag, a newline, the code."""
        return f"{self.tag('request', name, code)}\n{code}"

    def verify(self, name: str, tagged: str) -> str:
        """The answer's text if its first line is its tag."""
        head, sep, text = tagged.partition("\n")
        if not sep or not hmac.compare_digest(head.strip(), self.tag("answer", name, text)):
            raise ReplyTagError("the answer's tag does not match: it was not the program's")
        return text
