"""Tokenized corpus store: the miner reads token ids from here, and text is rebuilt
from here for the winners only (text is never held in the miner's state).

A store is a directory of flat, memory-mapped files:

- ``tokens.i32``       int32 token ids of all sentences, concatenated
- ``special.u8``       1 where a token may not be a trigger (template special tokens
                       such as [CLS]/[SEP]/<s>, or special ids found in the text other
                       than the unknown token), else 0
- ``char_end.i32``     end character offset of each token in its sentence's text
                       (the tokenizer's offset mapping: where the prefix text is cut)
- ``span.i32``         [n_tokens, 2] the token's character span (start, end) in its
                       sentence's text, as written (case and accents kept), without the
                       whitespace around it that byte-level BPE and SentencePiece tokens
                       carry; a whitespace-only span is kept as is; (0, 0) for template
                       special tokens. Absent in v2 stores (no spans: ``trigger_spans``
                       gives -1)
- ``offsets.i64``      n_sentences + 1 token offsets
- ``truncated.u8``     1 per sentence cut at ``max_tokens``: the token after its last
                       kept token is unknown (not the end of the sentence)
- ``text.bin``         UTF-8 sentence texts, concatenated
- ``text_offsets.i64`` n_sentences + 1 byte offsets into ``text.bin``
- ``meta.json``        n_sentences, n_tokens, n_truncated, n_empty, tokenizer, max_tokens

Each sentence is tokenized alone with the tokenizer's default special tokens and cut
at ``max_tokens`` (the tokenizer's own truncation, which keeps the closing special
tokens). Sentences with no real token (only specials) are dropped and counted.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .errors import MiningError, MiningStopped

META = "meta.json"
END_OF_SENTENCE_ID = -1  # the next token after a sentence's last real token
NEXT_UNKNOWN_ID = -2  # the next token after the last kept token of a cut sentence
FORMAT = "ffkv.corpus-store/v3"  # v2: truncated.u8; v3: span.i32
# A store of these formats still opens (a run prepared before an upgrade): without spans.
READABLE_FORMATS = ("ffkv.corpus-store/v2", FORMAT)
NO_SPAN = -1


@functools.cache
def _whitespace_codepoints() -> np.ndarray:
    """Every code point that ``str.isspace`` holds for (all are below U+3001)."""
    return np.array([c for c in range(0x3001) if chr(c).isspace()], dtype=np.uint32)


def trimmed_spans(text: str, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """[n, 2] the spans ``(starts, ends)`` (character offsets into ``text``) without the
    whitespace at their edges, vectorized; an empty or whitespace-only span is kept.

    Byte-level BPE ("Ġword") and SentencePiece ("▁word") offsets include the space before
    the word; the highlight in the workspace marks the word as written."""
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    chars = np.frombuffer(text.encode("utf-32-le"), dtype="<u4")  # [n_chars]
    n = chars.size
    index = np.arange(n + 1, dtype=np.int64)
    solid = np.append(~np.isin(chars, _whitespace_codepoints()), True)  # [n_chars + 1]
    # first non-space at or after i; last non-space at or before i (-1: none)
    next_solid = np.minimum.accumulate(np.where(solid, index, n)[::-1])[::-1]
    prev_solid = np.maximum.accumulate(np.where(solid[:n], index[:n], -1))
    prev_solid = np.append(prev_solid, -1)  # [n_chars + 1]: index -1 (an empty span at 0)
    lo = next_solid[np.clip(starts, 0, n)]
    hi = prev_solid[np.clip(ends - 1, -1, n - 1)] + 1
    keep = (lo < hi) & (ends > starts)
    return np.stack([np.where(keep, lo, starts), np.where(keep, hi, ends)], axis=1)


def _special_ids(tokenizer: Any) -> np.ndarray:
    ids = set(tokenizer.all_special_ids)
    ids.discard(tokenizer.unk_token_id)  # an unknown word is still a word of the text
    return np.array(sorted(i for i in ids if i is not None), dtype=np.int64)


def build_store(
    sentences: Iterable[str],
    tokenizer: Any,
    path: str | os.PathLike[str],
    *,
    max_tokens: int = 128,
    tokenizer_name: str = "",
    chunk_size: int = 1024,
    should_stop: Callable[[], bool] | None = None,
) -> CorpusStore:
    """Tokenize ``sentences`` into a store at ``path`` with bounded memory.

    Writes into ``<path>.partial`` and renames at the end, so a failed build leaves
    nothing half-written at ``path``. ``should_stop()`` is asked before each chunk:
    True raises ``MiningStopped``, and the partial folder is removed.
    """
    if max_tokens < 2:
        raise MiningError("max_tokens must be at least 2")
    path = Path(path)
    tmp = path.with_name(path.name + ".partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    special_ids = _special_ids(tokenizer)
    n_sentences = n_tokens = n_truncated = n_empty = n_bytes = 0
    try:
        with (
            open(tmp / "tokens.i32", "wb") as f_tok,
            open(tmp / "special.u8", "wb") as f_spec,
            open(tmp / "char_end.i32", "wb") as f_char,
            open(tmp / "span.i32", "wb") as f_span,
            open(tmp / "offsets.i64", "wb") as f_off,
            open(tmp / "truncated.u8", "wb") as f_cut,
            open(tmp / "text.bin", "wb") as f_text,
            open(tmp / "text_offsets.i64", "wb") as f_toff,
        ):
            f_off.write(np.zeros(1, np.int64).tobytes())
            f_toff.write(np.zeros(1, np.int64).tobytes())
            iterator = iter(sentences)
            while chunk := list(itertools.islice(iterator, chunk_size)):
                if should_stop is not None and should_stop():
                    raise MiningStopped(f"stopped after {n_sentences} sentences of the store")
                enc = tokenizer(
                    chunk,
                    add_special_tokens=True,
                    truncation=True,
                    max_length=max_tokens,
                    return_overflowing_tokens=True,
                    return_special_tokens_mask=True,
                    return_offsets_mapping=True,
                    return_attention_mask=False,
                    return_token_type_ids=False,
                )
                owner = enc["overflow_to_sample_mapping"]
                first_row: dict[int, int] = {}
                cut: set[int] = set()
                for row, sample in enumerate(owner):
                    if sample in first_row:
                        cut.add(sample)  # an overflow row: the sentence was cut
                    else:
                        first_row[sample] = row
                n_truncated += len(cut)
                tok_parts, spec_parts, char_parts, lengths, texts, cuts = [], [], [], [], [], []
                span_parts, kept = [], []
                for sample, text in enumerate(chunk):
                    row = first_row[sample]
                    ids = np.asarray(enc["input_ids"][row], dtype=np.int32)
                    special = np.asarray(enc["special_tokens_mask"][row], dtype=np.uint8)
                    special |= np.isin(ids, special_ids).astype(np.uint8)
                    if ids.size == 0 or special.all():
                        n_empty += 1
                        continue
                    spans = np.asarray(enc["offset_mapping"][row], dtype=np.int64).reshape(-1, 2)
                    tok_parts.append(ids)
                    spec_parts.append(special)
                    char_parts.append(spans[:, 1].astype(np.int32))
                    span_parts.append(spans)
                    kept.append(text)
                    lengths.append(ids.size)
                    texts.append(text.encode("utf-8"))
                    cuts.append(sample in cut)
                if not lengths:
                    continue
                f_tok.write(np.concatenate(tok_parts).tobytes())
                f_spec.write(np.concatenate(spec_parts).tobytes())
                f_char.write(np.concatenate(char_parts).tobytes())
                # Trim the whole chunk at once: spans shifted onto the joined texts.
                joined = "".join(kept)
                base = np.repeat(np.cumsum([0] + [len(t) for t in kept[:-1]]), lengths)
                raw = np.concatenate(span_parts)  # [chunk tokens, 2]
                trimmed = trimmed_spans(joined, raw[:, 0] + base, raw[:, 1] + base)
                f_span.write((trimmed - base[:, None]).astype(np.int32).tobytes())
                f_off.write((n_tokens + np.cumsum(lengths, dtype=np.int64)).tobytes())
                f_cut.write(np.asarray(cuts, dtype=np.uint8).tobytes())
                blob = b"".join(texts)
                f_text.write(blob)
                text_ends = n_bytes + np.cumsum([len(t) for t in texts], dtype=np.int64)
                f_toff.write(text_ends.tobytes())
                n_sentences += len(lengths)
                n_tokens += int(sum(lengths))
                n_bytes += len(blob)
        if n_sentences == 0:
            raise MiningError("the corpus has no sentences (empty after reading and cleaning)")
        meta = {
            "format": FORMAT,
            "n_sentences": n_sentences,
            "n_tokens": n_tokens,
            "n_truncated": n_truncated,
            "n_empty": n_empty,
            "tokenizer": tokenizer_name or getattr(tokenizer, "name_or_path", ""),
            "max_tokens": max_tokens,
        }
        (tmp / META).write_text(json.dumps(meta, indent=2))
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return CorpusStore.open(path)


class CorpusStore:
    """Read-only view of a store directory; arrays are memory-mapped."""

    def __init__(self, path: Path, meta: dict[str, Any]) -> None:
        self.path = path
        self.meta = meta
        n = int(meta["n_sentences"])

        def mm(name: str, dtype: type, count: int) -> np.ndarray:
            return np.memmap(path / name, dtype=dtype, mode="r", shape=(count,))

        self.offsets = np.asarray(mm("offsets.i64", np.int64, n + 1))
        n_tok = int(self.offsets[-1])
        self._tokens = mm("tokens.i32", np.int32, n_tok)
        self._special = mm("special.u8", np.uint8, n_tok)
        self._char_end = mm("char_end.i32", np.int32, n_tok)
        # [n_tokens, 2] or None (a v2 store)
        self._span = (
            np.memmap(path / "span.i32", dtype=np.int32, mode="r", shape=(n_tok, 2))
            if meta.get("format") == FORMAT and n_tok
            else None
        )
        self._text_offsets = mm("text_offsets.i64", np.int64, n + 1)
        # [n_sentences] True where the sentence was cut at max_tokens
        self.truncated_flags = np.asarray(mm("truncated.u8", np.uint8, n)).astype(bool)
        self._text = (
            np.memmap(path / "text.bin", dtype=np.uint8, mode="r")
            if int(self._text_offsets[-1])
            else np.zeros(0, np.uint8)
        )
        self.lengths = np.diff(self.offsets)  # [n_sentences] tokens per sentence

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> CorpusStore:
        path = Path(path)
        meta_path = path / META
        if not meta_path.is_file():
            raise MiningError(f"{str(path)!r} is not a corpus store (no {META})")
        meta = json.loads(meta_path.read_text())
        if meta.get("format") not in READABLE_FORMATS:
            raise MiningError(f"{str(path)!r}: unknown corpus store format {meta.get('format')!r}")
        return cls(path, meta)

    def __len__(self) -> int:
        return int(self.meta["n_sentences"])

    @property
    def n_tokens(self) -> int:
        return int(self.meta["n_tokens"])

    def tokens_in(self, start: int, end: int) -> int:
        """Number of tokens of sentences [start, end): the total for progress bars."""
        return int(self.offsets[end] - self.offsets[start])

    def tokens(self, i: int) -> np.ndarray:
        return np.asarray(self._tokens[self.offsets[i] : self.offsets[i + 1]])

    def special(self, i: int) -> np.ndarray:
        """Bool per token of sentence ``i``: True where it can never be a trigger."""
        return np.asarray(self._special[self.offsets[i] : self.offsets[i + 1]]).astype(bool)

    def flat_special(self) -> np.ndarray:
        """Bool per token of the whole store, sentence after sentence (``offsets``)."""
        return np.asarray(self._special).astype(bool)

    def truncated(self, i: int) -> bool:
        """True where sentence ``i`` was cut at max_tokens: its last kept token's next
        token is unknown."""
        return bool(self.truncated_flags[i])

    def token_ids_at(self, sentences: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Token id at each (sentence, position), vectorized."""
        flat = self.offsets[np.asarray(sentences, dtype=np.int64)] + np.asarray(positions)
        return np.asarray(self._tokens[flat], dtype=np.int64)

    def next_token_ids(self, sentences: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Token after each (sentence, position), vectorized: its id, END_OF_SENTENCE_ID
        (-1) after a sentence's last real token, NEXT_UNKNOWN_ID (-2) after the last
        kept token of a cut sentence."""
        sentences = np.asarray(sentences, dtype=np.int64)
        nxt = self.offsets[sentences] + np.asarray(positions, dtype=np.int64) + 1
        inside = nxt < self.offsets[sentences + 1]
        safe = np.where(inside, nxt, 0)
        real = inside & (self._special[safe] == 0)
        end = np.where(self.truncated_flags[sentences], NEXT_UNKNOWN_ID, END_OF_SENTENCE_ID)
        return np.where(real, self._tokens[safe].astype(np.int64), end)

    def char_ends(self, i: int) -> np.ndarray:
        return np.asarray(self._char_end[self.offsets[i] : self.offsets[i + 1]])

    def trigger_spans(self, sentences: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """[n, 2] the character span (start, end) of the token at each (sentence,
        position) in its sentence's text, vectorized; NO_SPAN (-1, -1) where the store
        has none (a v2 store) or the tokenizer gave the token an empty span."""
        sentences = np.asarray(sentences, dtype=np.int64)
        if self._span is None:
            return np.full((sentences.size, 2), NO_SPAN, dtype=np.int64)
        flat = self.offsets[sentences] + np.asarray(positions, dtype=np.int64)
        spans = np.asarray(self._span[flat], dtype=np.int64).reshape(-1, 2)
        return np.where((spans[:, 1] > spans[:, 0])[:, None], spans, NO_SPAN)

    def sentence(self, i: int) -> str:
        a, b = int(self._text_offsets[i]), int(self._text_offsets[i + 1])
        return bytes(self._text[a:b]).decode("utf-8")

    def batch(self, indices: np.ndarray, pad_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Right-padded arrays for the sentences ``indices``.

        Returns ids [batch, pos] int64, attention [batch, pos] bool (token present)
        and real [batch, pos] bool (present and may be a trigger).
        """
        starts = self.offsets[indices]
        lengths = self.lengths[indices]
        width = int(lengths.max())
        pos = np.arange(width)[None, :]
        present = pos < lengths[:, None]  # [batch, pos]
        flat = np.where(present, starts[:, None] + pos, 0)
        ids = np.where(present, self._tokens[flat], pad_id).astype(np.int64)
        real = present & (self._special[flat] == 0)
        return ids, present, real
