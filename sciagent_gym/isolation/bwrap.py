"""bubblewrap itself: whether it can isolate here, and the read-only system binds every
sandbox starts from (the program and agent zones, and the evaluator's throwaway parsers).

Below both the providers and the evaluation, so neither reaches into the other for them.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from sciagent_gym.isolation import confinement as conf


@functools.lru_cache(maxsize=1)
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot isolate here, or None if it works (checked once per process):
    it must build an unprivileged user namespace as the uid a sandbox would run as."""
    if shutil.which("bwrap") is None:
        return "bwrap is not installed (apt-get install bubblewrap)"
    lease = conf.UidLease()
    try:
        argv = ["bwrap", *conf.bwrap_identity_args(lease.agent), "--unshare-all",
                "--die-with-parent", *system_binds(), "--", "/bin/true"]
        res = subprocess.run(argv, capture_output=True, timeout=10,
                             preexec_fn=conf.preexec(lease.agent, conf.AGENT_LIMITS))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap failed to start: {exc}"
    finally:
        lease.release()
    if res.returncode != 0:
        return ("bwrap cannot create an unprivileged sandbox (are user namespaces enabled? "
                "sysctl user.max_user_namespaces): "
                f"{res.stderr.decode(errors='replace').strip()}")
    return None


def system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), f"/{name}"]
        elif path.is_dir():
            args += ["--ro-bind", str(path), f"/{name}"]
    return args
