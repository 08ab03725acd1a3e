"""How much of DS9's internal state does the screenshot alone reveal? A POMDP study.

The env runs the multi-toggle task ``ds9/display-toggles`` with ``expose_state=True``: after
reset and every step, ``info["state"]`` holds DS9's state dump read through XPA (never part of
the observation). A random policy over a few GUI toggles (the button bar's colour bar,
magnifier and panner buttons) visits states; the grid and inverted colour map differ between
episodes because the task's start state is random. For each state variable the script
measures:

- **aliasing**: the share of observations whose exact screenshot also occurs with another value
  of the variable (then no policy can tell the value from that frame alone);
- **1-NN accuracy**: leave-one-out nearest neighbour on small grey frames, against always
  guessing the most common value; near 1 means the frame determines the variable.

    python examples/pomdp_observability.py --episodes 30 --out pomdp-out

Results: a table on the terminal, ``OUT/observability.json`` and ``OUT/observability.png``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import Counter, defaultdict
from pathlib import Path

import gymnasium as gym
import numpy as np
from PIL import Image
from tqdm import tqdm

import sciagent_gym  # noqa: F401  (registers SciGUI-* ids)
from sciagent_gym.wrappers import TargetActions

TASK = "ds9/display-toggles"
TARGETS = {"colour bar": [(168, 207), (665, 233)], "magnifier": [(168, 207), (318, 233)],
           "panner": [(168, 207), (197, 233)]}
VARIABLES = {  # name: how to read it from the state dump
    "colour bar shown": lambda s: s["colorbar"],
    "coordinate grid shown": lambda s: s["grid"],
    "colour map inverted": lambda s: s["cmap"]["invert"],
    "magnifier shown": lambda s: s["view"]["magnifier"],
    "panner shown": lambda s: s["view"]["panner"],
}
SMALL = (64, 40)


def collect(episodes: int, max_steps: int, seed: int) -> list[tuple[str, np.ndarray, dict]]:
    """(frame hash, small grey frame, variable values) for every observation of the run."""
    env = TargetActions(gym.make("SciGUI-DS9-v0", task=TASK, expose_state=True,
                                 max_steps=max_steps), TARGETS)
    rng = np.random.default_rng(seed)
    samples = []

    def record(obs, info) -> None:
        if "state" not in info:  # the dump failed (info["state_error"] says why): skip
            return
        frame = obs["screenshot"]
        small = np.asarray(Image.fromarray(frame).convert("L").resize(SMALL, Image.BILINEAR),
                           dtype=np.float32) / 255.0
        values = {name: read(info["state"]) for name, read in VARIABLES.items()}
        samples.append((hashlib.sha1(frame.tobytes()).hexdigest(), small.ravel(), values))

    try:
        for episode in tqdm(range(episodes), desc="episodes", unit="ep"):
            obs, info = env.reset(seed=seed + episode)
            record(obs, info)
            for _ in range(max_steps - 1):  # the last step is DONE, which ends the episode
                obs, _, terminated, truncated, info = env.step(
                    int(rng.integers(len(TARGETS))))
                record(obs, info)
                if terminated or truncated:
                    break
            else:
                env.step(len(TARGETS))  # DONE
    finally:
        env.close()
    return samples


def analyse(samples: list[tuple[str, np.ndarray, dict]]) -> dict[str, dict]:
    frames = np.stack([s[1] for s in samples])
    # Leave-one-out nearest neighbour: squared distances between all small frames.
    sq = (frames ** 2).sum(1)
    dist = sq[:, None] + sq[None, :] - 2 * frames @ frames.T
    np.fill_diagonal(dist, np.inf)
    nearest = dist.argmin(1)
    out = {}
    for name in VARIABLES:
        values = [s[2][name] for s in samples]
        by_hash: dict[str, set] = defaultdict(set)
        for (digest, _, _), v in zip(samples, values, strict=True):
            by_hash[digest].add(v)
        aliased = sum(len(by_hash[d]) > 1 for d, _, _ in samples) / len(samples)
        knn = float(np.mean([values[i] == values[j] for i, j in enumerate(nearest)]))
        majority = Counter(values).most_common(1)[0][1] / len(values)
        out[name] = {"aliased": aliased, "knn_accuracy": knn, "majority_baseline": majority,
                     "values": {str(k): c for k, c in Counter(values).items()}}
    return out


def plot(path: Path, results: dict[str, dict], n: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(results)
    x = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.bar(x - 0.2, [results[k]["knn_accuracy"] for k in names], 0.4, label="1-NN from pixels")
    ax.bar(x + 0.2, [results[k]["majority_baseline"] for k in names], 0.4,
           label="majority guess")
    ax.plot(x, [results[k]["aliased"] for k in names], "kx", label="aliased frames")
    ax.set_xticks(x, names, rotation=20, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("share of observations")
    ax.set_title(f"What the screenshot reveals of DS9's state ({n} observations, {TASK})")
    ax.legend(loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=30)
    parser.add_argument("--max-steps", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("pomdp-out"))
    args = parser.parse_args(argv)
    samples = collect(args.episodes, args.max_steps, args.seed)
    if len(samples) < 2:
        raise SystemExit("too few observations with a state dump to compare")
    results = analyse(samples)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "observability.json").write_text(json.dumps(
        {"task": TASK, "observations": len(samples), "variables": results}, indent=2))
    plot(args.out / "observability.png", results, len(samples))
    print(f"{len(samples)} observations of {TASK}")
    print(f"{'variable':<24} {'aliased':>8} {'1-NN':>6} {'majority':>9}")
    for name, r in results.items():
        print(f"{name:<24} {r['aliased']:>8.2f} {r['knn_accuracy']:>6.2f} "
              f"{r['majority_baseline']:>9.2f}")
    return {"observations": len(samples), "variables": results}


if __name__ == "__main__":
    main()
