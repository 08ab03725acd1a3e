"""The Praat tasks' sounds on the host: 16-bit mono WAV files written and read back as Praat
reads them, Praat's intensity of a sound, and ``praat --run`` of a gold script (with a
throw-away HOME), so gold values that depend on Praat's analyses come from Praat itself.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import wave
from pathlib import Path
from typing import Any

import numpy as np

P_REF = 2e-5  # Pa: Praat's reference for intensity in dB


def write_wav(path: Path, samples: np.ndarray, rate: int) -> np.ndarray:
    """Write mono 16-bit PCM; returns the samples as Praat reads them back (-1..1)."""
    pcm = np.clip(np.round(np.asarray(samples, float) * 32768), -32768, 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(int(rate))
        w.writeframes(pcm.tobytes())
    return pcm.astype(float) / 32768


def read_wav(path: Path) -> tuple[np.ndarray, int, int]:
    """(samples of the first channel scaled to -1..1, rate, channels) of a 16-bit PCM WAV."""
    with wave.open(str(path), "rb") as w:
        rate, channels, width = w.getframerate(), w.getnchannels(), w.getsampwidth()
        raw = w.readframes(w.getnframes())
    if width != 2:
        raise ValueError(f"{path}: {8 * width}-bit samples, expected 16-bit")
    data = np.frombuffer(raw, "<i2").astype(float) / 32768
    return data.reshape(-1, channels)[:, 0], rate, channels


def intensity_db(samples: np.ndarray) -> float:
    """Praat's Sound: Get intensity (dB): 10 log10 of the mean square over (2e-5 Pa)^2
    (-inf for silence, where Praat says "undefined")."""
    with np.errstate(divide="ignore"):
        return float(10 * np.log10(np.mean(np.square(samples)) / P_REF**2))


def praat_run(script: str, *args: Any) -> list[str]:
    """Run a Praat script headless on the host; returns its Info lines."""
    with tempfile.TemporaryDirectory(prefix="sciagent-praat-gold-") as home:
        return praat_run_in(Path(home), script, *args)


def praat_run_in(home: Path, script: str, *args: Any) -> list[str]:
    """``praat --run`` with ``home`` as HOME (where a script may also leave files)."""
    path = home / "gold.praat"
    path.write_text(script)
    res = subprocess.run(["praat", "--run", str(path), *map(str, args)],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "HOME": str(home)})
    if res.returncode != 0:
        raise RuntimeError(f"praat --run failed: {res.stderr.strip() or res.stdout.strip()}")
    return res.stdout.split()
