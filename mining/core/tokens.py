"""A token's raw bytes where its text alone is not whole characters.

A byte-level BPE (GPT-2, SmolLM2, Llama 3) may split a multi-byte UTF-8 character across
tokens, and a SentencePiece model with byte fallback writes such bytes as ``<0xCE>``
pieces: decoded alone, each of those tokens is U+FFFD and its bytes are lost. They are
kept beside the decoded text so that the annotator's screen can show ``⟨0xCE⟩``.
"""

from __future__ import annotations

import functools
import re
from typing import Any

REPLACEMENT = "\ufffd"
_BYTE_FALLBACK = re.compile(r"<0x([0-9A-Fa-f]{2})>")


@functools.cache
def byte_level_alphabet() -> dict[str, int]:
    """The byte-level BPE's characters and the byte each stands for: the printable
    bytes of Latin-1 stand for themselves, every other byte for the character 256 + n,
    n counting those bytes in order (so that no piece holds a space or a control)."""
    printable = {*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)}
    alphabet: dict[str, int] = {}
    shifted = 0
    for byte in range(256):
        if byte in printable:
            alphabet[chr(byte)] = byte
        else:
            alphabet[chr(256 + shifted)] = byte
            shifted += 1
    return alphabet


def token_bytes(tokenizer: Any, token_id: int, decoded: str) -> bytes | None:
    """The raw bytes of token ``token_id`` where ``decoded`` (its text decoded alone)
    holds U+FFFD; None where it does not (the text is all there is), or where the bytes
    cannot be told (a tokenizer that is neither byte-level nor byte-fallback). Bytes
    that do not decode back to ``decoded`` are not trusted: None."""
    if REPLACEMENT not in decoded:
        return None
    piece = tokenizer.convert_ids_to_tokens(int(token_id))
    if not isinstance(piece, str) or not piece:
        return None
    fallback = _BYTE_FALLBACK.fullmatch(piece)
    if fallback:
        raw = bytes([int(fallback.group(1), 16)])
    else:
        alphabet = byte_level_alphabet()
        if not all(char in alphabet for char in piece):
            return None
        raw = bytes(alphabet[char] for char in piece)
    if raw.decode("utf-8", errors="replace") != decoded:
        return None
    return raw
