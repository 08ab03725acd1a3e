"""The full speed benchmark of one env (same as ``sciagent-gym bench``).

    python benchmarks/bench.py --env SciGUI-ImageJ-v0 --out benchmarks/results
"""

import sys

from sciagent_gym.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
