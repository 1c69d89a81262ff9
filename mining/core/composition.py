"""§5 of the paper, per layer, on the study's own model: how a layer composes its
memories, and how the residual stream refines the prediction (docs/composition.md).

A prefix is a sentence's tokens 0..position; every reading is at its last token. One
forward per batch of prefixes (each sentence cut after its prefix, so that a causal
model computes exactly what it computes for the prefix alone) captures, per layer ℓ:

- m, the memory coefficients (the down projection's input, as mining ranks them);
- the FFN's output (the down projection's output, its bias included) and the layer's
  output; the residual before the FFN is their difference, r = out − ffn, which is the
  stream the FFN reads and adds to in a pre-norm layer (GPT-2, OPT, Llama; for Pythia's
  parallel layers, the layer's input plus its attention);
- y = Σ_i m_i v_i = m·V, the FFN's output without the down projection's bias.

The model's own prediction is the argmax of its logits at the prefix's last token (its
last hidden state, through its final norm where it has one, projected on E).

Every projection on the vocabulary is x·Eᵀ, E the output embedding (or the tied input
embedding), and where the model has a final norm it is also taken through that norm,
both given: {"without_final_norm": a, "with_final_norm": b}, as §4's figures are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .errors import MiningError
from .models import LoadedModel, _find
from .sparsity import quartiles
from .store import CorpusStore
from .value_agreement import WITH_NORM, WITHOUT_NORM, value_argmax

FORMAT = "ffkv.composition/v1"
PROJECT_ROWS = 1024  # rows projected at once: [1024, vocab] float32 is 200 MB at 49k tokens
TENTH = 0.1  # "active" in the second reading: |m_i| above a tenth of the position's largest
# Function words and punctuation, lower case: where some active memory shares the layer's
# prediction, the share of such predictions that are one of these (an agreement on "the"
# says little of what a memory stores). A token counts when its text, stripped of spaces
# and lower-cased, is here.
_STOP_WORD_TEXT = """a an the and or but nor so yet for of in on at to by with from into
onto upon about over under after before between through during without within as than then
that this these those there here it its it's he him his she her hers they them their we us
our you your i me my is are was were be been being am do does did have has had not no which
who whom whose what when where why how if while because also can could will would shall
should may might must , . ; : ' " ( ) - 's"""
STOP_WORDS = frozenset(_STOP_WORD_TEXT.split())


def _layer_paths(loaded: LoadedModel) -> list[str]:
    """named_modules() path of each decoder layer: the down projection's template cut
    after its layer index ('h.{i}.mlp.c_proj' → 'h.{i}')."""
    template = loaded.arch.down_template.split("{i}", 1)[0] + "{i}"
    names = [n for n, _ in loaded.model.named_modules()]
    paths = []
    for i in range(loaded.n_layers):
        found = _find(names, template.format(i=i))
        if len(found) != 1:
            raise MiningError(f"model {loaded.name!r}: cannot find layer {i} ({template})")
        paths.append(found[0])
    return paths


def check_composable(loaded: LoadedModel) -> None:
    """A MiningError naming why ``loaded`` has no §5 reading, if it has none."""
    if not loaded.causal:
        raise MiningError(
            f"model {loaded.name!r} is an encoder: it predicts no next token, so the "
            "composition analysis does not apply (only the sparsity figures do)"
        )
    config = loaded.model.config
    get_head = getattr(loaded.model, "get_output_embeddings", None)
    head = get_head() if get_head is not None else None
    tied = getattr(config, "tie_word_embeddings", False)
    if getattr(head, "weight", None) is None and not tied:
        raise MiningError(
            f"model {loaded.name!r} has no output embedding (no LM head, and its input "
            "embedding is not tied to one): there is no E to project on"
        )
    if loaded.model_type == "opt" and not getattr(config, "do_layer_norm_before", True):
        raise MiningError(
            f"model {loaded.name!r} normalises after each residual addition "
            "(do_layer_norm_before = false): the residual before its FFN is not the layer's "
            "output less the FFN's, so the residual view is not defined for it"
        )


def _stop_token_ids(loaded: LoadedModel, vocab: int) -> np.ndarray:
    """[vocab] bool: the tokens whose text is a stop word."""
    texts = loaded.tokenizer.batch_decode([[i] for i in range(vocab)])
    return np.array([text.strip().lower() in STOP_WORDS for text in texts], dtype=bool)


def _project(
    loaded: LoadedModel, rows: torch.Tensor, targets: torch.Tensor, final_norm: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """Each row's top token on the vocabulary and the probability it gives its target
    (softmax of its logits), in chunks of ``PROJECT_ROWS``."""
    top = torch.empty(rows.shape[0], dtype=torch.int64, device=rows.device)
    prob = torch.empty(rows.shape[0], dtype=torch.float32, device=rows.device)
    for a in range(0, rows.shape[0], PROJECT_ROWS):
        logits = loaded.value_logits(rows[a : a + PROJECT_ROWS], final_norm=final_norm)
        top[a : a + PROJECT_ROWS] = logits.argmax(dim=1)
        picked = logits.gather(1, targets[a : a + PROJECT_ROWS, None])[:, 0]
        prob[a : a + PROJECT_ROWS] = torch.exp(picked - torch.logsumexp(logits, dim=1))
    return top, prob


def compose(
    loaded: LoadedModel,
    store: CorpusStore,
    prefixes: Sequence[tuple[int, int]],
    *,
    batch_size: int = 32,
) -> dict[str, Any]:
    """The §5 figures of every layer over ``prefixes`` ((sentence, position) in
    ``store``), as ``report.json``'s ``composition`` holds them (without its
    ``prefix_set``, which the caller names)."""
    check_composable(loaded)
    if not prefixes:
        raise MiningError("the composition analysis needs at least one prefix")
    items = np.asarray(prefixes, dtype=np.int64).reshape(-1, 2)
    known = (items[:, 0] >= 0) & (items[:, 0] < len(store))
    length = np.where(known, store.lengths[np.where(known, items[:, 0], 0)], 0)
    outside = np.flatnonzero(~known | (items[:, 1] < 0) | (items[:, 1] >= length))
    if outside.size:
        s, p = items[outside[0]].tolist()
        raise MiningError(f"prefix (sentence {s}, position {p}) is not in the corpus store")
    variants = [WITHOUT_NORM] + ([WITH_NORM] if loaded.final_norm_path else [])
    n_layers, n = loaded.n_layers, items.shape[0]
    device = loaded.device
    emb = loaded.output_embeddings().detach().float()
    vocab = int(emb.shape[0])
    stop = _stop_token_ids(loaded, vocab)
    gated = loaded.arch.gated
    layer_modules = [loaded.model.get_submodule(p) for p in _layer_paths(loaded)]
    values = torch.stack([loaded.values(layer).detach().float() for layer in range(n_layers)])
    # Each memory's own prediction, argmax of v_i·E (§4's, for every key of the layer).
    tops = {
        v: torch.from_numpy(
            np.stack([value_argmax(loaded, layer, v == WITH_NORM) for layer in range(n_layers)])
        )
        for v in variants
    }
    # Per prefix (in ``items`` order), per layer: what the figures are counted from.
    active = np.zeros((n_layers, n))
    active_tenth = np.zeros((n_layers, n))
    final = np.zeros(n, dtype=np.int64)
    got: dict[str, dict[str, np.ndarray]] = {
        v: {
            name: np.zeros((n_layers, n), dtype=np.int64 if name != "prob" else np.float64)
            for name in ("top_r", "top_y", "top_out", "agree", "prob")
        }
        for v in variants
    }
    order = np.argsort(items[:, 1], kind="stable")  # by length: little padding
    pad_id = loaded.tokenizer.pad_token_id or 0
    captured: dict[str, list[torch.Tensor | None]] = {
        k: [None] * n_layers for k in ("m", "ffn", "out")
    }
    last: torch.Tensor | None = None

    def at_last(t: torch.Tensor) -> torch.Tensor:
        assert last is not None
        if t.dim() == 2:  # OPT flattens [batch*pos, d] around its FFN
            t = t.reshape(last.shape[0], -1, t.shape[-1])
        return t[torch.arange(last.shape[0]), last].float()

    handles = []
    for layer in range(n_layers):
        down = loaded.down_module(layer)

        def pre(_m: Any, args: tuple[Any, ...], _layer: int = layer) -> None:
            captured["m"][_layer] = at_last(args[0])

        def post(_m: Any, _a: Any, output: torch.Tensor, _layer: int = layer) -> None:
            captured["ffn"][_layer] = at_last(output)

        def layer_out(_m: Any, _a: Any, output: Any, _layer: int = layer) -> None:
            hidden = output[0] if isinstance(output, tuple) else output
            captured["out"][_layer] = at_last(hidden)

        handles += [
            down.register_forward_pre_hook(pre),
            down.register_forward_hook(post),
            layer_modules[layer].register_forward_hook(layer_out),
        ]
    try:
        with torch.inference_mode():
            for a in range(0, n, batch_size):
                rows = order[a : a + batch_size]
                sentences, positions = items[rows, 0], items[rows, 1]
                ids, present, _ = store.batch(sentences, pad_id)
                width = int(positions.max()) + 1
                present = present[:, :width] & (np.arange(width)[None, :] <= positions[:, None])
                ids = np.where(present, ids[:, :width], pad_id)
                last = torch.from_numpy(positions).to(device)
                hidden = loaded.body(
                    input_ids=torch.from_numpy(ids).to(device),
                    attention_mask=torch.from_numpy(present.astype(np.int64)).to(device),
                    use_cache=False,
                ).last_hidden_state
                # The model's prediction: its last hidden state (final norm applied by
                # the body) on E, through project_out where it has one.
                final_logits = loaded.value_logits(at_last(hidden))
                predicted = final_logits.argmax(dim=1)
                final[rows] = predicted.cpu().numpy()
                m = torch.stack(captured["m"])  # type: ignore[arg-type]  # [L, b, d_ff]
                ffn = torch.stack(captured["ffn"])  # type: ignore[arg-type]  # [L, b, d]
                out = torch.stack(captured["out"])  # type: ignore[arg-type]  # [L, b, d]
                active[:, rows] = (m > 0).float().mean(dim=2).cpu().numpy()
                if gated:
                    peak = m.abs().amax(dim=2, keepdim=True)
                    tenth = (m.abs() > TENTH * peak).float().mean(dim=2)
                    active_tenth[:, rows] = tenth.cpu().numpy()
                r = out - ffn  # the residual before the FFN
                y = torch.bmm(m, values.to(m.device))  # Σ_i m_i v_i, [L, b, d]
                # Every projection of the batch in a few large products: r, y and the
                # layer's output of every layer, [3·L·b, d].
                stacked = torch.stack([r, y, out]).reshape(-1, r.shape[-1])
                targets = predicted.repeat(3 * n_layers)  # the model's prediction, per row
                for v in variants:
                    top, prob = _project(loaded, stacked, targets, v == WITH_NORM)
                    top = top.view(3, n_layers, -1)
                    top_y = top[1]
                    memory_tops = tops[v].to(m.device)  # [L, d_ff]
                    agree = ((memory_tops[:, None, :] == top_y[:, :, None]) & (m > 0)).any(dim=2)
                    for name, value in (
                        ("top_r", top[0]),
                        ("top_y", top_y),
                        ("top_out", top[2]),
                        ("agree", agree),
                        ("prob", prob.view(3, n_layers, -1)[0]),
                    ):
                        got[v][name][:, rows] = value.cpu().numpy()
    finally:
        for handle in handles:
            handle.remove()

    def per_variant(fn: Any) -> Any:
        out = {v: fn(got[v]) for v in variants}
        return out if len(variants) > 1 else out[WITHOUT_NORM]

    layers = []
    for layer in range(n_layers):

        def none_agree(g: dict[str, np.ndarray], _layer: int = layer) -> float:
            return float((g["agree"][_layer] == 0).mean())

        def agree_stop(g: dict[str, np.ndarray], _layer: int = layer) -> float | None:
            agreed = g["agree"][_layer] == 1
            if not agreed.any():
                return None
            return float(stop[g["top_y"][_layer][agreed]].mean())

        def residual_final(g: dict[str, np.ndarray], _layer: int = layer) -> float:
            return float((g["top_r"][_layer] == final).mean())

        def change(g: dict[str, np.ndarray], _layer: int = layer) -> dict[str, float]:
            kept = g["top_out"][_layer] == g["top_r"][_layer]
            ffn = ~kept & (g["top_out"][_layer] == g["top_y"][_layer])
            return {
                "residual": float(kept.mean()),
                "ffn": float(ffn.mean()),
                "neither": float((~kept & ~ffn).mean()),
            }

        row: dict[str, Any] = {
            "layer": layer + 1,
            "active_share": quartiles(active[layer]),
            "none_agree_share": per_variant(none_agree),
            "agree_stopword_share": per_variant(agree_stop),
            "residual_final_share": per_variant(residual_final),
            "change": per_variant(change),
            "final_prob_mean": per_variant(lambda g, _l=layer: float(g["prob"][_l].mean())),
        }
        if gated:
            row["active_share_tenth"] = quartiles(active_tenth[layer])
        layers.append(row)
    return {
        "format": FORMAT,
        "model": loaded.name,
        "n_prefixes": n,
        "vocab_size": vocab,
        "final_norm": [False, True] if len(variants) > 1 else [False],
        "final_norm_path": loaded.final_norm_path,
        "gated": gated,
        "layers": layers,
    }
