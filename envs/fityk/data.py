"""Input data for the Fityk tasks, and the gold values that made it.

Every generator takes ``(work_dir, rng, **args)``, writes two-column text files (x, y) into the
task's working directory, as diffractometers and spectrometers export them, and returns the
parameters that generated them, so the gold is what the data really holds, not what one fit of
it found:

- :func:`xrd_pattern`: a powder pattern of a seeded crystal (rock salt, fluorite, perovskite,
  ...) from :mod:`sciagent_gym.datagen.crystals` (pymatgen's kinematic XRD calculator, Cu Kalpha
  at 1.54184 A, the Kalpha1/Kalpha2 weighted mean, without a separate Kalpha2 component), with
  pseudo-Voigt profiles of one seeded FWHM, a quadratic background and Poisson counting noise.
- :func:`spectrum`: a measured-looking spectrum with known bands (Raman D/D'/G bands of a
  disordered carbon, an XPS C 1s envelope, a photoluminescence doublet) on a sloped linear
  baseline, with counting noise.

Where a task defines its answer by a procedure whose result the generating parameters do not
give exactly (an XPS share after Fityk's Shirley subtraction, the area ratio of two reflections
each fitted over ±1°), the generator also runs that procedure on the noisy data it wrote
(:func:`shirley_bg`, the same iteration as Fityk's; :func:`fit_gaussians`,
:func:`fit_reflection`, weighted least squares as Fityk fits) and the gold is its result.

Peak conventions are Fityk's: a band's ``fwhm`` is the full width at half maximum (Fityk's
Gaussian, Lorentzian and PseudoVoigt parameter ``hwhm`` is half of it), ``area`` is the
integral above the baseline.

The generators are ``xrd.py`` and ``spectra.py``, the profiles and fits ``profiles.py``;
this module is the registry the adapter and the task specs name them from.
"""

from __future__ import annotations

from sciagent_gym.envs.fityk.spectra import spectrum
from sciagent_gym.envs.fityk.xrd import CU_KA, bragg_d, xrd_pattern, xrd_with_standard

#: Imported by other tools' generators (matsci): the wavelength and Bragg's law.
__all__ = ["CU_KA", "GENERATORS", "bragg_d", "spectrum", "xrd_pattern", "xrd_with_standard"]


GENERATORS = {"xrd_pattern": xrd_pattern, "xrd_with_standard": xrd_with_standard,
              "spectrum": spectrum}
