"""Input sounds for the Praat tasks, and the gold values derived from them.

Every generator takes ``(work_dir, rng, **args)``, writes its files into the task's working
directory and returns gold values computed from the data it wrote. Speech is synthesised with
``espeak-ng`` at a known pitch and speed; tones and vowels are made with numpy. Every seed draws
continuous values too (the speech's level and its leading and trailing silence, the tones'
pitches, the vowels' F0 and noise), so no two seeds share an input and a held-out ``test``
episode never repeats a ``train`` one. Gold values that depend on Praat's analyses (pitch,
formants, resampling) come from ``praat --run`` on the host over the same files (with a
throw-away HOME), never from the sandbox.
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
    """Praat's Sound: Get intensity (dB): 10 log10 of the mean square over (2e-5 Pa)^2
    (-inf for silence, where Praat says "undefined")."""
    with np.errstate(divide="ignore"):
        return float(10 * np.log10(np.mean(np.square(samples)) / P_REF**2))


def praat_run(script: str, *args: Any) -> list[str]:
    """Run a Praat script headless on the host; returns its Info lines."""
    with tempfile.TemporaryDirectory(prefix="sciagent-praat-gold-") as home:
        return _praat_run_in(Path(home), script, *args)


def _praat_run_in(home: Path, script: str, *args: Any) -> list[str]:
    """``praat --run`` with ``home`` as HOME (where a script may also leave files)."""
    path = home / "gold.praat"
    path.write_text(script)
    res = subprocess.run(["praat", "--run", str(path), *map(str, args)],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "HOME": str(home)})
    if res.returncode != 0:
        raise RuntimeError(f"praat --run failed: {res.stderr.strip() or res.stdout.strip()}")
    return res.stdout.split()


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


#: F1 of the synthetic vowels (Hz), drawn uniformly: from a man's /i/ (about 250 Hz) to a
#: child's /a/ (about 1100 Hz). With the tasks' 15 Hz tolerance one constant answer passed 4
#: of 30 unseen episodes with 250-850 Hz and still 4 with this range (prior audit,
#: 2026-12-07: chance, about 1 draw in 4 at this width); above ~1150 Hz Praat's Burg F1
#: often lands 100-400 Hz below the synthesised one (F1 and F2 merge), so wider is no fix.
F1_RANGE = (240.0, 1150.0)


def _draw_formants(rng: np.random.Generator, first: str, second: str, glide: float = 0.0
                   ) -> dict[str, tuple[float, float, float, float]]:
    """F1 (at the vowel's start), F2, F3 and F1 at the vowel's end for the two vowels (see
    :func:`vowels`). Without ``glide`` the end equals the start and the draws are exactly the
    ones made before glides existed."""
    f1_first = float(rng.uniform(*F1_RANGE))
    f1_second = f1_first
    while abs(f1_second - f1_first) < 150:
        f1_second = float(rng.uniform(*F1_RANGE))
    out = {}
    for vowel, f1 in ((first, f1_first), (second, f1_second)):
        f2, f3 = np.array(_VOWELS[vowel][1:]) * rng.uniform(0.95, 1.05, 2)
        out[vowel] = (f1, max(float(f2), f1 + 350), float(f3), f1)
    if glide:
        # Ends drawn again until the two vowels' F1 stay at least 150 Hz apart at every
        # matching time (the ends on the same side as the starts): the other vowel's F1 at the
        # same place in it is never near the answer.
        for _ in range(100):
            ends = [float(np.clip(out[v][0] + rng.uniform(-glide, glide), *F1_RANGE))
                    for v in (first, second)]
            if (ends[0] - ends[1]) * (f1_first - f1_second) > 0 and abs(ends[0] - ends[1]) >= 150:
                break
        else:
            ends = [f1_first, f1_second]
        for vowel, end in zip((first, second), ends, strict=True):
            f1, f2, f3, _ = out[vowel]
            out[vowel] = (f1, max(f2, max(f1, end) + 350), f3, end)
    return out


def _resonate(src: np.ndarray, f_start: float, f_end: float, bw: float, rate: int
              ) -> np.ndarray:
    """A two-pole resonator whose centre frequency moves linearly from ``f_start`` to
    ``f_end`` over the signal (a constant one when they are equal)."""
    from scipy.signal import lfilter

    r = np.exp(-np.pi * bw / rate)
    if f_start == f_end:
        theta = 2 * np.pi * f_start / rate
        return lfilter([1 - r], [1, -2 * r * np.cos(theta), r * r], src)
    c = 2 * r * np.cos(2 * np.pi * np.linspace(f_start, f_end, len(src)) / rate)
    out = np.zeros(len(src))
    y1 = y2 = 0.0
    for i, x in enumerate(src):
        y = (1 - r) * x + c[i] * y1 - r * r * y2
        out[i] = y
        y1, y2 = y, y1
    return out


def _f1_at(formants: tuple[float, float, float, float], frac: float) -> float:
    """The synthesised F1 a fraction ``frac`` of the way through a vowel."""
    return float(formants[0] + (formants[3] - formants[0]) * frac)


def vowels(work: Path, rng: np.random.Generator, path: str, first: str, second: str,
           at: float, rate: int = 11025, glide: float = 0.0) -> dict[str, Any]:
    """Two synthetic vowels, 0.5 s each (a glottal pulse train at 110-130 Hz through three
    formant resonators), ``first`` then ``second``.

    Each vowel's F1 is drawn from 240-1150 Hz (the two at least 150 Hz apart), its F2 and F3
    around the vowel's textbook values (within 5 %, F2 at least 350 Hz above F1), so that no
    constant answer is often right (with textbook formants one was right in 2 of 5 episodes).
    With ``glide`` (Hz) each vowel's F1 moves linearly over its 0.5 s from the drawn value by a
    further uniform -glide..+glide (clipped to the range), so F1 depends on the time asked for
    within a vowel as well as on the vowel.

    Gold: Praat's F1 and F2 (Formant (burg) with the standard settings) at time ``at`` and F1
    at the same place in the other vowel, plus the F1 the vowel was synthesised with.
    """
    from scipy.signal import lfilter

    f0 = float(rng.uniform(110, 130))
    formants = _draw_formants(rng, first, second, glide)
    pieces = []
    for vowel in (first, second):
        n = int(0.5 * rate)
        src = np.zeros(n)
        src[glottal_pulses(f0, rate, n)] = 1.0
        src = lfilter([1.0], [1.0, -0.97], src)  # glottal roll-off
        f1, f2, f3, f1_end = formants[vowel]
        for start, end, bw in ((f1, f1_end, 80), (f2, f2, 100), (f3, f3, 150)):
            src = _resonate(src, start, end, bw, rate)
        pieces.append(src / np.abs(src).max())
    signal = np.concatenate(pieces)
    signal += rng.normal(0, 0.002, signal.shape)
    write_wav(work / path, 0.5 * signal / np.abs(signal).max(), rate)
    other = at + 0.5 if at < 0.5 else at - 0.5
    f1, f2, f1_other = (float(v) for v in praat_run(_FORMANT_GOLD, work / path, at, other)[:3])
    return {"f1": f1, "f2": f2, "f1_other": f1_other,
            "f1_synth": _f1_at(formants[first if at < 0.5 else second], at % 0.5 / 0.5),
            "f0": f0,
            "duration": len(signal) / rate}


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
        _praat_run_in(Path(home), _RESAMPLE_GOLD, work / source, rate, out)
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
        dur, db, f0 = (float(v) for v in _praat_run_in(
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
