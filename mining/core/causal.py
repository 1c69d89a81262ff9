"""Causal probes per key (docs/causal.md): what happens to the model's prediction when a
memory is switched off, restored or followed along a path of integrated gradients.

A key is (layer, index), layers 0-based; its coefficient m_i is the down projection's
input, as mining ranks it (``LoadedModel.capture``). Four probes:

- ``ablate_logprobs`` / ``ablation``: scale the coefficients of a group of keys (0: zero
  them) at every position and measure the change of log p(target) at a prefix's last
  token, always beside a control group of as many random keys of the same layers;
- ``dissociation``: two groups × two prefix sets, the 2×2 table of loss changes and its
  interaction (Rahman et al. 2025);
- ``trace``: causal tracing (Meng et al. 2022, ROME §2.1): corrupt the subject's
  embeddings with noise and restore one hidden state, or a window of MLP or attention
  outputs, to its clean value;
- ``attribute``: integrated gradients of p(answer) over the coefficients at the last
  token (Dai et al. 2022, "Knowledge Neurons"), then suppress and amplify the selected
  keys beside random ones.

Every input is checked before anything runs (``MiningError``, one line naming the
problem). Every result is a JSON-ready dict; layers are 1-based there, as everywhere in
the interfaces. Seeds fix every random draw (noise, control keys, bootstrap), and the
forwards are deterministic on the CPU, so the same call gives the same result.

How the tracing stays inside its budget (docs/causal.md, "Cost"): a restoration at
layer l changes nothing below l, and in a causal model nothing at the positions before
the restored one. So each restored run starts from the cached corrupted run: one forward
per restored position t feeds only the positions t.. (the earlier ones are the corrupted
run's keys and values, a transformers ``DynamicCache``), and its rows, one per
(kind, layer, noise sample), are sorted by the layer where they first differ from the
corrupted run; each decoder layer computes only the rows that have started (a prefix of
the batch) and takes the corrupted run's output for the rest (``_entering_rows``). The
integrated gradients use the same machinery at the last token with the clean run's
cache.
"""

from __future__ import annotations

import contextlib
import inspect
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from .composition import _layer_paths
from .errors import MiningError
from .models import LoadedModel

ABLATION_FORMAT = "ffkv.causal.ablation/v1"
DISSOCIATION_FORMAT = "ffkv.causal.dissociation/v1"
TRACE_FORMAT = "ffkv.causal.trace/v1"
ATTRIBUTION_FORMAT = "ffkv.causal.attribution/v1"

# ROME's defaults (Meng et al. 2022, §2.1 and their code, rome/experiments/causal_trace.py):
# noise 3 × the embeddings' std on the subject, 10 noise samples, windows of 10 layers.
TRACE_NOISE = 3.0
TRACE_SAMPLES = 10
TRACE_WINDOW = 10
TOP_KEYS = 20  # keys listed at the peak MLP site
# Dai et al. 2022, §3: 20 Riemann steps, keep attributions above 0.2 × the prompt's largest;
# a key shared by at least 70% of a fact's prompts is selected (their refining step).
IG_STEPS = 20
IG_THRESHOLD = 0.2
IG_SHARE = 0.7
TOP_ATTRIBUTIONS = 20  # attributions listed per prompt
REPLICATES = 1000  # bootstrap resamples
# Rows × positions of one restored forward: [16k, d_ff] float32 is 100 MB for SmolLM2.
ROW_TOKENS = 16384
# Bootstrap draws held at once (replicates × examples): 16 MB of float64 per value row.
BOOTSTRAP_CELLS = 2_000_000

KINDS = ("hidden", "mlp", "attn")
_HIDDEN, _MLP, _ATTN = range(3)
# The attention module of a decoder layer, by its name inside the layer, per family.
_ATTENTION_NAMES = ("attn", "attention", "self_attn")


# Checks -----------------------------------------------------------------------------


def _check_causal(loaded: LoadedModel, probe: str) -> None:
    if not loaded.causal:
        raise MiningError(
            f"model {loaded.name!r} is an encoder: it predicts no next token, so {probe} "
            "does not apply"
        )


def _context(loaded: LoadedModel) -> int | None:
    """The model's context: config max_position_embeddings (or GPT-2's n_positions)."""
    config = loaded.model.config
    for name in ("max_position_embeddings", "n_positions", "n_ctx"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def _check_length(loaded: LoadedModel, n_tokens: int, what: str) -> None:
    context = _context(loaded)
    if context is not None and n_tokens > context:
        raise MiningError(
            f"{what} is {n_tokens} tokens, longer than the context of model "
            f"{loaded.name!r} ({context} tokens)"
        )


def _vocab(loaded: LoadedModel) -> int:
    return int(loaded.model.get_input_embeddings().weight.shape[0])


def _keys(loaded: LoadedModel, keys: Any, what: str) -> np.ndarray:
    """[n, 2] int64 (layer, index), 0-based, distinct, in the order given."""
    try:
        arr = np.asarray(keys, dtype=np.int64).reshape(-1, 2) if len(keys) else None
    except (TypeError, ValueError):
        raise MiningError(f"{what} must be (layer, index) pairs") from None
    if arr is None or arr.size == 0:
        raise MiningError(f"{what} has no key: give at least one (layer, index)")
    bad_layer = np.flatnonzero((arr[:, 0] < 0) | (arr[:, 0] >= loaded.n_layers))
    if bad_layer.size:
        layer, index = arr[bad_layer[0]].tolist()
        raise MiningError(
            f"{what}: key ({layer}, {index}) has layer {layer} out of range: the model has "
            f"layers 0..{loaded.n_layers - 1} (0-based; 1..{loaded.n_layers} in the interfaces)"
        )
    bad_index = np.flatnonzero((arr[:, 1] < 0) | (arr[:, 1] >= loaded.d_ff))
    if bad_index.size:
        layer, index = arr[bad_index[0]].tolist()
        raise MiningError(
            f"{what}: key ({layer}, {index}) has index {index} out of range: d_ff is "
            f"{loaded.d_ff} (indices 0..{loaded.d_ff - 1})"
        )
    _, first = np.unique(arr, axis=0, return_index=True)
    return arr[np.sort(first)]


@dataclass
class _Examples:
    """A prefix set, flat: the prefixes end to end, each one's start and length, its
    target and the key it is tagged with (an index into the ablated keys, -1 if none)."""

    flat: np.ndarray  # [total tokens] int64
    starts: np.ndarray  # [n]
    lengths: np.ndarray  # [n]
    targets: np.ndarray  # [n]
    tags: np.ndarray  # [n]

    def __len__(self) -> int:
        return int(self.lengths.size)


def _examples(
    loaded: LoadedModel, examples: Any, what: str, keys: np.ndarray | None = None
) -> _Examples:
    """Check a prefix set: (prefix ids, target id) pairs, or (prefix, target, key) where
    ``keys`` is given (the key must be one of them)."""
    if not isinstance(examples, Sequence) or len(examples) == 0:
        raise MiningError(f"{what} is empty: give at least one (prefix ids, target id) example")
    vocab = _vocab(loaded)
    prefixes, targets, tags = [], [], []
    key_row = {} if keys is None else {(int(a), int(b)): i for i, (a, b) in enumerate(keys)}
    for n, example in enumerate(examples):
        if not isinstance(example, Sequence) or len(example) not in (2, 3):
            raise MiningError(
                f"{what}, example {n}: expected (prefix ids, target id) or (prefix ids, "
                "target id, (layer, index))"
            )
        ids = np.asarray(example[0], dtype=np.int64).reshape(-1)
        if ids.size == 0:
            raise MiningError(f"{what}, example {n}: the prefix is empty")
        _check_length(loaded, int(ids.size), f"{what}, example {n}: the prefix")
        if ids.min() < 0 or ids.max() >= vocab:
            raise MiningError(
                f"{what}, example {n}: token ids must lie in 0..{vocab - 1} for model "
                f"{loaded.name!r}"
            )
        target = int(example[1])
        if not 0 <= target < vocab:
            raise MiningError(f"{what}, example {n}: target id {target} is not in 0..{vocab - 1}")
        tag = -1
        if len(example) == 3 and example[2] is not None:
            key = tuple(int(v) for v in example[2])
            if key not in key_row:
                raise MiningError(
                    f"{what}, example {n}: it is tagged with key {key}, which is not in "
                    "the ablated group"
                )
            tag = key_row[key]
        prefixes.append(ids)
        targets.append(target)
        tags.append(tag)
    lengths = np.array([p.size for p in prefixes], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    return _Examples(
        np.concatenate(prefixes),
        starts,
        lengths,
        np.asarray(targets, dtype=np.int64),
        np.asarray(tags, dtype=np.int64),
    )


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise MiningError(f"{name} must be a whole number ≥ 1, not {value!r}")
    return int(value)


def _finite(value: Any, name: str, low: float | None = None, high: float | None = None) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise MiningError(f"{name} must be a number, not {value!r}") from None
    if not math.isfinite(x) or (low is not None and x < low) or (high is not None and x > high):
        where = f" in [{low}, {high}]" if low is not None and high is not None else ""
        where = where or (f" ≥ {low}" if low is not None else "")
        raise MiningError(f"{name} must be a finite number{where}, not {value!r}")
    return x


@dataclass(frozen=True)
class _Prompt:
    ids: list[int]
    offsets: list[tuple[int, int]]
    special: list[int]


def _encode(loaded: LoadedModel, prompt: Any, what: str = "the prompt") -> _Prompt:
    """The prompt tokenized as the model reads it (its special tokens included)."""
    if not isinstance(prompt, str) or not prompt.strip():
        raise MiningError(f"{what} must be a non-empty text, not {prompt!r}")
    enc = loaded.tokenizer(prompt, return_offsets_mapping=True, return_special_tokens_mask=True)
    ids = list(enc["input_ids"])
    _check_length(loaded, len(ids), f"{what} {_short(prompt)}")
    return _Prompt(ids, [tuple(o) for o in enc["offset_mapping"]], list(enc["special_tokens_mask"]))


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _answer_token(loaded: LoadedModel, prompt: str, answer: Any) -> int:
    """The one token of ``answer`` after ``prompt``: with a leading space unless the answer
    or the prompt's end already has one, as the tokenizer encodes it after the prompt."""
    if not isinstance(answer, str) or not answer.strip():
        raise MiningError(f"the answer must be a non-empty text, not {answer!r}")
    text = answer if answer[:1].isspace() or prompt[-1:].isspace() else " " + answer
    tok = loaded.tokenizer
    base = list(tok(prompt)["input_ids"])
    full = list(tok(prompt + text)["input_ids"])
    extra = full[len(base) :] if full[: len(base)] == base else None
    if extra is None:  # the prompt's tokens changed with the answer after them
        extra = list(tok(text, add_special_tokens=False)["input_ids"])
    if len(extra) != 1:
        pieces = [tok.decode([i]) for i in extra]
        raise MiningError(
            f"the answer {answer!r} is {len(extra)} tokens after the prompt ({pieces}): "
            "it must be exactly one token"
        )
    return int(extra[0])


def _subject_span(prompt: _Prompt, text: str, subject: Any) -> tuple[int, int]:
    """[start, end): the tokens covering the subject's first occurrence in the text."""
    if not isinstance(subject, str) or not subject.strip():
        raise MiningError(f"the subject must be a non-empty text, not {subject!r}")
    begin = text.find(subject)
    if begin < 0:
        raise MiningError(f"the subject {subject!r} is not in the prompt {_short(text)}")
    end = begin + len(subject)
    covered = [
        i
        for i, ((a, b), special) in enumerate(zip(prompt.offsets, prompt.special, strict=True))
        if not special and b > a and b > begin and a < end
    ]
    if not covered:
        raise MiningError(f"no token of the prompt covers the subject {subject!r}")
    return covered[0], covered[-1] + 1


# Model pieces -----------------------------------------------------------------------


def _layer_modules(loaded: LoadedModel) -> list[nn.Module]:
    return [loaded.model.get_submodule(p) for p in _layer_paths(loaded)]


def _attention(loaded: LoadedModel, layer: nn.Module, index: int) -> nn.Module:
    for name in _ATTENTION_NAMES:
        module = getattr(layer, name, None)
        if isinstance(module, nn.Module):
            return module
    raise MiningError(f"model {loaded.name!r}: cannot find the attention of layer {index}")


def _head(loaded: LoadedModel) -> Callable[[torch.Tensor], torch.Tensor]:
    """The body's last hidden state [n, d] → logits [n, vocab], in float32 at least: the
    LM head, or the tied input embeddings where the model has no head."""
    get = getattr(loaded.model, "get_output_embeddings", None)
    head = get() if get is not None else None
    if isinstance(head, nn.Module):
        return lambda h: _wide(head(h))
    emb = loaded.model.get_input_embeddings().weight
    return lambda h: _wide(h @ emb.t())


def _wide(x: torch.Tensor) -> torch.Tensor:
    return x.to(torch.promote_types(x.dtype, torch.float32))


def _cache_argument(loaded: LoadedModel) -> str:
    params = inspect.signature(loaded.body.forward).parameters
    for name in ("cache", "past_key_values"):
        if name in params:
            return name
    raise MiningError(f"model {loaded.name!r}: its forward takes no key-value cache")


def _new_cache(loaded: LoadedModel) -> Any:
    from transformers import DynamicCache  # transformers is heavy: imported where used

    return DynamicCache(config=loaded.model.config)


def _cache_layers(loaded: LoadedModel, cache: Any) -> list[Any]:
    layers = getattr(cache, "layers", None)
    if layers is None or len(layers) < loaded.n_layers or getattr(layers[0], "keys", None) is None:
        raise MiningError(
            f"model {loaded.name!r}: this transformers version keeps its key-value cache in "
            "another form (causal.py reads DynamicCache.layers[i].keys / .values)"
        )
    return list(layers)


def _hidden_of(output: Any) -> torch.Tensor:
    return output[0] if isinstance(output, tuple) else output


def _per_position(t: torch.Tensor, batch: int) -> torch.Tensor:
    """[batch, pos, x] from [batch, pos, x] or OPT's flattened [batch*pos, x]."""
    return t if t.dim() == 3 else t.reshape(batch, -1, t.shape[-1])


@contextlib.contextmanager
def _hooks(handles: list[Any]) -> Iterator[None]:
    """Hooks are global state on the modules: removed on leaving, whatever happens."""
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


@contextlib.contextmanager
def _recording(
    loaded: LoadedModel, layers: list[nn.Module], attns: list[nn.Module] | None, batch: int
) -> Iterator[dict[str, list[torch.Tensor]]]:
    """While a forward of ``batch`` rows runs: per layer its output ("out"), the MLP's output
    (the down projection's, "mlp"), its coefficients ("m") and, with ``attns``, the
    attention's output ("attn"), each [batch, pos, x]."""
    got: dict[str, list[torch.Tensor]] = {
        k: [torch.empty(0)] * loaded.n_layers for k in ("out", "mlp", "m", "attn")
    }
    handles = []
    for j in range(loaded.n_layers):
        down = loaded.down_module(j)

        def on_out(_m: Any, _a: Any, output: Any, _j: int = j) -> None:
            got["out"][_j] = _hidden_of(output)  # [batch, pos, d]

        def on_mlp(_m: Any, _a: Any, output: torch.Tensor, _j: int = j) -> None:
            got["mlp"][_j] = _per_position(output, batch)  # [batch, pos, d]

        def on_m(_m: Any, args: tuple[Any, ...], _j: int = j) -> None:
            got["m"][_j] = _per_position(args[0], batch)  # [batch, pos, d_ff]

        handles += [
            layers[j].register_forward_hook(on_out),
            down.register_forward_hook(on_mlp),
            down.register_forward_pre_hook(on_m),
        ]
        if attns is not None:

            def on_attn(_m: Any, _a: Any, output: Any, _j: int = j) -> None:
                got["attn"][_j] = _hidden_of(output)  # [batch, pos, d]

            handles.append(attns[j].register_forward_hook(on_attn))
    with _hooks(handles):
        yield got


def _rows(x: Any, batch: int, n: int) -> Any:
    """The first ``n`` of ``batch`` rows of every tensor argument with a batch dimension."""
    if isinstance(x, torch.Tensor):
        return x[:n] if x.dim() > 0 and x.shape[0] == batch else x
    if isinstance(x, tuple):
        return tuple(_rows(v, batch, n) for v in x)
    if isinstance(x, list):
        return [_rows(v, batch, n) for v in x]
    if isinstance(x, dict):
        return {k: _rows(v, batch, n) for k, v in x.items()}
    return x


@contextlib.contextmanager
def _entering_rows(
    layers: list[nn.Module],
    active: Sequence[int],
    fill: Callable[[int, int, int], torch.Tensor],
    cache_layers: list[Any] | None,
    prefix: Callable[[int, int], tuple[torch.Tensor, torch.Tensor]] | None,
    edit: Callable[[int, torch.Tensor], None] | None = None,
    in_place: bool = False,
) -> Iterator[None]:
    """While the ``with`` block runs one forward of B rows, decoder layer j computes only
    its first ``active[j]`` rows (non-decreasing in j: a row that has entered stays in);
    ``fill(j, lo, hi)`` gives its output for rows lo..hi-1 ([hi - lo, q, d]), and
    ``edit(j, out)`` may change the whole output in place. With a cache, ``prefix(j, n)``
    gives the earlier positions' keys and values of the first n rows, installed just
    before layer j runs (until then the cache's layer j may hold any rows: the mask reads
    only the length of layer 0's).

    ``in_place`` (inference only): the layer's input tensor becomes its output, and only
    the rows that the next layer computes (or, after the last layer, every row) are
    filled; the others are left as they are, since no layer reads them before they enter.

    A layer's forward is replaced on the instance (hooks cannot skip a module) and put
    back on leaving, whatever happens."""
    patched = []
    n_layers = len(layers)
    try:
        for j, layer in enumerate(layers):
            original = layer.forward

            def forward(*args: Any, _j: int = j, _original: Any = original, **kwargs: Any) -> Any:
                hidden = args[0] if args else kwargs["hidden_states"]  # [B, q, d]
                b, n = hidden.shape[0], active[_j]
                computed = None
                if n:
                    if cache_layers is not None and prefix is not None:
                        keys, values = prefix(_j, n)  # [n, heads, t, head_dim] each
                        cache_layers[_j].keys, cache_layers[_j].values = keys, values
                    if n < b:
                        args, kwargs = _rows(args, b, n), _rows(kwargs, b, n)
                    computed = _hidden_of(_original(*args, **kwargs))  # [n, q, d]
                if computed is not None and n == b:
                    out = computed
                elif in_place:
                    need = active[_j + 1] if _j + 1 < n_layers else b
                    out = hidden
                    if computed is not None:
                        out[:n] = computed
                    if need > n:
                        out[n:need] = fill(_j, n, need)
                else:
                    rest = fill(_j, n, b)  # [b - n, q, d]
                    out = rest if computed is None else torch.cat([computed, rest])
                if edit is not None:
                    edit(_j, out)
                return out

            layer.forward = forward
            patched.append(layer)
        yield
    finally:
        for layer in patched:
            del layer.forward  # the class's forward again


# Ablation ---------------------------------------------------------------------------


def _batch_ids(
    examples: _Examples, rows: np.ndarray, pad_id: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Right-padded ids [b, width], the mask of real tokens and each prefix's last index."""
    lengths = examples.lengths[rows]
    width = int(lengths.max())
    cols = np.arange(width)[None, :]
    present = cols < lengths[:, None]
    where = np.where(present, examples.starts[rows][:, None] + cols, 0)
    ids = np.where(present, examples.flat[where], pad_id)
    return ids, present, lengths - 1


def _variant_logprobs(
    loaded: LoadedModel,
    examples: _Examples,
    targets: np.ndarray,
    groups: Sequence[tuple[np.ndarray, float]],
    last_only: bool,
    batch_size: int,
) -> np.ndarray:
    """log p of ``targets`` ([n, k] token ids) at each prefix's last token, [1 + V, n, k]:
    row 0 the clean model, row v the model with the coefficients of ``groups[v-1]``'s keys
    times its scale, at every position or (``last_only``) at the prefix's last token. Each
    batch runs once with its 1 + V copies stacked (a forward pre-hook on each touched
    layer's down projection multiplies the copies' coefficients)."""
    n, k = targets.shape
    copies = 1 + len(groups)
    d_ff = loaded.d_ff
    touched = sorted({int(layer) for keys, _ in groups for layer in keys[:, 0]})
    head = _head(loaded)
    pad = loaded.tokenizer.pad_token_id or 0
    order = np.argsort(examples.lengths, kind="stable")  # little padding
    out = np.empty((copies, n, k))
    device, dtype = loaded.device, loaded.dtype
    current: dict[str, Any] = {}

    def pre(_m: Any, args: tuple[Any, ...], _layer: int) -> tuple[torch.Tensor]:
        m = args[0]
        rows, last = current["rows"], current["last"]
        shaped = m.reshape(rows, -1, d_ff)  # [R, width, d_ff] (OPT flattens it)
        scale = current["scale"][_layer]  # [R, d_ff]
        if last_only:
            shaped = shaped.clone()
            at = torch.arange(rows, device=m.device)
            shaped[at, last] = shaped[at, last] * scale
        else:
            shaped = shaped * scale[:, None, :]
        return (shaped.reshape(m.shape),)

    handles = [
        loaded.down_module(layer).register_forward_pre_hook(
            lambda _m, args, _layer=layer: pre(_m, args, _layer)
        )
        for layer in touched
    ]
    with _hooks(handles), torch.inference_mode():
        for a in range(0, n, batch_size):
            rows = order[a : a + batch_size]
            b = rows.size
            ids, present, last = _batch_ids(examples, rows, pad)
            scale = {}
            for layer in touched:
                s = torch.ones((copies, b, d_ff), dtype=dtype, device=device)
                for v, (keys, factor) in enumerate(groups, start=1):
                    idx = torch.from_numpy(keys[keys[:, 0] == layer, 1]).to(device)
                    s[v, :, idx] = factor
                scale[layer] = s.reshape(copies * b, d_ff)  # [R, d_ff]
            last_t = torch.from_numpy(np.tile(last, copies)).to(device)  # [R]
            current.update(rows=copies * b, last=last_t, scale=scale)
            hidden = loaded.body(
                input_ids=torch.from_numpy(np.tile(ids, (copies, 1))).to(device),
                attention_mask=torch.from_numpy(np.tile(present, (copies, 1)).astype(np.int64)).to(
                    device
                ),
                use_cache=False,
            ).last_hidden_state  # [R, width, d]
            at_last = hidden[torch.arange(copies * b, device=device), last_t]  # [R, d]
            logp = torch.log_softmax(head(at_last), dim=-1)  # [R, vocab]
            want = torch.from_numpy(np.tile(targets[rows], (copies, 1))).to(device)  # [R, k]
            got = logp.gather(1, want).reshape(copies, b, k)
            out[:, rows] = got.double().cpu().numpy()
    return out


def ablate_logprobs(
    loaded: LoadedModel,
    examples: Sequence[Any],
    keys: Sequence[Sequence[int]],
    scale: float = 0.0,
    targets: Sequence[Sequence[int]] | np.ndarray | None = None,
    batch_size: int = 32,
) -> dict[str, Any]:
    """Per example (prefix token ids as the model reads them, target id): the clean and the
    ablated log p of its target at the prefix's last token, the coefficients of ``keys``
    ((layer, index), 0-based) times ``scale`` at every position (0: zeroed). ``targets``:
    extra token ids per example ([n, k]), measured the same way (for a key's value top
    token). Returns {"clean": [n], "ablated": [n]} and, with ``targets``,
    {"targets_clean": [n][k], "targets_ablated": [n][k]}."""
    _check_causal(loaded, "key ablation")
    key_arr = _keys(loaded, keys, "the ablated group")
    factor = _finite(scale, "the scale")
    batch_size = _positive_int(batch_size, "the batch size")
    ex = _examples(loaded, examples, "the examples")
    extra = _extra_targets(loaded, targets, len(ex))
    wanted = ex.targets[:, None] if extra is None else np.hstack([ex.targets[:, None], extra])
    logp = _variant_logprobs(loaded, ex, wanted, [(key_arr, factor)], False, batch_size)
    result: dict[str, Any] = {"clean": logp[0, :, 0].tolist(), "ablated": logp[1, :, 0].tolist()}
    if extra is not None:
        result["targets_clean"] = logp[0, :, 1:].tolist()
        result["targets_ablated"] = logp[1, :, 1:].tolist()
    return result


def _extra_targets(loaded: LoadedModel, targets: Any, n: int) -> np.ndarray | None:
    if targets is None:
        return None
    try:
        arr = np.asarray(targets, dtype=np.int64)
    except (TypeError, ValueError):
        raise MiningError("the extra targets must be token ids, [examples, k]") from None
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != n:
        raise MiningError(
            f"the extra targets must have one row per example ({n}), not shape {list(arr.shape)}"
        )
    vocab = _vocab(loaded)
    if arr.size and (arr.min() < 0 or arr.max() >= vocab):
        raise MiningError(f"the extra targets must be token ids in 0..{vocab - 1}")
    return arr


def _control_keys(loaded: LoadedModel, keys: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """As many random keys per layer as ``keys`` has there, none of them, drawn with
    ``rng`` (layers in increasing order)."""
    chosen = []
    for layer in np.unique(keys[:, 0]):
        taken = keys[keys[:, 0] == layer, 1]
        free = np.setdiff1d(np.arange(loaded.d_ff), taken)
        if free.size < taken.size:
            raise MiningError(
                f"layer {int(layer)} has {taken.size} of its {loaded.d_ff} keys in the group: "
                "too few are left for a control group of as many random keys"
            )
        picked = np.sort(rng.choice(free, size=taken.size, replace=False))
        chosen.append(np.stack([np.full(picked.size, layer), picked], axis=1))
    return np.concatenate(chosen).astype(np.int64)


def _value_tops(loaded: LoadedModel, keys: np.ndarray) -> np.ndarray:
    """argmax of v_i·E for each key (``value_agreement.value_argmax``'s reading, without
    the final norm), computed for the given keys only: [n]."""
    tops = np.empty(keys.shape[0], dtype=np.int64)
    for layer in np.unique(keys[:, 0]):  # a loop over layers; each layer's keys at once
        where = np.flatnonzero(keys[:, 0] == layer)
        values = loaded.values(int(layer))  # [d_ff, d_model]
        rows = values[torch.from_numpy(keys[where, 1]).to(values.device)]  # [k, d_model]
        tops[where] = loaded.value_logits(rows).argmax(dim=-1).cpu().numpy()
    return tops


# Bootstrap --------------------------------------------------------------------------


def _boot(
    values: np.ndarray,
    groups: np.ndarray,
    n_groups: int,
    replicates: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Means of ``values`` ([V, n]) per group (``groups`` [n]: 0..n_groups-1, -1 none) and
    their bootstrap replicates: examples resampled with replacement within each group, the
    same draw for every value row (the rows are paired: the same prefixes). Returns
    means [V, G], replicates [R, V, G] and counts [G]; an empty group's means are nan."""
    n_values = values.shape[0]
    counts = np.bincount(groups[groups >= 0], minlength=n_groups)
    means = np.full((n_values, n_groups), np.nan)
    reps = np.full((replicates, n_values, n_groups), np.nan)
    order = np.argsort(groups, kind="stable")
    order = order[groups[order] >= 0]
    if order.size == 0:
        return means, reps, counts
    sorted_values = values[:, order]  # [V, m]
    member = groups[order]  # [m]
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    filled = np.flatnonzero(counts)
    means[:, filled] = np.add.reduceat(sorted_values, starts[filled], axis=1) / counts[filled]
    m = order.size
    step = max(1, BOOTSTRAP_CELLS // m)
    for a in range(0, replicates, step):  # a loop over chunks of replicates
        r = min(step, replicates - a)
        draw = starts[member] + (rng.random((r, m)) * counts[member]).astype(np.int64)  # [r, m]
        sums = np.add.reduceat(sorted_values[:, draw], starts[filled], axis=2)  # [V, r, G']
        reps[a : a + r][:, :, filled] = np.moveaxis(sums, 1, 0) / counts[filled]
    return means, reps, counts


def _interval(mean: float, reps: np.ndarray) -> dict[str, Any] | None:
    """{"mean", "low", "high"}: the mean and its percentile-bootstrap 95% interval."""
    if not math.isfinite(mean):
        return None
    low, high = np.percentile(reps, [2.5, 97.5])
    return {"mean": float(mean), "low": float(low), "high": float(high)}


def _key_list(keys: np.ndarray) -> list[list[int]]:
    """Keys as the interfaces show them: [layer (1-based), index]."""
    return [[int(layer) + 1, int(index)] for layer, index in keys]


def _pair(boot: tuple[np.ndarray, np.ndarray, np.ndarray], g: int, row: int) -> dict[str, Any]:
    """Group ``g``'s intervals of value rows ``row`` (the ablated group) and ``row + 1``
    (its control) from ``_boot``'s result."""
    means, reps, _ = boot
    return {
        "ablated": _interval(means[row, g], reps[:, row, g]),
        "control": _interval(means[row + 1, g], reps[:, row + 1, g]),
    }


def ablation(
    loaded: LoadedModel,
    sets: Mapping[str, Sequence[Any]],
    keys: Sequence[Sequence[int]],
    scale: float = 0.0,
    seed: int = 0,
    replicates: int = REPLICATES,
    *,
    batch_size: int = 32,
) -> dict[str, Any]:
    """Ablate a group of keys (coefficients × ``scale`` at every position) beside a control
    group of as many random keys of the same layers (same count per layer, drawn with
    ``seed``, none of the group), on each prefix set of ``sets`` (a name, e.g. "own" or
    "random", → examples: (prefix ids, target id) or (prefix ids, target id, key), the key
    one of ``keys``: the example is one of its own prefixes).

    Per set: the mean change of log p(target) (ablated − clean) with a bootstrap 95%
    interval over prefixes, overall, per layer and per key (over the examples tagged with
    the layer's keys, or with the key), each as {"ablated", "control"}; and per key the
    change of log p of the key's value top token (argmax of v_i·E) on its own prefixes.
    ``batch_size`` prefixes go through the model at once, each in 3 copies (clean,
    ablated, control).

    Returns {"format", "model", "scale", "seed", "replicates", "keys", "control_keys",
    "sets": {name: {"n", "overall", "layers", "keys"}}}, keys as [layer (1-based), index];
    ``overall`` {"n", "ablated", "control"}, each interval {"mean", "low", "high"} or null
    where no example counts; ``layers`` [{"layer", "n", "ablated", "control"}]; ``keys``
    [{"key", "n", "ablated", "control", "value_top": {"token", "text", "ablated",
    "control"}}]."""
    _check_causal(loaded, "key ablation")
    key_arr = _keys(loaded, keys, "the ablated group")
    factor = _finite(scale, "the scale")
    replicates = _positive_int(replicates, "the bootstrap replicates")
    batch_size = _positive_int(batch_size, "the batch size")
    if not isinstance(sets, Mapping) or not sets:
        raise MiningError("the prefix sets are empty: give at least one named set of examples")
    parsed = {
        str(name): _examples(loaded, examples, f"prefix set {name!r}", key_arr)
        for name, examples in sets.items()
    }
    control = _control_keys(loaded, key_arr, np.random.default_rng(seed))
    tops = _value_tops(loaded, key_arr)  # [n_keys]
    texts = [loaded.tokenizer.decode([int(t)]) for t in tops]
    layers = np.unique(key_arr[:, 0])
    layer_of_key = np.searchsorted(layers, key_arr[:, 0])  # [n_keys] → index in layers
    out_sets = {}
    for number, (name, ex) in enumerate(parsed.items()):
        tagged = ex.tags >= 0
        # The key's value top token on the examples tagged with it (the target otherwise,
        # never read).
        top_target = np.where(tagged, tops[np.maximum(ex.tags, 0)], ex.targets)
        logp = _variant_logprobs(
            loaded,
            ex,
            np.stack([ex.targets, top_target], axis=1),
            [(key_arr, factor), (control, factor)],
            False,
            batch_size,
        )  # [3 (clean, ablated, control), n, 2 (target, value top)]
        delta = logp[1:] - logp[0]
        # Value rows: target ablated, target control, value top ablated, value top control.
        values = np.concatenate([delta[:, :, 0], delta[:, :, 1]])  # [4, n]
        rng = np.random.default_rng([seed, number])
        overall = _boot(values, np.zeros(len(ex), dtype=np.int64), 1, replicates, rng)
        by_layer = np.where(tagged, layer_of_key[np.maximum(ex.tags, 0)], -1)
        per_layer = _boot(values, by_layer, layers.size, replicates, rng)
        per_key = _boot(values, ex.tags, key_arr.shape[0], replicates, rng)
        out_sets[name] = {
            "n": len(ex),
            "overall": {"n": len(ex), **_pair(overall, 0, 0)},
            "layers": [
                {"layer": int(layer) + 1, "n": int(per_layer[2][g]), **_pair(per_layer, g, 0)}
                for g, layer in enumerate(layers)
            ],
            "keys": [
                {
                    "key": [int(layer) + 1, int(index)],
                    "n": int(per_key[2][i]),
                    **_pair(per_key, i, 0),
                    "value_top": {"token": int(tops[i]), "text": texts[i], **_pair(per_key, i, 2)},
                }
                for i, (layer, index) in enumerate(key_arr)
            ],
        }
    return {
        "format": ABLATION_FORMAT,
        "model": loaded.name,
        "scale": factor,
        "seed": seed,
        "replicates": replicates,
        "keys": _key_list(key_arr),
        "control_keys": _key_list(control),
        "sets": out_sets,
    }


def dissociation(
    loaded: LoadedModel,
    group_a: Sequence[Sequence[int]],
    group_b: Sequence[Sequence[int]],
    set_p: Sequence[Any],
    set_q: Sequence[Any],
    scale: float = 0.0,
    seed: int = 0,
    replicates: int = REPLICATES,
    *,
    batch_size: int = 32,
) -> dict[str, Any]:
    """Double dissociation (Rahman et al. 2025): ablate group A, then group B (coefficients ×
    ``scale`` at every position), and measure the mean loss change −Δ log p(target) =
    log p clean − log p ablated on prefix sets P and Q (examples as in ``ablation``; a key
    tag is ignored). Each batch runs in 3 copies: clean, A ablated, B ablated.

    Returns {"format", "model", "scale", "seed", "replicates", "groups": {"a", "b"} (keys as
    [layer (1-based), index]), "n": {"p", "q"}, "table": {"a": {"p", "q"}, "b": {"p", "q"}}
    (each {"mean", "low", "high"}, a bootstrap 95% interval over prefixes), "interaction":
    {"mean", "low", "high", "sign", "excludes_zero"} for (A on P − A on Q) − (B on P − B on
    Q), "a_p_minus_a_q", "b_q_minus_b_p" (intervals) and "double_dissociation": true when
    both of those intervals lie above 0}. P and Q are resampled independently; within a set
    the A and B changes are paired (the same prefixes). An interval is null where a change
    is not finite (a probability of 0 in float32)."""
    _check_causal(loaded, "the dissociation")
    a_keys = _keys(loaded, group_a, "group A")
    b_keys = _keys(loaded, group_b, "group B")
    factor = _finite(scale, "the scale")
    replicates = _positive_int(replicates, "the bootstrap replicates")
    batch_size = _positive_int(batch_size, "the batch size")
    sets = {
        "p": _examples(loaded, _untagged(set_p), "prefix set P"),
        "q": _examples(loaded, _untagged(set_q), "prefix set Q"),
    }
    rng = np.random.default_rng(seed)
    loss, reps = {}, {}
    for name, ex in sets.items():
        logp = _variant_logprobs(
            loaded, ex, ex.targets[:, None], [(a_keys, factor), (b_keys, factor)], False, batch_size
        )
        values = logp[0, :, 0] - logp[1:, :, 0]  # [2 (A, B), n]: −Δ log p
        means, r, _ = _boot(values, np.zeros(len(ex), dtype=np.int64), 1, replicates, rng)
        loss[name], reps[name] = means[:, 0], r[:, :, 0]  # [2], [R, 2]
    table = {
        group: {s: _interval(loss[s][g], reps[s][:, g]) for s in ("p", "q")}
        for g, group in enumerate(("a", "b"))
    }
    a_diff, a_reps = loss["p"][0] - loss["q"][0], reps["p"][:, 0] - reps["q"][:, 0]
    b_diff, b_reps = loss["q"][1] - loss["p"][1], reps["q"][:, 1] - reps["p"][:, 1]
    a_interval, b_interval = _interval(a_diff, a_reps), _interval(b_diff, b_reps)
    interaction = _interval(a_diff + b_diff, a_reps + b_reps)
    if interaction is not None:
        interaction["sign"] = int(np.sign(interaction["mean"]))
        interaction["excludes_zero"] = bool(interaction["low"] > 0 or interaction["high"] < 0)
    return {
        "format": DISSOCIATION_FORMAT,
        "model": loaded.name,
        "scale": factor,
        "seed": seed,
        "replicates": replicates,
        "groups": {"a": _key_list(a_keys), "b": _key_list(b_keys)},
        "n": {"p": len(sets["p"]), "q": len(sets["q"])},
        "table": table,
        "interaction": interaction,
        "a_p_minus_a_q": a_interval,
        "b_q_minus_b_p": b_interval,
        "double_dissociation": bool(
            a_interval is not None
            and b_interval is not None
            and a_interval["low"] > 0
            and b_interval["low"] > 0
        ),
    }


def _untagged(examples: Any) -> Any:
    """A prefix set whose examples may carry a key tag, without it."""
    if not isinstance(examples, Sequence):
        return examples
    return [e[:2] if isinstance(e, Sequence) and len(e) == 3 else e for e in examples]


# Causal tracing ---------------------------------------------------------------------


def trace(
    loaded: LoadedModel,
    prompt: str,
    subject: str,
    answer: str,
    noise: float = TRACE_NOISE,
    samples: int = TRACE_SAMPLES,
    window: int = TRACE_WINDOW,
    seed: int = 0,
) -> dict[str, Any]:
    """Causal tracing (Meng et al. 2022, ROME §2.1, with its defaults).

    The prompt is tokenized as the model reads it (special tokens included); the subject's
    tokens are those whose characters overlap its first occurrence in the prompt. The
    corrupted run adds Gaussian noise to the subject tokens' input embeddings (the input
    embedding module's output), ``noise`` × σ with σ the standard deviation of all the
    entries of the input embedding matrix (ROME took the std of its subjects' embeddings
    over its 1,000 facts; this σ depends on the model alone), ``samples`` draws from a
    ``torch.Generator`` seeded with ``seed``: ``torch.randn((samples, n_subject_tokens,
    d_embedding), generator=...)``, run as one batch. The answer must be one token (with a
    leading space, as the tokenizer encodes it after the prompt). p(answer) is the softmax
    probability at the last token, averaged over the samples where corrupted.

    The indirect effect of a site is p(restored) − p(corrupted), with the corrupted run
    restored to its clean value at: (hidden) one layer's output at one position; (mlp,
    attn) the MLP's (the down projection's) or the attention's output at one position in
    the layers of a window of ``window`` layers centred on the layer, [l − window//2,
    l + ⌈window/2⌉) clipped to the model's layers, as ROME's code does. Positions before the
    subject are not corrupted (a causal model), so restoring them changes nothing: their
    effect is 0 without a run.

    Then, at the MLP site of largest effect at the last subject token, the keys of that
    layer by m_i · (v_i · ∂), ∂ the gradient of log p(answer) with respect to the MLP's
    output at that position in the clean run: the top ``TOP_KEYS`` (largest score first).

    Returns {"format", "model", "prompt", "subject", "answer", "answer_id", "answer_token",
    "tokens" (each token's text), "subject_span" [start, end) (token indices),
    "last_subject", "noise", "noise_std" (σ), "samples", "window", "seed", "p_clean",
    "p_corrupted", "effects": {"hidden", "mlp", "attn"} ([layers][tokens] indirect effects,
    row i is layer i + 1), "peaks": {kind: {"layer", "token", "effect"}} (over every site)
    and "keys": {"layer", "token", "effect", "top": [{"layer", "index", "score", "m"}]}}."""
    _check_causal(loaded, "causal tracing")
    strength = _finite(noise, "the noise", low=0.0)
    samples = _positive_int(samples, "the noise samples")
    window = _positive_int(window, "the window")
    encoded = _encode(loaded, prompt)
    s0, s1 = _subject_span(encoded, prompt, subject)
    answer_id = _answer_token(loaded, prompt, answer)

    n_layers, n_tok = loaded.n_layers, len(encoded.ids)
    device, dtype = loaded.device, loaded.dtype
    layers = _layer_modules(loaded)
    attns = [_attention(loaded, layer, j) for j, layer in enumerate(layers)]
    head = _head(loaded)
    cache_arg = _cache_argument(loaded)
    embed = loaded.model.get_input_embeddings()
    ids = torch.tensor([encoded.ids], device=device)
    with torch.inference_mode():
        clean_emb = embed(ids)  # [1, T, d_emb]
        sigma = float(embed.weight.float().std())
        generator = torch.Generator().manual_seed(seed)
        z = torch.randn((samples, s1 - s0, clean_emb.shape[-1]), generator=generator)
        corrupt = clean_emb.repeat(samples, 1, 1)  # [S, T, d_emb]
        corrupt[:, s0:s1] += (strength * sigma * z).to(device=device, dtype=dtype)
        with _recording(loaded, layers, attns, 1) as clean:
            hidden = loaded.body(inputs_embeds=clean_emb, use_cache=False).last_hidden_state
        p_clean = float(torch.softmax(head(hidden[:, -1]), dim=-1)[0, answer_id])
        cache = _new_cache(loaded)
        with _recording(loaded, layers, None, samples) as corrupted:
            hidden = loaded.body(
                inputs_embeds=corrupt, use_cache=True, **{cache_arg: cache}
            ).last_hidden_state
        p_corrupted = float(torch.softmax(head(hidden[:, -1]), dim=-1)[:, answer_id].mean())
        kv = [(c.keys, c.values) for c in _cache_layers(loaded, cache)]  # [S, heads, T, hd]
        effects = np.zeros((len(KINDS), n_layers, n_tok))
        # ROME's window: range(max(0, l - w // 2), min(L, l - (-w // 2))).
        lo = np.maximum(0, np.arange(n_layers) - window // 2)
        hi = np.minimum(n_layers, np.arange(n_layers) + (window + 1) // 2)
        kind = np.repeat(np.arange(len(KINDS)), n_layers)  # [C] configurations
        layer = np.tile(np.arange(n_layers), len(KINDS))
        # The first layer where a configuration's run differs from the corrupted one.
        start = np.where(kind == _HIDDEN, layer + 1, np.tile(lo, len(KINDS)))
        end = np.where(kind == _HIDDEN, layer + 1, np.tile(hi, len(KINDS)))
        order = np.argsort(start, kind="stable")
        for t in range(s0, n_tok):  # one batch per restored position (its own cache)
            q = n_tok - t
            per_chunk = max(1, ROW_TOKENS // (samples * q))
            for a in range(0, order.size, per_chunk):  # a loop over batches
                chosen = order[a : a + per_chunk]
                p = _restored(
                    loaded,
                    layers,
                    attns,
                    head,
                    cache_arg,
                    t,
                    corrupt[:, t:],
                    kv,
                    corrupted["out"],
                    clean,
                    kind[chosen],
                    layer[chosen],
                    start[chosen],
                    end[chosen],
                )  # [c, S]
                effects[kind[chosen], layer[chosen], t] = p[:, answer_id] - p_corrupted
    keys = _keys_at_peak(loaded, layers, head, encoded.ids, answer_id, effects[_MLP], s1 - 1)
    peaks = {}
    for k, name in enumerate(KINDS):
        j, i = np.unravel_index(int(np.argmax(effects[k])), effects[k].shape)
        peaks[name] = {"layer": int(j) + 1, "token": int(i), "effect": float(effects[k][j, i])}
    return {
        "format": TRACE_FORMAT,
        "model": loaded.name,
        "prompt": prompt,
        "subject": subject,
        "answer": answer,
        "answer_id": answer_id,
        "answer_token": loaded.tokenizer.decode([answer_id]),
        "tokens": [loaded.tokenizer.decode([i]) for i in encoded.ids],
        "subject_span": [s0, s1],
        "last_subject": s1 - 1,
        "noise": strength,
        "noise_std": sigma,
        "samples": samples,
        "window": window,
        "seed": seed,
        "p_clean": p_clean,
        "p_corrupted": p_corrupted,
        "effects": {name: effects[k].tolist() for k, name in enumerate(KINDS)},
        "peaks": peaks,
        "keys": keys,
    }


def _restored(
    loaded: LoadedModel,
    layers: list[nn.Module],
    attns: list[nn.Module],
    head: Callable[[torch.Tensor], torch.Tensor],
    cache_arg: str,
    t: int,
    suffix_emb: torch.Tensor,
    kv: list[tuple[torch.Tensor, torch.Tensor]],
    corrupted_out: list[torch.Tensor],
    clean: dict[str, list[torch.Tensor]],
    kind: np.ndarray,
    layer: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
) -> torch.Tensor:
    """The restored runs of configurations ``kind``/``layer`` (ascending ``start``, window
    [start, end) for mlp and attn) at position ``t``, from the corrupted run: one forward of
    c × S rows (configuration-major) over the positions t..; the last token's
    probabilities averaged over the samples, [c, vocab]."""
    n_cfg = kind.size
    samples, q = suffix_emb.shape[0], suffix_emb.shape[1]
    device = suffix_emb.device
    active = [samples * int(np.searchsorted(start, j, side="right")) for j in range(len(layers))]

    def rows_of(configs: np.ndarray) -> torch.Tensor:
        rows = configs[:, None] * samples + np.arange(samples)[None, :]
        return torch.from_numpy(rows.reshape(-1)).to(device)

    def restore_rows(k: int, j: int) -> torch.Tensor | None:
        if k == _HIDDEN:
            configs = np.flatnonzero((kind == _HIDDEN) & (layer == j))
        else:
            configs = np.flatnonzero((kind == k) & (start <= j) & (j < end))
        return rows_of(configs) if configs.size else None

    restore = {k: [restore_rows(k, j) for j in range(len(layers))] for k in (_HIDDEN, _MLP, _ATTN)}

    def put(x: torch.Tensor, rows: torch.Tensor, value: torch.Tensor) -> None:
        """Position t (the first here) of ``rows`` of x ([n, q, d] or [n*q, d]) = value."""
        x.view(-1, q, x.shape[-1])[rows, 0] = value

    def fill(j: int, lo: int, hi: int) -> torch.Tensor:
        return corrupted_out[j][:, t:].repeat((hi - lo) // samples, 1, 1)  # [hi - lo, q, d]

    def prefix(j: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        keys, values = kv[j]  # [S, heads, T, head_dim]
        times = n // samples
        return keys[:, :, :t].repeat(times, 1, 1, 1), values[:, :, :t].repeat(times, 1, 1, 1)

    def edit(j: int, out: torch.Tensor) -> None:
        rows = restore[_HIDDEN][j]
        if rows is not None:
            put(out, rows, clean["out"][j][0, t])

    handles = []
    for k, modules, source in ((_MLP, None, "mlp"), (_ATTN, attns, "attn")):
        for j in range(len(layers)):
            rows = restore[k][j]
            if rows is None:
                continue
            value = clean[source][j][0, t]  # [d]
            module = loaded.down_module(j) if modules is None else modules[j]

            def hook(
                _m: Any, _a: Any, output: Any, _rows: torch.Tensor = rows, _v: torch.Tensor = value
            ) -> None:
                put(_hidden_of(output), _rows, _v)  # a fresh tensor: edited in place

            handles.append(module.register_forward_hook(hook))
    cache = None
    kwargs: dict[str, Any] = {"use_cache": False}
    if t > 0:
        cache = _new_cache(loaded)
        for j, (keys, values) in enumerate(kv):  # any rows will do until layer j runs
            cache.update(keys[:, :, :t], values[:, :, :t], j)
        kwargs = {"use_cache": True, cache_arg: cache}
    cache_layers = _cache_layers(loaded, cache) if cache is not None else None
    with (
        _hooks(handles),
        _entering_rows(layers, active, fill, cache_layers, prefix, edit, in_place=True),
    ):
        hidden = loaded.body(
            inputs_embeds=suffix_emb.repeat(n_cfg, 1, 1),
            position_ids=torch.arange(t, t + q, device=device)[None, :],
            **kwargs,
        ).last_hidden_state  # [c·S, q, d]
    probs = torch.softmax(head(hidden[:, -1]), dim=-1)  # [c·S, vocab]
    return probs.reshape(n_cfg, samples, -1).mean(dim=1)


def _keys_at_peak(
    loaded: LoadedModel,
    layers: list[nn.Module],
    head: Callable[[torch.Tensor], torch.Tensor],
    ids: list[int],
    answer_id: int,
    mlp_effects: np.ndarray,
    position: int,
) -> dict[str, Any]:
    """The keys of the layer whose MLP restoration helps most at ``position``, by
    m_i · (v_i · ∂), ∂ = ∂ log p(answer) / ∂ (the MLP's output at ``position``), clean run."""
    layer = int(np.argmax(mlp_effects[:, position]))
    down = loaded.down_module(layer)
    got: dict[str, torch.Tensor] = {}

    def pre(_m: Any, args: tuple[Any, ...]) -> None:
        got["m"] = _per_position(args[0], 1)[0, position].detach()  # [d_ff]

    def post(_m: Any, _a: Any, output: torch.Tensor) -> torch.Tensor:
        leaf = output.detach().requires_grad_(True)  # the MLP's output, a leaf
        got["y"] = leaf
        return leaf

    handles = [down.register_forward_pre_hook(pre), down.register_forward_hook(post)]
    with _hooks(handles), torch.enable_grad():
        hidden = loaded.body(
            input_ids=torch.tensor([ids], device=loaded.device), use_cache=False
        ).last_hidden_state
        logp = torch.log_softmax(head(hidden[:, -1]), dim=-1)[0, answer_id]
        (grad,) = torch.autograd.grad(logp, got["y"])
    direction = _per_position(grad, 1)[0, position].float()  # [d]
    m = got["m"].float()
    with torch.inference_mode():
        scores = m * (loaded.values(layer).float() @ direction)  # [d_ff]
    top = torch.topk(scores, min(TOP_KEYS, scores.numel()))
    return {
        "layer": layer + 1,
        "token": position,
        "effect": float(mlp_effects[layer, position]),
        "top": [
            {"layer": layer + 1, "index": int(i), "score": float(s), "m": float(m[i])}
            for s, i in zip(top.values.tolist(), top.indices.tolist(), strict=True)
        ],
    }


# Attribution ------------------------------------------------------------------------


def attribute(
    loaded: LoadedModel,
    prompts: Sequence[str],
    answer: str,
    steps: int = IG_STEPS,
    threshold: float = IG_THRESHOLD,
    share: float = IG_SHARE,
    seed: int = 0,
    layers: Sequence[int] | None = None,
) -> dict[str, Any]:
    """Knowledge attribution (Dai et al. 2022, §3): integrated gradients of p(answer) at the
    last token with respect to each key's coefficient there, baseline 0, layer by layer:
    scale the layer's coefficients at the last token by α = k/``steps``, k = 1..steps (the
    right Riemann sum), the other layers computed as usual; attribution_i = m_i ×
    mean_k ∂p/∂m_i(α_k m). By completeness the layer's attributions sum to about
    p(m) − p(0), both given ("completeness": per layer "sum", "f_full", "f_baseline").

    Per prompt the keys with attribution > ``threshold`` × the prompt's largest are kept;
    a key kept by at least ``share`` of the prompts is selected (with one prompt: all it
    kept). The selected keys are then suppressed (× 0) and amplified (× 2) at the last
    token, beside as many random keys of the same layers (drawn with ``seed``), and the
    mean relative change of p(answer) over the prompts is reported. ``layers``: 0-based,
    default all.

    Returns {"format", "model", "answer", "steps", "threshold", "share", "seed", "layers"
    (1-based), "prompts": [{"prompt", "answer_id", "answer_token", "p", "max_attribution",
    "top": [{"layer", "index", "attribution"}] (the ``TOP_ATTRIBUTIONS`` largest), "kept"
    ([layer, index] pairs), "completeness": [{"layer", "sum", "f_full", "f_baseline"}]}],
    "selected", "control_keys", "effects": {"suppress", "amplify"} (each {"selected",
    "control"}: mean relative change, and "per_prompt" lists) or null when nothing is
    selected}. Where over half of a layer's keys are selected there is no random group as
    large: "control_keys" stays empty, the controls are null and "control_note" says why."""
    _check_causal(loaded, "knowledge attribution")
    if isinstance(prompts, str) or not isinstance(prompts, Sequence) or not prompts:
        raise MiningError("the prompts are empty: give at least one prompt")
    steps = _positive_int(steps, "the steps")
    threshold = _finite(threshold, "the threshold", 0.0, 1.0)
    share = _finite(share, "the share", 0.0, 1.0)
    if layers is None:
        chosen = np.arange(loaded.n_layers)
    else:
        given = np.asarray(list(layers), dtype=np.int64).reshape(-1)
        if given.size == 0:
            raise MiningError("the layers are empty: give at least one layer, or None for all")
        outside = given[(given < 0) | (given >= loaded.n_layers)]
        if outside.size:
            raise MiningError(
                f"layer {int(outside[0])} is out of range: the model has layers "
                f"0..{loaded.n_layers - 1} (0-based; 1..{loaded.n_layers} in the interfaces)"
            )
        chosen = np.unique(given)
    encoded = [_encode(loaded, p, f"prompt {n}") for n, p in enumerate(prompts)]
    answers = [_answer_token(loaded, p, answer) for p in prompts]

    model_layers = _layer_modules(loaded)
    head = _head(loaded)
    cache_arg = _cache_argument(loaded)
    per_prompt = []
    kept_sets = []
    for prompt, enc, answer_id in zip(prompts, encoded, answers, strict=True):  # a batch each
        scores, complete, p = _integrated_gradients(
            loaded, model_layers, head, cache_arg, enc.ids, answer_id, chosen, steps
        )  # scores [len(chosen), d_ff]
        peak = float(scores.max())
        kept = np.argwhere(scores > threshold * peak) if peak > 0 else np.zeros((0, 2), np.int64)
        kept = np.stack([chosen[kept[:, 0]], kept[:, 1]], axis=1).astype(np.int64)
        kept_sets.append(kept)
        flat = scores.reshape(-1)
        top = np.argsort(-flat, kind="stable")[:TOP_ATTRIBUTIONS]
        per_prompt.append(
            {
                "prompt": prompt,
                "answer_id": answer_id,
                "answer_token": loaded.tokenizer.decode([answer_id]),
                "p": p,
                "max_attribution": peak,
                "top": [
                    {
                        "layer": int(chosen[i // loaded.d_ff]) + 1,
                        "index": int(i % loaded.d_ff),
                        "attribution": float(flat[i]),
                    }
                    for i in top
                ],
                "kept": _key_list(kept),
                "completeness": [
                    {"layer": int(j) + 1, **c} for j, c in zip(chosen, complete, strict=True)
                ],
            }
        )
    # Keys kept by at least ``share`` of the prompts (with one prompt, all it kept).
    every = np.concatenate(kept_sets)
    if every.size:
        unique, counts = np.unique(every, axis=0, return_counts=True)
        need = 1 if len(prompts) == 1 else share * len(prompts)
        selected = unique[counts >= need - 1e-9]
    else:
        selected = np.zeros((0, 2), dtype=np.int64)
    result: dict[str, Any] = {
        "format": ATTRIBUTION_FORMAT,
        "model": loaded.name,
        "answer": answer,
        "steps": steps,
        "threshold": threshold,
        "share": share,
        "seed": seed,
        "layers": [int(j) + 1 for j in chosen],
        "prompts": per_prompt,
        "selected": _key_list(selected),
        "control_keys": [],
        "effects": None,
    }
    if selected.size == 0:
        return result
    try:
        control: np.ndarray | None = _control_keys(loaded, selected, np.random.default_rng(seed))
    except MiningError as exc:  # over half of a layer selected: no random group as large
        control, result["control_note"] = None, str(exc)
    examples = _Examples(
        np.concatenate([np.asarray(e.ids, dtype=np.int64) for e in encoded]),
        np.concatenate([[0], np.cumsum([len(e.ids) for e in encoded])[:-1]]).astype(np.int64),
        np.asarray([len(e.ids) for e in encoded], dtype=np.int64),
        np.asarray(answers, dtype=np.int64),
        np.full(len(encoded), -1, dtype=np.int64),
    )
    groups = [(selected, 0.0), (selected, 2.0)]
    if control is not None:
        groups += [(control, 0.0), (control, 2.0)]
        result["control_keys"] = _key_list(control)
    p = np.exp(_variant_logprobs(loaded, examples, examples.targets[:, None], groups, True, 8))
    change = (p[1:, :, 0] - p[0, :, 0]) / p[0, :, 0]  # [2 or 4, prompts]
    result["effects"] = {}
    for i, what in enumerate(("suppress", "amplify")):
        ctrl = change[i + 2] if control is not None else None
        result["effects"][what] = {
            "selected": float(change[i].mean()),
            "control": None if ctrl is None else float(ctrl.mean()),
            "per_prompt": {
                "selected": change[i].tolist(),
                "control": None if ctrl is None else ctrl.tolist(),
            },
        }
    return result


def _integrated_gradients(
    loaded: LoadedModel,
    model_layers: list[nn.Module],
    head: Callable[[torch.Tensor], torch.Tensor],
    cache_arg: str,
    ids: list[int],
    answer_id: int,
    chosen: np.ndarray,
    steps: int,
) -> tuple[np.ndarray, list[dict[str, float]], float]:
    """One prompt: attributions [len(chosen), d_ff], the completeness sums per layer and
    the clean p(answer). One clean run (its cache and each layer's output at the last
    token), then one forward and backward of len(chosen) × (steps + 1) rows at the last
    token only (α = 0..1; the rows of layer ℓ enter the model at layer ℓ, the layers below
    give their clean output)."""
    device = loaded.device
    n_tok = len(ids)
    last = n_tok - 1
    per = steps + 1
    n_rows = chosen.size * per
    row_start = np.repeat(chosen, per)  # [rows], ascending
    active = [int(np.searchsorted(row_start, j, side="right")) for j in range(loaded.n_layers)]
    cache = _new_cache(loaded)
    with torch.inference_mode(), _recording(loaded, model_layers, None, 1) as clean:
        hidden = loaded.body(
            input_ids=torch.tensor([ids], device=device), use_cache=True, **{cache_arg: cache}
        ).last_hidden_state
        p_clean = float(torch.softmax(head(hidden[:, -1]), dim=-1)[0, answer_id])
    # Clean tensors made in inference mode cannot enter autograd: plain copies.
    kv = [
        (c.keys[:, :, :last].clone(), c.values[:, :, :last].clone())
        for c in _cache_layers(loaded, cache)
    ]
    out_last = [o[:, last:].clone() for o in clean["out"]]  # [1, 1, d]
    m_last = {int(j): clean["m"][j][0, last].clone() for j in chosen}  # [d_ff]
    alphas = torch.arange(per, device=device, dtype=loaded.dtype) / steps  # [steps + 1]
    leaves = {
        j: (alphas[:, None] * m_last[j][None, :]).detach().requires_grad_(True) for j in m_last
    }  # [steps + 1, d_ff]: the layer's coefficients at the last token, α·m

    def fill(j: int, n: int, b: int) -> torch.Tensor:
        return out_last[j].expand(b - n, 1, out_last[j].shape[-1])

    def prefix(j: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        keys, values = kv[j]
        return keys.expand(n, -1, -1, -1), values.expand(n, -1, -1, -1)

    handles = []
    for j in m_last:
        lo = active[j] - per  # the rows entering at layer j are the last of its active ones

        def pre(_m: Any, args: tuple[Any, ...], _j: int = j, _lo: int = lo) -> tuple[torch.Tensor]:
            m = args[0]  # [n, 1, d_ff] (or [n, d_ff])
            flat = m.reshape(-1, m.shape[-1])
            return (torch.cat([flat[:_lo], leaves[_j]]).reshape(m.shape),)

        handles.append(loaded.down_module(j).register_forward_pre_hook(pre))
    kwargs: dict[str, Any] = {"use_cache": False}
    cache_layers = None
    if last > 0:
        cache = _new_cache(loaded)
        for j, (keys, values) in enumerate(kv):
            cache.update(keys, values, j)
        kwargs = {"use_cache": True, cache_arg: cache}
        cache_layers = _cache_layers(loaded, cache)
    embed = loaded.model.get_input_embeddings()
    with (
        _hooks(handles),
        _entering_rows(model_layers, active, fill, cache_layers, prefix),
        torch.enable_grad(),
    ):
        with torch.no_grad():
            emb = embed(torch.tensor([[ids[last]]], device=device)).expand(n_rows, 1, -1)
        hidden = loaded.body(
            inputs_embeds=emb,
            position_ids=torch.tensor([[last]], device=device),
            **kwargs,
        ).last_hidden_state  # [rows, 1, d]
        f = torch.softmax(head(hidden[:, -1]), dim=-1)[:, answer_id]  # [rows]
        order = list(m_last)
        grads = torch.autograd.grad(f.sum(), [leaves[j] for j in order])
    f_rows = f.detach().double().cpu().numpy().reshape(chosen.size, per)
    scores = np.stack(
        [
            (m_last[j].double() * g[1:].double().mean(dim=0)).cpu().numpy()
            for j, g in zip(order, grads, strict=True)
        ]
    )  # [len(chosen), d_ff]
    complete = [
        {
            "sum": float(scores[i].sum()),
            "f_full": float(f_rows[i, -1]),
            "f_baseline": float(f_rows[i, 0]),
        }
        for i in range(chosen.size)
    ]
    return scores, complete, p_clean
