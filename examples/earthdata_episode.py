"""One ST-Bench-style episode of SciCode-EarthData-v0, as a code agent plays it.

    python examples/earthdata_episode.py [--reward stbench|partial]

The query ``northern-peat`` of ``earthdata/methane-annual-budget`` is pinned; the "agent" runs
one shell command in the sandbox (a ``run()`` action): it fills each site's flux gaps with that
site's mean, which is a plausible but biased method (gaps cluster in cold seasons), writes
budget.csv and metrics.json, and says DONE. The evaluator recomputes the budget error from
budget.csv against fluxes the sandbox never held; the final info carries ST-Bench's per-metric
breakdown.
"""

from __future__ import annotations

import argparse
import json

import gymnasium as gym

import sciagent_gym  # noqa: F401  (registers the envs)

SCRIPT = r"""python3 - <<'EOF'
import json
import pandas as pd
ids = pd.read_csv("sites.csv").query("wetland_type != 'marsh' and lat >= 55").site_id
f = pd.read_csv("fluxes.csv")
f = f[f.site_id.isin(ids)]
filled = f.groupby("site_id").ch4_flux.transform(lambda s: s.fillna(s.mean()))
budget = (filled.groupby(f.site_id).sum() / 1000 / 3).rename("budget").reset_index()
budget.to_csv("budget.csv", index=False)
json.dump({"median_budget": float(budget.budget.median())}, open("metrics.json", "w"))
EOF"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reward", default="stbench", choices=("stbench", "partial"))
    args = ap.parse_args()
    env = gym.make("SciCode-EarthData-v0", reward=args.reward)
    try:
        _, info = env.reset(options={"task": "earthdata/methane-annual-budget",
                                     "query": "northern-peat"})
        print(f"query {info['query']} ({info['split']} split): {info['instruction'][:120]}...")
        _, _, _, _, info = env.step(f"run({SCRIPT!r})")
        _, reward, terminated, _, info = env.step("DONE")
        print(f"terminated={terminated} reward={reward:.3f}")
        print(json.dumps(info["stbench"], indent=1, default=str))
    finally:
        env.close()


if __name__ == "__main__":
    main()
