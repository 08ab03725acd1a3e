"""DS9's XPA channel on the host's side: the access point's private name, a script's
commands, and the client's answers (one block per command, with its exit code)."""

from __future__ import annotations

XPA_NAME = "sciagent"
_SEP = "\x1e"


def parse_script(code: str) -> list[str]:
    """The script's commands: one per line, comments and blank lines dropped."""
    lines = [ln.strip() for ln in code.splitlines()]
    return [ln for ln in lines if ln and not ln.startswith("#")]


#: Seconds to ask again while DS9's access point is missing from the name server's list.
UNLISTED_RETRY = 2.0


def unlisted(answers: list[tuple[int, int, str]], mode: str) -> bool:
    """The name server listed no access point for DS9, so no command reached it: true when the
    first answer says so and nothing after it ran (``stop`` ends the request there; with
    ``all``, every answer must say so). For a moment right after a start, DS9's access point
    is missing from that list although it had answered (a request 0.02 s after a reset under
    the damage settle failed 2 times in 6: ``envs/ds9/NOTES.md``); a request then is safe to
    repeat."""
    def says(text: str) -> bool:
        return "access points match template" in text and text.lstrip().startswith("XPA$ERROR")

    if not answers or answers[0][1] == 0 or not says(answers[0][2]):
        return False
    return mode == "stop" or all(rc != 0 and says(text) for _, rc, text in answers)


def parse_answers(text: str) -> list[tuple[int, int, str]]:
    """(line number, exit code, answer text) per command from the client's answer file."""
    out = []
    for block in text.split(_SEP)[1:]:
        head, _, body = block.partition("\n")
        n, rc = head.split()
        out.append((int(n), int(rc), body.rstrip("\n")))
    return out
