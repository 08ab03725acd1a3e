"""The earth-data code env: an xterm in the agent zone, over the staged CSV files.

The program is a terminal whose shell is the agent's own: xterm runs in the agent zone
(``program_zone = "agent"``), with the same uid and /tmp as the agent's ``run()`` commands, and
starts in the work directory, where the task's CSV files are staged. The sandbox's
``/usr/bin/python3`` has pandas, NumPy, SciPy and scikit-learn (Debian 12's packages). Nothing
else runs: there is no server and no state channel; the env's state is what the agent wrote
into the work directory, and every gold value (withheld test-period streamflow, the true
fluxes in gaps, the reference pipeline's metrics) stays on the host.

The shell shows its state in the window title: ``EarthData terminal: running`` while a command
runs (bash's ``PS0``) and ``EarthData terminal: ready N`` at the N-th prompt after the first
(``PROMPT_COMMAND``), which is what an agent (and a GUI oracle) waits for before reading output.
"""

from __future__ import annotations

from sciagent_gym.sdk import TerminalAdapter, ready_pattern

TITLE = "EarthData terminal"
READY = ready_pattern(TITLE)


class Adapter(TerminalAdapter):
    title = TITLE
    judged_on = "the work directory's files"
    #: one BLAS and OpenMP thread for the agent's NumPy, SciPy and scikit-learn
    extra_env = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
