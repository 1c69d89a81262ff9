"""Where a mining run may read from: local corpus files and model folders must resolve,
after symlinks and ``..``, inside configured root folders (docs/mining.md,
"Corpora").

- A corpus reads a local file unless it is ``builtin:…`` or ``hf:NAME:CONFIG:SPLIT``
  with a Hub dataset as NAME: a namespaced id (``OWNER/NAME``) or one of the few bare
  names of ``KNOWN_HUB_DATASETS``. ``hf:`` with a local NAME (a path, or a name that
  exists on disk) reads the files of that folder and is confined like any other path;
  so are ``wikitext:PATH``, ``*.tokens``, ``*.jsonl`` and plain text files. Any other
  NAME is refused (``DatasetRefused``): the datasets library's file loaders (``text``,
  ``json``, ...), given no data files (the ``hf:`` form has no place for them), read
  whatever matches the split under the working folder, and an unknown bare name may be
  a folder there on some machine. The reader checks again where ``datasets`` has
  resolved a local folder's data files (a dataset card may point elsewhere).
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

from .errors import DatasetRefused, MiningError

Roots = Sequence[str | os.PathLike[str]]
CORPUS_ROOTS_SETTING = "FFKV_CORPUS_ROOTS"
MODEL_ROOTS_SETTING = "FFKV_MODEL_ROOTS"
_SEPARATORS = re.compile(r"[:,]")
_ALWAYS_ALLOWED = {
    "corpus": "builtin: and hf: Hub datasets (OWNER/NAME) are always allowed",
    "model": "builtin: models and Hugging Face ids are always allowed",
}


def parse_roots(value: str) -> list[str]:
    """``"/a:/b,/c"`` → ``["/a", "/b", "/c"]``: colon- or comma-separated folders."""
    return [part.strip() for part in _SEPARATORS.split(value) if part.strip()]


# Bare (un-namespaced) names of datasets on the Hugging Face Hub with a "text" field that
# ``datasets`` still resolves there (the Hub redirects them to their owners' ids, such
# as Salesforce/wikitext). Every other Hub dataset is named OWNER/NAME.
KNOWN_HUB_DATASETS = frozenset(
    [
        "ag_news",
        "bookcorpus",
        "c4",
        "cc_news",
        "imdb",
        "lambada",
        "openwebtext",
        "wikipedia",
        "wikitext",
    ]
)
# The datasets library's packaged builders (datasets.packaged_modules, plus the ones only
# its Python API builds): as an hf: NAME each reads local files, and with no data files
# given it globs them under the worker's working folder.
DATASETS_FILE_LOADERS = frozenset(
    [
        "arrow",
        "audiofolder",
        "cache",
        "conll",
        "csv",
        "eval",
        "fasta",
        "fastq",
        "folder_based_builder",
        "genbank",
        "generator",
        "harbor",
        "hdf5",
        "iceberg",
        "imagefolder",
        "json",
        "lance",
        "meshfolder",
        "mmcif",
        "niftifolder",
        "pandas",
        "parquet",
        "pdb",
        "pdffolder",
        "spark",
        "sql",
        "text",
        "tsfile",
        "videofolder",
        "vortex",
        "webdataset",
        "xml",
    ]
)
# One part of a Hub repository id, as huggingface_hub validates it: letters, digits and
# ``-_.``, neither first nor last a symbol, at most 96 characters, no "--" nor "..".
_HUB_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
_HUB_DATASET_ID = re.compile(rf"{_HUB_PART}/{_HUB_PART}")
HF_FILE_LOADER = (
    "corpus {spec!r}: {name!r} is a file loader of the datasets library, not a Hub "
    "dataset; the hf: form gives it no data files, so it would read whatever matches under "
    "the worker's working folder. Put the files in a folder inside the corpus roots "
    "({setting}: {roots}) and give that folder as NAME: hf:/path/to/folder::SPLIT."
)
HF_NOT_A_HUB_DATASET = (
    "corpus {spec!r}: {name!r} is not a Hugging Face Hub dataset id (OWNER/NAME) nor one of "
    "the known bare Hub names ({known}). A local dataset folder is written as a path (from "
    "/ or ./) inside the corpus roots ({setting}: {roots})."
)
HF_DATA_FILE_OUTSIDE = ": its data file {path!r}"


def is_hub_dataset_id(name: str) -> bool:
    """``OWNER/NAME``, as the Hub spells repository ids."""
    return _HUB_DATASET_ID.fullmatch(name) is not None and ".." not in name and "--" not in name


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


def _listed(roots: Roots) -> str:
    return ", ".join(os.fspath(root) for root in roots) or "none"


def hf_dataset_local_path(spec: str, roots: Roots = ()) -> str | None:
    """The local folder an ``hf:`` spec reads, or None for a Hub dataset; a
    DatasetRefused for any other NAME (``roots`` only name where files may go)."""
    name = hf_dataset_parts(spec)[0]
    where = {"spec": spec, "name": name, "setting": CORPUS_ROOTS_SETTING, "roots": _listed(roots)}
    # datasets takes a loader's name before a folder of that name: check it first.
    if name.lower() in DATASETS_FILE_LOADERS:
        raise DatasetRefused(HF_FILE_LOADER.format(**where))
    if _is_local(name):
        return name
    if is_hub_dataset_id(name) or name in KNOWN_HUB_DATASETS:
        return None
    raise DatasetRefused(
        HF_NOT_A_HUB_DATASET.format(**where, known=", ".join(sorted(KNOWN_HUB_DATASETS)))
    )


def corpus_local_path(spec: str, roots: Roots = ()) -> str | None:
    """The local path a corpus spec reads, or None (``builtin:``, a Hub dataset); an
    ``hf:`` NAME that is neither is refused (``hf_dataset_local_path``)."""
    if spec.startswith("builtin:"):
        return None
    if spec.startswith("hf:"):
        return hf_dataset_local_path(spec, roots)
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
    return MiningError(
        f"{what} {name!r}{detail} is outside the {what} roots ({setting}: {_listed(roots)}), after "
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


def confine_data_files(spec: str, files: Sequence[str], roots: Roots) -> None:
    """Every data file that ``datasets`` resolved for a local ``hf:`` folder must be a
    local file inside ``roots``: a dataset card (README.md) can name files elsewhere."""
    real_roots = [_real(root) for root in roots]
    for path in files:
        local = "://" not in path and "::" not in path
        if not local or not any(_real(path).is_relative_to(root) for root in real_roots):
            detail = HF_DATA_FILE_OUTSIDE.format(path=path)
            raise _outside("corpus", spec, roots, CORPUS_ROOTS_SETTING, detail)


def check_corpus_source(spec: str, roots: Roots) -> Path | None:
    """The resolved local path of a corpus spec inside ``roots``, None where the spec
    reads no local file; a MiningError naming the roots otherwise."""
    local = corpus_local_path(spec, roots)
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
