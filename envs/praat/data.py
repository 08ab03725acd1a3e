"""Input sounds for the Praat tasks, and the gold values derived from them.

Every generator takes ``(work_dir, rng, **args)``, writes its files into the task's working
directory and returns gold values computed from the data it wrote. Speech is synthesised with
``espeak-ng`` at a known pitch and speed; tones and vowels are made with numpy. Gold values that
depend on Praat's analyses (pitch, formants) come from ``praat --run`` on the host over the same
files (with a throw-away HOME), never from the sandbox.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import wave
from pathlib import Path
from typing import Any

import numpy as np

SENTENCES = (
    "she sells sea shells by the sea shore on sunny days",
    "the quick brown fox jumps over the lazy dog again",
    "we were away a year ago when all the leaves were yellow",
    "many mellow lemons were lying in the narrow valley",
)
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
    """Praat's Sound: Get intensity (dB): 10 log10 of the mean square over (2e-5 Pa)^2."""
    return float(10 * np.log10(np.mean(np.square(samples)) / P_REF**2))


def praat_run(script: str, *args: Any) -> list[str]:
    """Run a Praat script headless on the host; returns its Info lines."""
    with tempfile.TemporaryDirectory(prefix="sciagent-praat-gold-") as home:
        path = Path(home) / "gold.praat"
        path.write_text(script)
        res = subprocess.run(["praat", "--run", str(path), *map(str, args)],
                             capture_output=True, text=True, timeout=120,
                             env={**os.environ, "HOME": home})
    if res.returncode != 0:
        raise RuntimeError(f"praat --run failed: {res.stderr.strip() or res.stdout.strip()}")
    return res.stdout.split()


def _espeak(path: Path, text: str, pitch: int, speed: int) -> None:
    subprocess.run(["espeak-ng", "-v", "en-us", "-p", str(pitch), "-s", str(speed),
                    "-w", str(path), text], check=True, capture_output=True, timeout=60)


_PITCH_GOLD = """form gold
  sentence path
  real t1
  real t2
  real floor
  real ceiling
endform
Read from file: path$
To Pitch: 0, floor, ceiling
a = Get mean: t1, t2, "Hertz"
b = Get mean: 0, 0, "Hertz"
c = Get mean: t1, t2, "semitones re 100 Hz"
d = Get quantile: t1, t2, 0.5, "Hertz"
writeInfoLine: a, " ", b, " ", c, " ", d
"""


def speech(work: Path, rng: np.random.Generator, path: str, pitch: int = 50,
           speed: int = 150, sentence: int | None = None, t1: float = 0.0, t2: float = 0.0,
           floor: float = 75.0, ceiling: float = 600.0) -> dict[str, Any]:
    """A spoken English sentence (espeak-ng, voice en-us, 22050 Hz) at ``pitch`` 0-99 and
    ``speed`` words a minute; the sentence is drawn with ``rng`` unless given.

    Gold: duration, sampling_frequency, intensity_db (as Praat computes it), and Praat's
    pitch means with ``floor``-``ceiling``: mean_f0 over ``t1``-``t2`` (whole file when both
    are 0), mean_f0_all over the whole file, the same segment in semitones re 100 Hz and its
    median.
    """
    text = SENTENCES[int(rng.integers(len(SENTENCES))) if sentence is None else sentence]
    target = work / path
    _espeak(target, text, pitch, speed)
    samples, rate, _ = read_wav(target)
    duration = len(samples) / rate
    if t2 > duration:
        raise ValueError(f"segment end {t2} s is past the end of the speech ({duration:.2f} s)")
    f0, f0_all, f0_st, f0_median = (float(v) for v in
                                    praat_run(_PITCH_GOLD, target, t1, t2, floor, ceiling)[:4])
    return {"duration": duration, "sampling_frequency": rate, "text": text,
            "intensity_db": intensity_db(samples), "mean_f0": f0, "mean_f0_all": f0_all,
            "mean_f0_semitones": f0_st, "median_f0": f0_median, "n_samples": len(samples),
            "array": samples[None, :].astype(np.float32)}


def segment(work: Path, rng: np.random.Generator, source: str, t1: float, t2: float
            ) -> dict[str, Any]:
    """The part ``t1``-``t2`` (s) of the WAV ``source``, as Praat's Extract part cuts it.

    Gold: its duration, its samples (as a reference array) and the intensity of the part.
    """
    samples, rate, _ = read_wav(work / source)
    i1, i2 = int(round(t1 * rate)), int(round(t2 * rate))
    part = samples[i1:i2]
    return {"duration": t2 - t1, "sampling_frequency": rate, "intensity_db": intensity_db(part),
            "array": part[None, :].astype(np.float32)}


def tones(work: Path, rng: np.random.Generator, names: list[str], order: list[str],
          rate: int = 16000) -> dict[str, Any]:
    """One short WAV per name: a steady tone each at a different pitch (0.3-0.6 s, 10 ms
    ramps), and the concatenation in ``order`` as a reference array.

    Gold: each file's duration, the total duration and the concatenated samples.
    """
    freqs = rng.permutation(np.array([220.0, 330.0, 440.0, 550.0, 660.0, 880.0]))
    read: dict[str, np.ndarray] = {}
    durations = {}
    for name, freq in zip(names, freqs, strict=False):
        dur = float(np.round(rng.uniform(0.3, 0.6), 2))
        t = np.arange(int(dur * rate)) / rate
        ramp = np.minimum(1, np.minimum(t, dur - t) / 0.01)
        read[name] = write_wav(work / f"{name}.wav", 0.3 * ramp * np.sin(2 * np.pi * freq * t),
                               rate)
        durations[name] = len(read[name]) / rate
    whole = np.concatenate([read[name] for name in order])
    wrong = np.concatenate([read[name] for name in reversed(order)])
    return {"total_duration": len(whole) / rate, "durations": durations,
            "array": whole[None, :].astype(np.float32),
            "reversed": wrong[None, :].astype(np.float32)}


_VOWELS = {"a": (750, 1200, 2600), "i": (290, 2250, 2900), "u": (320, 850, 2300),
           "e": (480, 1850, 2650), "o": (500, 900, 2500)}

_FORMANT_GOLD = """form gold
  sentence path
  real t
  real other
endform
Read from file: path$
To Formant (burg): 0, 5, 5500, 0.025, 50
a = Get value at time: 1, t, "hertz", "linear"
b = Get value at time: 2, t, "hertz", "linear"
c = Get value at time: 1, other, "hertz", "linear"
writeInfoLine: a, " ", b, " ", c
"""


def glottal_pulses(f0: float, rate: int, n: int) -> np.ndarray:
    """Sample indices of a pulse train at ``f0`` Hz within ``n`` samples (float rounding in
    ``arange`` can put a last pulse at index ``n``; about 1 f0 in 200 did)."""
    idx = (np.arange(0, n / rate, 1 / f0) * rate).astype(int)
    return idx[idx < n]


def vowels(work: Path, rng: np.random.Generator, path: str, first: str, second: str,
           at: float, rate: int = 11025) -> dict[str, Any]:
    """Two synthetic vowels, 0.5 s each (a glottal pulse train at 110-130 Hz through three
    formant resonators), ``first`` then ``second``.

    Gold: Praat's F1 and F2 (Formant (burg) with the standard settings) at time ``at`` and F1
    at the same place in the other vowel, plus the F1 the vowel was synthesised with.
    """
    from scipy.signal import lfilter

    f0 = float(rng.uniform(110, 130))
    pieces = []
    for vowel in (first, second):
        n = int(0.5 * rate)
        src = np.zeros(n)
        src[glottal_pulses(f0, rate, n)] = 1.0
        src = lfilter([1.0], [1.0, -0.97], src)  # glottal roll-off
        for freq, bw in zip(_VOWELS[vowel], (80, 100, 150), strict=True):
            r = np.exp(-np.pi * bw / rate)
            theta = 2 * np.pi * freq / rate
            src = lfilter([1 - r], [1, -2 * r * np.cos(theta), r * r], src)
        pieces.append(src / np.abs(src).max())
    signal = np.concatenate(pieces)
    signal += rng.normal(0, 0.002, signal.shape)
    write_wav(work / path, 0.5 * signal / np.abs(signal).max(), rate)
    other = at + 0.5 if at < 0.5 else at - 0.5
    f1, f2, f1_other = (float(v) for v in praat_run(_FORMANT_GOLD, work / path, at, other)[:3])
    return {"f1": f1, "f2": f2, "f1_other": f1_other,
            "f1_synth": float(_VOWELS[first if at < 0.5 else second][0]), "f0": f0}


GENERATORS = {
    "speech": speech,
    "segment": segment,
    "tones": tones,
    "vowels": vowels,
}
