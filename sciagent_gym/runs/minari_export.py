"""Run directories as a Minari dataset (the Farama standard for offline RL data).

Each recorded episode becomes one Minari episode: observations are the screenshots the run
saved (the reset frame, then one per step; optionally resized), actions are the recorded
actions as JSON text (pyautogui strings, structured actions in their dict form; a Text space,
since agents here act in several forms), rewards and termination flags as the env returned
them. Each episode keeps its seed; its variant and final score are in its ``infos``, and the
dataset description lists the task of every episode.
Needs the optional ``minari`` package (``pip install 'sciagent-gym[data]'``).
"""

from __future__ import annotations

import json
import os
import string
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces
from PIL import Image

from sciagent_gym.runs.replay import episode_dirs, load_episode

ACTION_CHARSET = string.printable
MAX_ACTION_CHARS = 4096


def _frame(path: Path, size: tuple[int, int] | None) -> np.ndarray:
    img = Image.open(path).convert("RGB")
    if size is not None and img.size != size:
        img = img.resize(size, Image.BILINEAR)
    return np.asarray(img, dtype=np.uint8)


def _action_text(action: Any) -> str:
    text = action if isinstance(action, str) else json.dumps(action, sort_keys=True)
    text = text.encode("ascii", "backslashreplace").decode("ascii")
    if len(text) > MAX_ACTION_CHARS:
        raise ValueError(f"an action is longer than {MAX_ACTION_CHARS} characters")
    return text


def episode_buffer(ep_dir: Path, index: int, size: tuple[int, int] | None = None):
    """One recorded episode as a ``minari.EpisodeBuffer`` (scripted oracle steps, which are not
    agent actions, are left out; their effect shows in the next frame)."""
    from minari.data_collector import EpisodeBuffer

    result, lines = load_episode(ep_dir)
    reset = next((x for x in lines if "reset" in x), None)
    if reset is None or not reset.get("screenshot"):
        raise ValueError(f"{ep_dir}: the trajectory has no reset frame")
    steps = [x for x in lines if "action" in x and "step" in x]
    if not steps:
        raise ValueError(f"{ep_dir}: the trajectory has no steps")
    missing = [x.get("screenshot") for x in steps if not x.get("screenshot")]
    if missing:
        raise ValueError(f"{ep_dir}: {len(missing)} steps have no saved screenshot")
    frames = [_frame(ep_dir / reset["screenshot"], size)]
    frames += [_frame(ep_dir / x["screenshot"], size) for x in steps]
    shapes = {f.shape for f in frames}
    if len(shapes) != 1:
        raise ValueError(f"{ep_dir}: frames of different sizes {sorted(shapes)}; pass a size")
    return EpisodeBuffer(
        id=index, seed=int(result["seed"]),
        observations=np.stack(frames),
        actions=[_action_text(x["action"]) for x in steps],
        rewards=[float(x.get("reward") or 0.0) for x in steps],
        terminations=[bool(x.get("terminated")) for x in steps],
        truncations=[bool(x.get("truncated")) for x in steps],
        infos={"variant": np.full(len(steps) + 1, int(result["variant"]), np.int64),
               "score": np.full(len(steps) + 1, float(result["score"]), np.float64)},
    )


def export_runs(run_dirs: list[Path], dataset_id: str, size: tuple[int, int] | None = None,
                root: Path | None = None, jpeg: bool = False, author: str | None = None,
                progress=None):
    """Write every episode of ``run_dirs`` into a new local Minari dataset; returns it."""
    if root is not None:
        os.environ["MINARI_DATASETS_PATH"] = str(Path(root).resolve())
    import minari

    episodes = [ep for run in run_dirs for ep in episode_dirs(Path(run))]
    buffers, tasks = [], []
    for i, ep in enumerate(episodes):
        buffers.append(episode_buffer(ep, i, size))
        tasks.append(load_episode(ep)[0]["task_id"])
        if progress is not None:
            progress(ep)
    frame_shape = buffers[0].observations.shape[1:]
    for ep, buf in zip(episodes, buffers, strict=True):
        if buf.observations.shape[1:] != frame_shape:
            raise ValueError(f"{ep}: frames {buf.observations.shape[1:]} differ from "
                             f"{frame_shape}; pass a size")
    description = ("sciagent-gym episodes; observations are screenshots, actions JSON text. "
                   "Episodes (id: task): "
                   + "; ".join(f"{i}: {t}" for i, t in enumerate(tasks)))
    return minari.create_dataset_from_buffers(
        dataset_id=dataset_id, buffer=buffers,
        observation_space=spaces.Box(0, 255, frame_shape, np.uint8),
        action_space=spaces.Text(MAX_ACTION_CHARS, min_length=0, charset=ACTION_CHARSET),
        algorithm_name="sciagent-gym rollouts", author=author, description=description,
        jpeg_encoding=jpeg)
