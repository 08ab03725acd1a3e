"""Input sounds for the Praat tasks, and the gold values derived from them.

Every generator takes ``(work_dir, rng, **args)``, writes its files into the task's working
directory and returns gold values computed from the data it wrote. Speech is synthesised with
``espeak-ng`` at a known pitch and speed; tones and vowels are made with numpy. Every seed draws
continuous values too (the speech's level and its leading and trailing silence, the tones'
pitches, the vowels' F0 and noise), so no two seeds share an input and a held-out ``test``
episode never repeats a ``train`` one. Gold values that depend on Praat's analyses (pitch,
formants, resampling) come from ``praat --run`` on the host over the same files (with a
throw-away HOME), never from the sandbox. Sound files and ``praat --run`` are
``sound_io.py``; the synthetic vowels are ``vowels.py``.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.praat.sound_io import (
    intensity_db,
    praat_run,
    praat_run_in,
    read_wav,
    write_wav,
)
from sciagent_gym.envs.praat.vowels import vowels

#: getters.py reads sounds with read_wav and intensity_db from here.
__all__ = ["GENERATORS", "intensity_db", "read_wav", "write_wav"]

SENTENCES = (
    "she sells sea shells by the sea shore on sunny days",
    "the quick brown fox jumps over the lazy dog again",
    "we were away a year ago when all the leaves were yellow",
    "many mellow lemons were lying in the narrow valley",
)


def _espeak(path: Path, text: str, pitch: int, speed: int, voice: str = "en-us") -> None:
    subprocess.run(["espeak-ng", "-v", voice, "-p", str(pitch), "-s", str(speed),
                    "-w", str(path), text], check=True, capture_output=True, timeout=60)


#: espeak-ng 1.51's mean F0 (Hz, Praat 75-300 Hz) over a sentence at pitch 0, 25, 50, 75
#: (and 99): its male en-us voice and its female variant en-us+f2 (measured 2026-12-07).
_ESPEAK_F0 = {"en-us": ((77.0, 84.0, 101.0, 130.0, 170.0), (0, 25, 50, 75, 99)),
              "en-us+f2": ((128.0, 156.0, 195.0, 250.0), (0, 25, 50, 75))}


def _voice_for(f0: float) -> tuple[str, int]:
    """An espeak-ng voice and pitch setting whose speech has a mean F0 near ``f0`` Hz (the
    male voice up to 135 Hz, the female one above)."""
    voice = "en-us" if f0 < 135.0 else "en-us+f2"
    hz, setting = _ESPEAK_F0[voice]
    return voice, int(round(float(np.interp(f0, hz, setting))))


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
head = Get mean: t1, t1 + 0.5, "Hertz"
writeInfoLine: a, " ", b, " ", c, " ", d, " ", head
"""
#: Speech drawn again at most this many times to keep a segment's mean F0 ``apart_hz`` away
#: from the whole file's and its first half-second's.
_REDRAWS = 12


def _level_gain(samples: np.ndarray, rng: np.random.Generator, avoid_db: float | None) -> float:
    """A random gain for the synthesised speech: its peak lands at 0.25-0.9, or, with
    ``avoid_db``, its intensity 3-8 dB above or below that level (never on it, so an unscaled
    copy cannot pass as a sound scaled to ``avoid_db``) while the peak stays below 0.99."""
    peak = float(np.abs(samples).max())
    if avoid_db is None:
        return float(rng.uniform(0.25, 0.9)) / peak
    offset = float(rng.uniform(3.0, 8.0)) * (1 if rng.random() < 0.5 else -1)
    gain = 10 ** ((avoid_db + offset - intensity_db(samples)) / 20)
    if gain * peak > 0.99:  # louder would clip: go the other way
        gain = 10 ** ((avoid_db - abs(offset) - intensity_db(samples)) / 20)
    return gain


def speech(work: Path, rng: np.random.Generator, path: str, pitch: int = 50,
           speed: int = 150, sentence: int | None = None, t1: float = 0.0, t2: float = 0.0,
           floor: float = 75.0, ceiling: float = 600.0, avoid_db: float | None = None,
           f0: list[float] | None = None, apart_hz: float | None = None) -> dict[str, Any]:
    """A spoken English sentence (espeak-ng, voice en-us, 22050 Hz) at ``pitch`` 0-99 and
    ``speed`` words a minute; the sentence is drawn with ``rng`` unless given, and so are its
    level (see :func:`_level_gain`) and 0.05-0.35 s of silence before and after it.

    Gold: duration, sampling_frequency, intensity_db (as Praat computes it), and Praat's
    pitch means with ``floor``-``ceiling``: mean_f0 over ``t1``-``t2`` (whole file when both
    are 0), mean_f0_all over the whole file, the same segment in semitones re 100 Hz and its
    median.

    ``f0`` [lo, hi] (Hz) overrides ``pitch``: a speaker's mean F0 is drawn log-uniformly from
    that range and spoken by espeak-ng's male voice (below 135 Hz) or its female one at the
    pitch setting that gives about that F0; gold ``voice`` names the voice.

    ``apart_hz``: the speech is drawn again (sentence, speaker, silences, level) until the
    segment's mean F0 is at least that far from the whole file's and from the mean over its
    own first half-second, so that measuring the wrong stretch cannot pass a tolerance below
    it (a steady low voice kept all three within 1 Hz).
    """
    target = work / path
    for _ in range(_REDRAWS if apart_hz else 1):
        voice, setting = "en-us", pitch
        if f0 is not None:
            voice, setting = _voice_for(float(np.exp(rng.uniform(np.log(f0[0]),
                                                                 np.log(f0[1])))))
        text = SENTENCES[int(rng.integers(len(SENTENCES))) if sentence is None else sentence]
        _espeak(target, text, setting, speed, voice)
        spoken, rate, _ = read_wav(target)
        before, after = (np.zeros(int(rng.uniform(0.05, 0.35) * rate)) for _ in range(2))
        padded = np.concatenate([before, spoken, after])
        samples = write_wav(target, _level_gain(padded, rng, avoid_db) * padded, rate)
        duration = len(samples) / rate
        if t2 > duration:
            raise ValueError(f"segment end {t2} s is past the end of the speech "
                             f"({duration:.2f} s)")
        values = praat_run(_PITCH_GOLD, target, t1, t2, floor, ceiling)
        f0_seg, f0_all, f0_st, f0_median = (float(v) for v in values[:4])
        f0_head = float("nan") if values[4] == "--undefined--" else float(values[4])
        if not apart_hz or min(abs(f0_seg - f0_all), abs(f0_seg - f0_head)) >= apart_hz:
            break
    else:
        raise ValueError(f"no speech in {_REDRAWS} draws kept the segment's mean F0 "
                         f"{apart_hz} Hz from the whole file's and its first half-second's")
    pitch, f0 = setting, f0_seg
    return {"duration": duration, "sampling_frequency": rate, "text": text, "voice": voice,
            "pitch": pitch,
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
    freqs = freqs * rng.uniform(0.97, 1.03, len(freqs))  # no two seeds share a tone
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


_RESAMPLE_GOLD = """form gold
  sentence path
  real rate
  sentence out
endform
Read from file: path$
Resample: rate, 50
Save as WAV file: out$
"""


def resampled(work: Path, rng: np.random.Generator, source: str, rate: int) -> dict[str, Any]:
    """The WAV ``source`` resampled to ``rate`` Hz by Praat itself (Resample, precision 50,
    run headless on the host), as a reference array.

    Praat's own output is the reference because its sample grid has quirks a textbook
    resampler misses (a downsampled sound's first sample sits half a new sample in, an
    upsampling by exactly 2 keeps the old grid): scipy's resample_poly correlates only 0.956
    with it at 8000 Hz. Gold: the array, its duration and number of samples.
    """
    with tempfile.TemporaryDirectory(prefix="sciagent-praat-gold-") as home:
        out = Path(home) / "resampled.wav"
        praat_run_in(Path(home), _RESAMPLE_GOLD, work / source, rate, out)
        samples, got_rate, _ = read_wav(out)
    if got_rate != int(rate):
        raise RuntimeError(f"Praat resampled to {got_rate} Hz, not {rate} Hz")
    return {"duration": len(samples) / got_rate, "n_samples": len(samples),
            "array": samples[None, :].astype(np.float32)}


_PART_GOLD = """form gold
  sentence path
  real t1
  real t2
  real floor
  real ceiling
  real rate
  sentence out
endform
Read from file: path$
part = Extract part: t1, t2, "rectangular", 1, "no"
dur = Get total duration
db = Get intensity (dB)
To Pitch: 0, floor, ceiling
f0 = Get mean: 0, 0, "Hertz"
selectObject: part
Resample: rate, 50
Save as WAV file: out$
writeInfoLine: dur, " ", db, " ", f0
"""


def speech_part(work: Path, rng: np.random.Generator, source: str, t1: float, t2: float,
                rate: int, floor: float = 75.0, ceiling: float = 300.0) -> dict[str, Any]:
    """The part ``t1``-``t2`` (s) of the WAV ``source`` as Praat's Extract part cuts it (times
    not preserved: the part starts at 0), analysed by Praat itself on the host: for a
    long-horizon workflow (open, extract, measure, annotate, resample).

    Gold: the part's duration and intensity, the mean F0 over the whole part (To Pitch with
    ``floor``-``ceiling``), the part resampled to ``rate`` Hz (Resample, precision 50) as a
    reference array with its number of samples, and the part's samples as a reference array.
    """
    with tempfile.TemporaryDirectory(prefix="sciagent-praat-gold-") as home:
        out = Path(home) / "part.wav"
        dur, db, f0 = (float(v) for v in praat_run_in(
            Path(home), _PART_GOLD, work / source, t1, t2, floor, ceiling, rate, out)[:3])
        resampled_samples, got_rate, _ = read_wav(out)
    if got_rate != int(rate):
        raise RuntimeError(f"Praat resampled to {got_rate} Hz, not {rate} Hz")
    samples, src_rate, _ = read_wav(work / source)
    part = samples[int(round(t1 * src_rate)):int(round(t2 * src_rate))]
    return {"duration": dur, "intensity_db": db, "mean_f0": f0,
            "mean_f0_octave_up": 2 * f0, "rate": int(rate),
            "resampled_n": len(resampled_samples),
            "resampled": resampled_samples[None, :].astype(np.float32),
            "array": part[None, :].astype(np.float32)}


_INTENSITY_GOLD = """form gold
  sentence path
  real floor
endform
Read from file: path$
overall = Get intensity (dB)
To Intensity: floor, 0, "yes"
step = Get time step
top = Get maximum: 0, 0, "parabolic"
plain = Get maximum: 0, 0, "none"
mean = Get mean: 0, 0, "energy"
writeInfoLine: fixed$ (step, 6), " ", fixed$ (top, 6), " ", fixed$ (plain, 6), " ",
... fixed$ (mean, 6), " ", fixed$ (overall, 6)
"""


def intensity_contour(work: Path, rng: np.random.Generator, source: str, floor: float
                      ) -> dict[str, Any]:
    """The intensity contour of the WAV ``source`` as Praat's Sound: To Intensity makes it
    (minimum pitch ``floor`` Hz, automatic time step, mean subtracted), analysed by Praat
    itself on the host.

    Gold: time_step (as the state dump prints it, six decimals: the automatic step is
    0.8 / floor, so it tells the floor used), max_db (Get maximum, parabolic), max_db_plain
    (no interpolation), mean_db (energy mean) and overall_db (the Sound's Get intensity).
    """
    del rng  # analysis only: nothing drawn
    step, top, plain, mean, overall = (float(v) for v in praat_run(
        _INTENSITY_GOLD, work / source, floor)[:5])
    return {"time_step": step, "max_db": top, "max_db_plain": plain, "mean_db": mean,
            "overall_db": overall, "floor": float(floor)}


GENERATORS = {
    "intensity_contour": intensity_contour,
    "resampled": resampled,
    "speech": speech,
    "speech_part": speech_part,
    "segment": segment,
    "tones": tones,
    "vowels": vowels,
}
