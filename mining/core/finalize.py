"""From a merged Partial to per-key results: trigger examples with their text, value
projections, statistics; bfloat16 winners re-scored in float32 so that ranks are exact."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np
import torch

from . import samples as sampling
from .errors import MiningError
from .miner import (
    HIST_EDGES,
    SENTINEL,
    Partial,
    pack_keys,
    partial_coefficient,
    prefix_hashes,
    unpack_sentences,
    unpack_values,
)
from .models import LoadedModel
from .store import END_OF_SENTENCE_ID, NEXT_UNKNOWN_ID, NO_SPAN, CorpusStore
from .tokens import token_bytes

END_OF_SENTENCE = "</s>"  # next_token when the trigger is the sentence's last real token


@dataclass
class TriggerExample:
    """One trigger example of a key. ``position`` indexes the tokenized sentence,
    special tokens included (a BERT [CLS] is position 0)."""

    rank: int  # 1-based
    coefficient: float
    prefix: str  # the sentence text up to and including the trigger token
    trigger_token: str
    trigger_token_id: int
    # END_OF_SENTENCE when the trigger is the last real token; None where the sentence
    # was cut at max_tokens after the trigger (the next token is unknown)
    next_token: str | None
    next_token_id: int  # END_OF_SENTENCE_ID, NEXT_UNKNOWN_ID in those two cases
    suffix: str  # the rest of the (tokenized, possibly cut) sentence after the trigger
    sentence: str
    sentence_index: int
    position: int
    # The trigger token's character span [start, end) in ``sentence`` (and so in
    # ``prefix``), as written: the workspace highlights it in place, so a lowercasing
    # tokenizer's "marriage" shows as the text's "Marriage". None where the store has no
    # span (a store built before spans were kept) or the token's span is empty.
    trigger_start: int | None = None
    trigger_end: int | None = None
    # The token's raw bytes where, decoded alone, it is not whole characters (U+FFFD: a
    # byte-level piece of a multi-byte character); None where its text is all there is,
    # or where the tokenizer's scheme does not tell the bytes (mining.core.tokens).
    trigger_token_bytes: bytes | None = None
    next_token_bytes: bytes | None = None
    # docs/evidence.md, "Per-token coefficients": the real tokens (never special or
    # padding ones) of the prefix (causal: positions up to and including the trigger) or
    # of the whole sentence (encoder), each decoded alone, and the key's coefficient at
    # each, in float32 from a re-run of the sentence after the pass. Empty for keys
    # without samples (a run over every key).
    tokens: list[str] = field(default_factory=list)
    token_coefficients: list[float] = field(default_factory=list)


@dataclass
class SampleExample(TriggerExample):
    """A sample below the top or a held-out random sentence (``rank``: its order from 1
    within its kind). ``coefficient`` is the sentence's maximum, ``position`` where."""

    kind: str = "band"  # "band", "random" or "heldout_random"
    band: int | None = None  # 1 = lowest; None unless kind is "band"
    band_low: float | None = None  # the band (band_low, band_high]
    band_high: float | None = None


@dataclass
class ValueToken:
    token: str
    token_id: int
    probability: float


@dataclass
class KeyStats:
    """Over every real position of the corpus, except ``histogram``: counts of the
    key's per-sentence maximum coefficient in the buckets of ``miner.HIST_EDGES``.
    "Coefficient" is what the run ranked: with ``coefficient="pre"`` these describe
    the value before the activation (density = share of positions where it is > 0)."""

    density: float  # share of real positions with m > 0
    max: float
    mean: float
    histogram: list[int]


@dataclass
class KeyResult:
    layer: int  # 0-based; interfaces show layer + 1
    index: int
    stats: KeyStats
    value_top_tokens: list[ValueToken]
    examples: list[TriggerExample]
    # Ranks top_k+1 .. 2·top_k (as many as the kept candidates allow): never shown to
    # annotators (docs/evidence.md).
    heldout: list[TriggerExample] = field(default_factory=list)
    samples: list[SampleExample] = field(default_factory=list)  # bands 1..5, then random
    heldout_random: list[SampleExample] = field(default_factory=list)
    # Per band, and for the random draw: whether it is the draw a full scan of the corpus
    # makes (mining.core.samples); empty for keys without samples.
    bands_exact: list[bool] = field(default_factory=list)
    random_exact: bool | None = None


def _decode_token(tokenizer, token_id: int) -> str:
    return tokenizer.decode([token_id], clean_up_tokenization_spaces=False)


def value_top_tokens(
    loaded: LoadedModel, keys: Sequence[tuple[int, int]], top_n: int = 10, chunk: int = 256
) -> dict[tuple[int, int], list[ValueToken]]:
    """Top tokens of p_i = softmax(v_i · Eᵀ) per key (§4 of the paper), without the
    final norm, through the model's output projection where it has one (OPT-350m)."""
    out: dict[tuple[int, int], list[ValueToken]] = {}
    with torch.inference_mode():
        by_layer: dict[int, list[int]] = {}
        for layer, index in keys:
            by_layer.setdefault(layer, []).append(index)
        for layer, indices in by_layer.items():
            values = loaded.values(layer)  # [d_ff, d_model]
            for a in range(0, len(indices), chunk):
                part = indices[a : a + chunk]
                rows = values[torch.tensor(part, device=values.device)]  # [n, d_model]
                probs = torch.softmax(loaded.value_logits(rows), dim=-1)  # [n, vocab]
                top = torch.topk(probs, min(top_n, probs.shape[-1]), dim=-1)
                for j, index in enumerate(part):
                    out[(layer, index)] = [
                        ValueToken(_decode_token(loaded.tokenizer, int(t)), int(t), float(pr))
                        for pr, t in zip(
                            top.values[j].tolist(), top.indices[j].tolist(), strict=True
                        )
                    ]
    return out


@contextlib.contextmanager
def _float32(loaded: LoadedModel) -> Iterator[None]:
    """Temporarily run the model in float32 (bf16 → fp32 → bf16 is lossless)."""
    dtype = loaded.dtype
    if dtype == torch.float32:
        yield
        return
    loaded.model.float()
    try:
        yield
    finally:
        loaded.model.to(dtype)


def _rescore(
    loaded: LoadedModel,
    store: CorpusStore,
    keys: Sequence[tuple[int, int]],
    sentences: dict[tuple[int, int], np.ndarray],
    batch_size: int,
    coefficient: str = "post",
) -> dict[tuple[int, int], tuple[np.ndarray, np.ndarray]]:
    """Recompute in float32, for each key, each listed sentence's candidate: its max
    coefficient (the mode the run ranked) over real positions and the earliest position
    reaching it."""
    out: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
    budget = 1 << 25  # cells of the [sentences, keys] result matrices per pass
    chunks: list[list[tuple[int, int]]] = [[]]
    seen: set[int] = set()
    for key in keys:
        grown = seen | set(sentences[key].tolist())
        if chunks[-1] and len(grown) * (len(chunks[-1]) + 1) > budget:
            chunks.append([])
            grown = set(sentences[key].tolist())
        chunks[-1].append(key)
        seen = grown
    pad_id = loaded.tokenizer.pad_token_id or 0
    device = loaded.device
    with _float32(loaded), torch.inference_mode():
        for chunk in chunks:
            unique = np.unique(np.concatenate([sentences[k] for k in chunk]))
            if unique.size == 0:
                continue
            unique = unique[np.argsort(store.lengths[unique], kind="stable")]
            row_of = {int(s): r for r, s in enumerate(unique)}
            layers = sorted({layer for layer, _ in chunk})
            cols = {
                layer: torch.tensor([i for lyr, i in chunk if lyr == layer], device=device)
                for layer in layers
            }
            best = {lyr: torch.empty(unique.size, len(cols[lyr])) for lyr in layers}
            where = {
                lyr: torch.empty(unique.size, len(cols[lyr]), dtype=torch.int64) for lyr in layers
            }
            current: dict[str, object] = {}

            def hook(
                layer: int, m: torch.Tensor, cols=cols, current=current, best=best, where=where
            ) -> None:
                sel = m[:, :, cols[layer]].float()  # [batch, pos, n_keys_of_layer]
                sel = sel.masked_fill(~current["real"][:, :, None], float("-inf"))
                a, b = current["rows"]
                best[layer][a:b] = sel.amax(dim=1).cpu()  # [batch, n_keys_of_layer]
                where[layer][a:b] = sel.argmax(dim=1).cpu()  # earliest maximum

            with loaded.capture(hook, layers, coefficient=coefficient):
                for a in range(0, unique.size, batch_size):
                    idx = unique[a : a + batch_size]
                    ids, present, real = store.batch(idx, pad_id)
                    current["real"] = torch.from_numpy(real).to(device)
                    current["rows"] = (a, a + idx.size)
                    loaded.forward(
                        torch.from_numpy(ids).to(device),
                        torch.from_numpy(present.astype(np.int64)).to(device),
                    )
            for layer, index in chunk:
                j = int((cols[layer] == index).nonzero()[0, 0])
                rows = np.array([row_of[int(s)] for s in sentences[(layer, index)]], dtype=np.int64)
                out[(layer, index)] = (
                    best[layer][rows, j].numpy(),
                    where[layer][rows, j].numpy(),
                )
    return out


def token_coefficients(
    loaded: LoadedModel,
    store: CorpusStore,
    requests: Mapping[tuple[int, int], Sequence[int]],
    batch_size: int,
    coefficient: str = "post",
) -> dict[tuple[int, int, int], np.ndarray]:
    """Re-run only the listed sentences (each once, sorted by length, batched) in
    float32 and capture every listed key's coefficient at every position of each of its
    sentences, all keys of a layer in one gather: {(layer, index, sentence): [tokens]}
    float32, special and padding positions included (the caller keeps the real ones).

    The coefficients land in one array allocated before the re-run (the values returned
    are views of its rows). Thousands of small arrays allocated batch by batch would
    lie among the freed activations of the growing batches and keep the allocator from
    reusing them: the re-run's memory then grew with the number of sentences
    (docs/mining.md, "Memory")."""
    names = [(layer, index, int(s)) for (layer, index), ss in requests.items() for s in ss]
    if not names:
        return {}
    item = np.array(names, dtype=np.int64).reshape(-1, 3)  # [items, (layer, index, sentence)]
    unique, item_sentence = np.unique(item[:, 2], return_inverse=True)
    run = np.argsort(store.lengths[unique], kind="stable")  # the re-run's order
    unique = unique[run]
    slot = np.empty_like(run)
    slot[run] = np.arange(run.size)
    item_slot = slot[item_sentence]  # each item's sentence's place in the re-run
    lengths = store.lengths[unique]
    coefficients = np.zeros((len(names), int(lengths.max())), dtype=np.float32)
    device = loaded.device
    by_layer: dict[int, tuple[torch.Tensor, np.ndarray, np.ndarray, np.ndarray]] = {}
    for layer in np.unique(item[:, 0]).tolist():
        mine = np.flatnonzero(item[:, 0] == layer)
        mine = mine[np.argsort(item_slot[mine], kind="stable")]
        cols, item_col = np.unique(item[mine, 1], return_inverse=True)
        by_layer[layer] = (torch.from_numpy(cols).to(device), mine, item_col, item_slot[mine])
    pad_id = loaded.tokenizer.pad_token_id or 0
    start = 0

    def hook(layer: int, m: torch.Tensor) -> None:
        cols, mine, item_col, slots = by_layer[layer]
        a, b = np.searchsorted(slots, [start, start + m.shape[0]])
        if a == b:
            return
        rows = torch.from_numpy(slots[a:b] - start).to(device)
        at = torch.from_numpy(item_col[a:b]).to(device)
        got = m.index_select(2, cols)[rows, :, at]  # [items of this batch, pos]
        coefficients[mine[a:b], : m.shape[1]] = got.float().cpu().numpy()

    with (
        _float32(loaded),
        torch.inference_mode(),
        loaded.capture(hook, sorted(by_layer), coefficient=coefficient),
    ):
        for start in range(0, unique.size, batch_size):
            ids, present, _ = store.batch(unique[start : start + batch_size], pad_id)
            loaded.forward(
                torch.from_numpy(ids).to(device),
                torch.from_numpy(present.astype(np.int64)).to(device),
            )
    rows_length = lengths[item_slot]
    return {name: coefficients[i, : rows_length[i]] for i, name in enumerate(names)}


def _prefix_hashes_at(
    store: CorpusStore, sentences: np.ndarray, positions: np.ndarray
) -> np.ndarray:
    """[n] int64: the hash of each sentence's tokens up to and including its position
    (``prefix_hashes``), from one padded batch."""
    if sentences.size == 0:
        return np.zeros(0, dtype=np.int64)
    ids, _, _ = store.batch(sentences, 0)
    hashes = prefix_hashes(torch.from_numpy(ids[:, : int(positions.max()) + 1]))
    return hashes.gather(1, torch.from_numpy(positions.astype(np.int64))[:, None])[:, 0].numpy()


def _rank(
    values: np.ndarray, sentences: np.ndarray, positions: np.ndarray, hashes: list[int] | None
) -> list[tuple[float, int, int]]:
    """Order (coefficient desc, sentence asc); with hashes, keep one entry per prefix."""
    keys = pack_keys(torch.from_numpy(values.astype(np.float32)), torch.from_numpy(sentences))
    order = torch.sort(keys, descending=True, stable=True).indices.tolist()
    out, seen = [], set()
    for j in order:
        if hashes is not None:
            if hashes[j] in seen:
                continue
            seen.add(hashes[j])
        out.append((float(values[j]), int(sentences[j]), int(positions[j])))
    return out


def _example(
    loaded: LoadedModel,
    store: CorpusStore,
    rank: int,
    value: float,
    sentence: int,
    pos: int,
    span: tuple[int, int],
    cls: type[TriggerExample] = TriggerExample,
    **extra: object,
) -> TriggerExample:
    tokenizer = loaded.tokenizer
    ids = store.tokens(sentence)
    special = store.special(sentence)
    ends = store.char_ends(sentence)
    text = store.sentence(sentence)
    real = np.flatnonzero(~special)
    last_end = int(ends[real[-1]])
    cut = int(ends[pos])
    next_id = int(store.next_token_ids(np.array([sentence]), np.array([pos]))[0])
    next_token: str | None
    next_bytes = None
    if next_id == END_OF_SENTENCE_ID:
        next_token = END_OF_SENTENCE
    elif next_id == NEXT_UNKNOWN_ID:
        next_token = None
    else:
        next_token = _decode_token(tokenizer, next_id)
        next_bytes = token_bytes(tokenizer, next_id, next_token)
    trigger = _decode_token(tokenizer, int(ids[pos]))
    return cls(
        rank=rank,
        coefficient=value,
        prefix=text[:cut],
        trigger_token=trigger,
        trigger_token_id=int(ids[pos]),
        next_token=next_token,
        next_token_id=next_id,
        suffix=text[cut:last_end] if last_end > cut else "",
        sentence=text,
        sentence_index=sentence,
        position=pos,
        trigger_start=None if span[0] == NO_SPAN else span[0],
        trigger_end=None if span[0] == NO_SPAN else span[1],
        trigger_token_bytes=token_bytes(tokenizer, int(ids[pos]), trigger),
        next_token_bytes=next_bytes,
        **extra,  # type: ignore[arg-type]
    )


def finalize(
    loaded: LoadedModel,
    store: CorpusStore,
    partial: Partial,
    keys: Sequence[tuple[int, int]],
    top_k: int,
    *,
    value_top_n: int = 10,
    rescore: bool | None = None,
    batch_size: int = 32,
) -> list[KeyResult]:
    """Per key (layer 0-based, index): statistics, value top tokens and the ``top_k``
    best trigger examples with their text.

    ``rescore`` (default: when the run was mined in bfloat16) re-runs each key's
    winning sentences in float32 and re-ranks them, so reported coefficients and ranks
    are float32-exact among the K candidates kept.
    """
    n_layers, d_ff, keep_k = partial.keys.shape
    if top_k > keep_k:
        raise MiningError(f"top_k ({top_k}) cannot exceed the {keep_k} candidates kept per key")
    for layer, index in keys:
        if not (0 <= layer < n_layers and 0 <= index < d_ff):
            raise MiningError(f"key ({layer}, {index}) out of range ({n_layers} layers × {d_ff})")
    if rescore is None:
        rescore = partial.meta["fingerprint"]["dtype"] != "float32"
    causal = bool(partial.meta["fingerprint"]["causal"])
    winners: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for layer, index in keys:
        row = partial.keys[layer, index]
        keep = row != SENTINEL
        winners[(layer, index)] = (
            unpack_values(row[keep]).numpy(),
            unpack_sentences(row[keep]).numpy(),
            partial.positions[layer, index][keep].numpy().astype(np.int64),
        )
    if rescore:
        fresh = _rescore(
            loaded,
            store,
            keys,
            {k: w[1] for k, w in winners.items()},
            batch_size,
            partial_coefficient(partial),
        )
        winners = {k: (fresh[k][0], w[1], fresh[k][1]) for k, w in winners.items()}
    values_top = value_top_tokens(loaded, keys, value_top_n)
    density, mean = partial.density(), partial.mean()
    slot_of = {key: j for j, key in enumerate(partial.sample_keys)}
    sketches = partial.sketches()
    ranked_of: dict[tuple[int, int], list[tuple[float, int, int]]] = {}
    draws: dict[tuple[int, int], sampling.KeyDraw] = {}

    # For a causal model a prefix is what an example shows: no two of a key's share one.
    def prefix_of(sentences: np.ndarray, positions: np.ndarray) -> np.ndarray:
        return _prefix_hashes_at(store, sentences, positions)

    for layer, index in keys:
        values, sentences, positions = winners[(layer, index)]
        hashes = prefix_of(sentences, positions).tolist() if causal else None
        # The visible top_k, then the held-out ranks top_k+1 .. 2·top_k.
        ranked = _rank(values, sentences, positions, hashes)[: 2 * top_k]
        ranked_of[(layer, index)] = ranked
        if (layer, index) in slot_of:
            shown: list[int] = []
            if hashes is not None:  # the ranked entries' hashes, already computed
                where = zip(sentences.tolist(), positions.tolist(), strict=True)
                hash_of = dict(zip(where, hashes, strict=True))
                shown = [hash_of[(s, p)] for _, s, p in ranked]
            draws[(layer, index)] = sampling.draw(
                sketches,
                slot_of[(layer, index)],
                float(partial.max[layer, index]),
                {s for _, s, _ in ranked},
                prefix_of if causal else None,
                shown,
            )
    # Per-token coefficients: one re-run of the stored sentences of the keys with samples.
    requests = {
        key: sorted(
            {s for _, s, _ in ranked_of[key]}
            | {d.sentence for d in [*draws[key].samples, *draws[key].heldout_random]}
        )
        for key in draws
    }
    per_token = token_coefficients(
        loaded, store, requests, batch_size, partial_coefficient(partial)
    )
    special_of = {s: store.special(s) for s in {s for _, _, s in per_token}}
    if rescore:  # a sample's maximum and its position, float32 as the ranks
        for (layer, index), key_draw in draws.items():
            for d in [*key_draw.samples, *key_draw.heldout_random]:
                m = np.where(special_of[d.sentence], -np.inf, per_token[(layer, index, d.sentence)])
                d.position, d.coefficient = int(m.argmax()), float(m.max())
    names = _token_names(loaded, store, special_of)

    def with_tokens(example: TriggerExample, layer: int, index: int) -> TriggerExample:
        m = per_token.get((layer, index, example.sentence_index))
        if m is None:
            return example
        keep = ~special_of[example.sentence_index]
        if causal:
            keep &= np.arange(keep.size) <= example.position
        ids = store.tokens(example.sentence_index)[keep]
        example.tokens = [names[int(t)] for t in ids]
        example.token_coefficients = m[keep].astype(np.float64).tolist()
        return example

    results = []
    for layer, index in keys:
        ranked = ranked_of[(layer, index)]
        spans = store.trigger_spans(
            np.array([s for _, s, _ in ranked], dtype=np.int64),
            np.array([p for _, _, p in ranked], dtype=np.int64),
        ).tolist()  # [2·top_k, 2]
        examples = [
            with_tokens(_example(loaded, store, r, v, s, p, (span[0], span[1])), layer, index)
            for r, ((v, s, p), span) in enumerate(zip(ranked, spans, strict=True), start=1)
        ]
        found = draws.get((layer, index))
        drawn = [] if found is None else [*found.samples, *found.heldout_random]
        dspans = store.trigger_spans(
            np.array([d.sentence for d in drawn], dtype=np.int64),
            np.array([d.position for d in drawn], dtype=np.int64),
        ).tolist()
        sample_examples = [
            cast(
                SampleExample,
                with_tokens(
                    _example(
                        loaded,
                        store,
                        d.order,
                        d.coefficient,
                        d.sentence,
                        d.position,
                        (span[0], span[1]),
                        SampleExample,
                        kind=d.kind,
                        band=d.band,
                        band_low=d.band_low,
                        band_high=d.band_high,
                    ),
                    layer,
                    index,
                ),
            )
            for d, span in zip(drawn, dspans, strict=True)
        ]
        results.append(
            KeyResult(
                layer=layer,
                index=index,
                stats=KeyStats(
                    density=float(density[layer, index]),
                    max=float(partial.max[layer, index]),
                    mean=float(mean[layer, index]),
                    histogram=partial.hist[layer, index].tolist(),
                ),
                value_top_tokens=values_top[(layer, index)],
                examples=examples[:top_k],
                heldout=examples[top_k:],
                samples=[e for e in sample_examples if e.kind != "heldout_random"],
                heldout_random=[e for e in sample_examples if e.kind == "heldout_random"],
                bands_exact=[] if found is None else found.bands_exact,
                random_exact=None if found is None else found.random_exact,
            )
        )
    return results


def _token_names(
    loaded: LoadedModel, store: CorpusStore, special_of: dict[int, np.ndarray]
) -> dict[int, str]:
    """Each real token id of the listed sentences, decoded alone (once per id)."""
    ids = sorted({int(t) for s, special in special_of.items() for t in store.tokens(s)[~special]})
    decoded = loaded.tokenizer.batch_decode([[t] for t in ids], clean_up_tokenization_spaces=False)
    return dict(zip(ids, decoded, strict=True))


__all__ = [
    "END_OF_SENTENCE",
    "END_OF_SENTENCE_ID",
    "HIST_EDGES",
    "NEXT_UNKNOWN_ID",
    "KeyResult",
    "KeyStats",
    "SampleExample",
    "TriggerExample",
    "ValueToken",
    "finalize",
    "token_coefficients",
    "value_top_tokens",
]
