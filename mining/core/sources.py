"""Where a mining run may read from: local corpus files and model folders must resolve,
after symlinks and ``..``, inside configured root folders (DESIGN §9).

- A corpus reads a local file unless it is ``builtin:…`` or ``hf:NAME:CONFIG:SPLIT``
  with a Hub dataset as NAME. ``hf:`` with a local NAME (a path) reads local files and
  is confined like any other path; so are ``wikitext:PATH``, ``*.tokens``, ``*.jsonl``
  and plain text files.
- A model reads a local folder unless it is ``builtin:…`` or a Hugging Face id. A name
  that looks like a path, or that exists on disk, is a local folder.

A local folder is checked whole: every file and folder under it must resolve inside
the roots too, so a symlink inside a model folder cannot lead the loader elsewhere.

Pure (no torch, no Django): the caller passes the roots. The Django side passes its
settings, ``FFKV_CORPUS_ROOTS`` and ``FFKV_MODEL_ROOTS``, when a run is submitted and
again on the worker where the file is opened. Callers of ``mining.core`` that pass no
roots (the benches, library use) are not confined.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from .errors import MiningError

Roots = Sequence[str | os.PathLike[str]]
CORPUS_ROOTS_SETTING = "FFKV_CORPUS_ROOTS"
MODEL_ROOTS_SETTING = "FFKV_MODEL_ROOTS"
_SEPARATORS = re.compile(r"[:,]")
_ALWAYS_ALLOWED = {
    "corpus": "builtin: and hf: corpora are always allowed",
    "model": "builtin: models and Hugging Face ids are always allowed",
}


def parse_roots(value: str) -> list[str]:
    """``"/a:/b,/c"`` → ``["/a", "/b", "/c"]``: colon- or comma-separated folders."""
    return [part.strip() for part in _SEPARATORS.split(value) if part.strip()]


def looks_like_path(name: str) -> bool:
    """A name written as a path: absolute, relative (``./``, ``../``), ``~`` or with a
    separator that is not the one of a Hub id (``org/name``)."""
    return name.startswith((".", "/", "~")) or (os.sep in name and not looks_like_hub_id(name))


def looks_like_hub_id(name: str) -> bool:
    parts = name.split("/")
    return len(parts) == 2 and all(parts) and not name.startswith((".", "/", "~"))


def _is_local(name: str) -> bool:
    # What exists on disk is read from disk (transformers and datasets look there first),
    # whatever it looks like.
    return looks_like_path(name) or os.path.lexists(os.path.expanduser(name))


def hf_dataset_parts(spec: str) -> tuple[str, str, str]:
    """``hf:NAME:CONFIG:SPLIT`` → (NAME, CONFIG, SPLIT), split from the right, so that
    NAME may be a path."""
    parts = spec[len("hf:") :].rsplit(":", 2)
    if len(parts) != 3 or not parts[0] or not parts[2]:
        raise MiningError(f"bad dataset spec {spec!r}: expected hf:NAME:CONFIG:SPLIT")
    return parts[0], parts[1], parts[2]


def corpus_local_path(spec: str) -> str | None:
    """The local path a corpus spec reads, or None (``builtin:``, a Hub dataset)."""
    if spec.startswith("builtin:"):
        return None
    if spec.startswith("hf:"):
        name = hf_dataset_parts(spec)[0]
        return name if _is_local(name) else None
    if spec.startswith("wikitext:"):
        return spec[len("wikitext:") :]
    return spec


def model_local_path(name: str) -> str | None:
    """The local folder a model name reads, or None (``builtin:``, a Hugging Face id)."""
    if name.startswith("builtin:"):
        return None
    return name if _is_local(name) else None


def _real(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(os.path.expanduser(os.fspath(path))))


def _outside(what: str, name: str, roots: Roots, setting: str, detail: str = "") -> MiningError:
    listed = ", ".join(os.fspath(root) for root in roots) or "none"
    return MiningError(
        f"{what} {name!r}{detail} is outside the {what} roots ({setting}: {listed}), after "
        f"following symlinks and '..'. Put it under one of them or set {setting}; "
        f"{_ALWAYS_ALLOWED[what]}."
    )


def confine(path: str, roots: Roots, *, what: str, setting: str) -> Path:
    """``path`` resolved (symlinks, ``..``, ``~``), after checking that it lies inside
    one of ``roots``, and, for a folder, that everything under it does too. A missing
    path is only checked by where it would be; its reader reports it missing."""
    real_roots = [_real(root) for root in roots]

    def inside(candidate: Path) -> bool:
        return any(candidate.is_relative_to(root) for root in real_roots)

    try:
        real = _real(path)
    except ValueError as exc:  # a NUL byte, a lone surrogate: no file has that name
        raise MiningError(f"{what} {path!r} is not a valid path ({exc})") from None
    if not inside(real):
        raise _outside(what, path, roots, setting)
    if real.is_dir():
        seen = {real}
        for folder, dirnames, filenames in os.walk(real, followlinks=True):
            kept = []
            folders = set(dirnames)
            for entry in sorted(dirnames) + sorted(filenames):
                target = _real(Path(folder) / entry)
                if not inside(target):
                    relative = os.path.relpath(Path(folder) / entry, real)
                    raise _outside(what, path, roots, setting, f": its entry {relative!r}")
                if entry in folders and target not in seen:
                    seen.add(target)
                    kept.append(entry)
            dirnames[:] = kept  # each real folder once: symlink loops end here
    return real


def check_corpus_source(spec: str, roots: Roots) -> Path | None:
    """The resolved local path of a corpus spec inside ``roots``, None where the spec
    reads no local file; a MiningError naming the roots otherwise."""
    local = corpus_local_path(spec)
    if local is None:
        return None
    return confine(local, roots, what="corpus", setting=CORPUS_ROOTS_SETTING)


def check_model_source(name: str, roots: Roots) -> Path | None:
    """The resolved local folder of a model name inside ``roots``, None for a builtin
    model or a Hugging Face id; a MiningError naming the roots otherwise."""
    local = model_local_path(name)
    if local is None:
        return None
    return confine(local, roots, what="model", setting=MODEL_ROOTS_SETTING)
