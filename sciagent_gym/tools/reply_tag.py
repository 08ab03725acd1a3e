"""A one-time tag on a reply a program writes into a file, for languages with no hash function.

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
