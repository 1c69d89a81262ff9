"""§4 of the paper over every key of every layer, from a merged Partial.

Per key: the argmax of the value's vocabulary distribution softmax(v_i·E) — the same
token as the argmax of v_i·E — against the token after (reading a) and the last token of
(reading b) the key's top-1 trigger prefix. The top-1 is the first entry of the key's
running top-K, so this needs no second pass over the corpus. Where the model applies a
final norm before the unembedding (GPT-2 ``ln_f``, Llama ``model.norm``) the argmax is
taken without and with it. The paper's authors computed the rate over every key, not
over the sampled ones: 10 keys a layer only give steps of 10%.

Counts per layer, as stored on the study (``Study.value_agreement``); the reports turn
them into rates with Wilson intervals. Denominators: reading (a) leaves out keys whose
top-1 prefix is the last kept token of a cut sentence (its next token is unknown);
the end of a sentence stays in and never matches. Reading (b) counts every key.

For a run mined in bfloat16 the top-1 is the mining pass's (the sampled keys alone are
re-scored in float32).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .miner import SENTINEL, Partial, unpack_sentences
from .models import LoadedModel
from .store import END_OF_SENTENCE_ID, NEXT_UNKNOWN_ID, CorpusStore

FORMAT = "ffkv.value-agreement/v1"
WITHOUT_NORM = "without_final_norm"
WITH_NORM = "with_final_norm"
KEYS_PER_CHUNK = 256  # rows of v_i·E at once: [256, vocab] float32 is 50 MB at 49k tokens


def value_argmax(loaded: LoadedModel, layer: int, final_norm: bool) -> np.ndarray:
    """[d_ff] argmax over the vocabulary of v_i·E for every key of ``layer``."""
    values = loaded.values(layer)  # [d_ff, d_model]
    out = np.empty(values.shape[0], dtype=np.int64)
    with torch.inference_mode():
        for a in range(0, values.shape[0], KEYS_PER_CHUNK):
            logits = loaded.value_logits(values[a : a + KEYS_PER_CHUNK], final_norm=final_norm)
            out[a : a + KEYS_PER_CHUNK] = logits.argmax(dim=-1).cpu().numpy()  # [chunk]
    return out


def variants_of(loaded: LoadedModel) -> list[str]:
    """The readings of a projection on the vocabulary: without the final norm, and with
    it where the model has one."""
    return [WITHOUT_NORM] + ([WITH_NORM] if loaded.final_norm_path else [])


def memory_tops(loaded: LoadedModel) -> dict[str, np.ndarray]:
    """Per reading, [layers, d_ff]: argmax of v_i·E for every key of every layer (each
    memory's own top token). §4 counts them; the §5 composition reads them again."""
    return {
        variant: np.stack(
            [value_argmax(loaded, layer, variant == WITH_NORM) for layer in range(loaded.n_layers)]
        )
        for variant in variants_of(loaded)
    }


def value_agreement(
    loaded: LoadedModel,
    store: CorpusStore,
    partial: Partial,
    tops: dict[str, np.ndarray] | None = None,
) -> dict[str, Any]:
    """Per-layer counts of §4 matches over every key; {} for encoders (no next token).
    ``tops``: ``memory_tops(loaded)`` where the caller has it already."""
    if not loaded.causal:
        return {}
    variants = variants_of(loaded)
    if tops is None:
        tops = memory_tops(loaded)
    top = partial.keys[:, :, 0]  # [layers, d_ff] each key's best rank key
    present = (top != SENTINEL).numpy()
    sentences = np.where(present, unpack_sentences(top).numpy(), 0)
    positions = np.where(present, partial.positions[:, :, 0].numpy(), 0)
    trigger = store.token_ids_at(sentences, positions)  # [layers, d_ff]
    nxt = store.next_token_ids(sentences.reshape(-1), positions.reshape(-1)).reshape(top.shape)
    layers = []
    for layer in range(top.shape[0]):
        ok = present[layer]
        known = ok & (nxt[layer] != NEXT_UNKNOWN_ID)
        row: dict[str, Any] = {
            "layer": layer + 1,
            "n_keys": int(ok.sum()),
            "next_end": int((ok & (nxt[layer] == END_OF_SENTENCE_ID)).sum()),
            "next_unknown": int((ok & ~known).sum()),
            "next_token": {},
            "trigger_token": {},
        }
        for variant in variants:
            argmax = tops[variant][layer]
            row["next_token"][variant] = int((known & (argmax == nxt[layer])).sum())
            row["trigger_token"][variant] = int((ok & (argmax == trigger[layer])).sum())
        layers.append(row)
    return {
        "format": FORMAT,
        "vocab_size": int(loaded.output_embeddings().shape[0]),
        "variants": variants,
        "final_norm": loaded.final_norm_path,
        "layers": layers,
    }
