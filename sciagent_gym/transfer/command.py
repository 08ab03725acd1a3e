"""What a shell command returned, as every provider and the control server report it.

Standard library only: the control server imports it inside a bare guest and on Windows.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CommandResult:
    returncode: int | None
    output: str
    timed_out: bool = False
    truncated: bool = False

    def terminal_text(self, command: str) -> str:
        """How the result appears in ``obs["terminal"]``."""
        status = "timed out" if self.timed_out else f"exit {self.returncode}"
        cut = "[... output truncated ...]\n" if self.truncated else ""
        body = self.output if not self.output or self.output.endswith("\n") else self.output + "\n"
        return f"$ {command}\n{cut}{body}[{status}]"
