"""How many envs of one tool this machine holds (same as ``sciagent-gym bench --density``).

    python benchmarks/density.py --env SciGUI-DS9-v0 --out benchmarks/results
"""

import sys

from sciagent_gym.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["bench", "--density", *sys.argv[1:]]))
