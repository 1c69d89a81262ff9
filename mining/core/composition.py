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

Cost: the projections dominate (docs/composition.md, "Cost"). The layer's output is
out = r + y + b (b the down projection's bias), and a LayerNorm or an RMSNorm is affine
in its input once the row's scale σ is known, so the logits of out, without and with the
norm, are sums of those of r and y and of constants: four products a layer and prefix,
not six (two, not three, without a final norm; ``AffineNorm``). A final norm of another
kind, or an output projection, takes the generic path: every row through
``LoadedModel.value_logits``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from .errors import MiningError
from .models import LoadedModel, _find, _float32
from .sparsity import quartiles
from .store import CorpusStore
from .value_agreement import WITH_NORM, WITHOUT_NORM, variants_of
from .value_agreement import memory_tops as memory_tops  # re-exported: one code path

FORMAT = "ffkv.composition/v1"
PROJECT_ROWS = 1024  # rows projected at once: [1024, vocab] float32 is 200 MB at 49k tokens
EXP_FLOOR = -87.0  # exp(-87) ≈ 1.6e-38, float32's smallest normal is 1.2e-38
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


# The final norms whose formula is known (each checked on probe rows, ``affine_final_norm``):
# transformers' RMSNorms of the supported families, x·rsqrt(mean(x²) + ε) times a gain.
_RMS_NORMS = frozenset({"LlamaRMSNorm", "MistralRMSNorm", "Qwen2RMSNorm"})
_PROBE_ROWS = 8


@dataclass(frozen=True)
class AffineNorm:
    """A final norm as norm(x) = g ⊙ C·x / σ(x) + β: C centres x (LayerNorm) or is the
    identity (RMSNorm), σ(x) = sqrt(var(x) + ε) or sqrt(mean(x²) + ε). Once σ is known
    the map is affine in x, so the with-norm logits of out = r + y + b are
    ((g⊙Cr)·Eᵀ + (g⊙Cy)·Eᵀ + (g⊙Cb)·Eᵀ) / σ(out) + β·Eᵀ, σ(out) from out itself."""

    gain: torch.Tensor  # [d] g (ones where the norm has none)
    shift: torch.Tensor | None  # [d] β, None where the norm adds none
    eps: float
    centred: bool

    def weighted(self, x: torch.Tensor) -> torch.Tensor:
        """g ⊙ C·x: [n, d] → [n, d]."""
        if self.centred:
            x = x - x.mean(dim=-1, keepdim=True)
        return x * self.gain

    def scale(self, x: torch.Tensor) -> torch.Tensor:
        """σ(x) per row, as the module computes it (a biased variance): [n, d] → [n]."""
        spread = x.var(dim=-1, unbiased=False) if self.centred else x.pow(2).mean(dim=-1)
        return torch.sqrt(spread + self.eps)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        out = self.weighted(x) / self.scale(x)[:, None]
        return out if self.shift is None else out + self.shift


def affine_final_norm(loaded: LoadedModel) -> AffineNorm | None:
    """The model's final norm in affine form, or None where its kind is not known here,
    where an output projection follows it (OPT-350m's project_out), or where the form
    does not reproduce the module's own output on probe rows: those take the generic
    path."""
    if loaded.final_norm_path is None or loaded.output_projection_path is not None:
        return None
    module = _float32(loaded.model.get_submodule(loaded.final_norm_path))
    d = loaded.d_model
    weight = getattr(module, "weight", None)
    bias = getattr(module, "bias", None)
    variance_eps = getattr(module, "variance_epsilon", None)  # transformers' RMSNorms
    if isinstance(module, nn.LayerNorm) and tuple(module.normalized_shape) == (d,):
        centred, eps = True, float(module.eps)
    elif isinstance(module, nn.RMSNorm) and tuple(module.normalized_shape) == (d,):
        # eps None: torch's default, the input dtype's machine epsilon (float32 here)
        centred = False
        eps = float(torch.finfo(torch.float32).eps if module.eps is None else module.eps)
    elif type(module).__name__ in _RMS_NORMS and isinstance(variance_eps, float):
        centred, eps, bias = False, variance_eps, None
    else:
        return None
    if weight is not None and tuple(weight.shape) != (d,):
        return None
    norm = AffineNorm(
        gain=torch.ones(d, device=loaded.device) if weight is None else weight.detach().float(),
        shift=None if bias is None else bias.detach().float(),
        eps=eps,
        centred=centred,
    )
    # Residual streams are far from centred and unit-scaled: probe with both.
    generator = torch.Generator().manual_seed(0)
    probe = 3 * torch.randn(_PROBE_ROWS, d, generator=generator) + 0.5
    probe = probe.to(loaded.device)
    with torch.no_grad():
        expected = module(probe)
        got = norm(probe)
    if not torch.allclose(got, expected, rtol=1e-4, atol=1e-5 * float(expected.abs().max())):
        return None
    return norm


def _stop_token_ids(loaded: LoadedModel, vocab: int) -> np.ndarray:
    """[vocab] bool: the tokens whose text is a stop word."""
    texts = loaded.tokenizer.batch_decode([[i] for i in range(vocab)])
    return np.array([text.strip().lower() in STOP_WORDS for text in texts], dtype=bool)


def _top_and_prob(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """logits [..., rows, vocab], targets [rows]: each row's top token and the probability
    its softmax gives its target, [..., rows]. Overwrites ``logits`` (the softmax's
    exponentials, in place: a pass over [rows, vocab] saved)."""
    best, top = logits.max(dim=-1)  # the first of equal maxima, as argmax
    picked = logits.gather(-1, targets.expand(best.shape)[..., None])[..., 0]
    # Clamped first: below EXP_FLOOR, exp underflows in float32 and torch's vectorised exp
    # takes a path 15x slower (a residual stream's logits spread over hundreds: most of the
    # vocabulary lies there). What is clamped adds under 49,152·e^-87 ≈ 1e-33 to a sum of
    # at least 1 (the best's own term): the sum is the same float.
    total = logits.sub_(best[..., None]).clamp_(min=EXP_FLOOR).exp_().sum(dim=-1)
    return top, torch.exp(picked - best) / total


@dataclass
class _Tops:
    """Per variant, per layer and prefix of a batch: the top tokens of r, y and the
    layer's output, and the probability r gives the model's prediction."""

    top_r: torch.Tensor  # [L, b]
    top_y: torch.Tensor  # [L, b]
    top_out: torch.Tensor  # [L, b]
    prob: torch.Tensor  # [L, b]

    @classmethod
    def empty(cls, n_layers: int, b: int, device: torch.device) -> _Tops:
        def ints() -> torch.Tensor:
            return torch.empty(n_layers, b, dtype=torch.int64, device=device)

        prob = torch.empty(n_layers, b, device=device)
        return cls(top_r=ints(), top_y=ints(), top_out=ints(), prob=prob)


class _Projector:
    """The top tokens of a batch's r, y and out on the vocabulary, for every variant:
    through the affine form of the final norm where there is one (four products a
    layer), else every row through ``LoadedModel.value_logits`` (six)."""

    def __init__(self, loaded: LoadedModel, variants: list[str]) -> None:
        self.loaded = loaded
        self.variants = variants
        self.with_norm = WITH_NORM in variants
        emb = loaded.output_embeddings().detach().float()  # [vocab, d]
        self.emb_t = emb.t()  # [d, vocab], a view: the product reads E as it is stored
        self.norm = affine_final_norm(loaded) if self.with_norm else None
        # Fast: no final norm, or one in affine form (which excludes an output projection).
        plain = not self.with_norm and loaded.output_projection_path is None
        self.fast = plain or self.norm is not None
        # Each layer's down-projection bias on the vocabulary, plain and normed (g⊙Cb):
        # the part of out = r + y + b that no prefix changes. [L, vocab] or None.
        biases = [
            getattr(loaded.down_module(layer), "bias", None) for layer in range(loaded.n_layers)
        ]
        self.bias_logits: torch.Tensor | None = None
        self.bias_normed: torch.Tensor | None = None
        self.shift_logits: torch.Tensor | None = None
        if self.fast and all(b is not None for b in biases):
            bias = torch.stack([b.detach().float() for b in biases])  # type: ignore[union-attr]
            with torch.inference_mode():
                self.bias_logits = bias @ self.emb_t
                if self.norm is not None:
                    self.bias_normed = self.norm.weighted(bias) @ self.emb_t
        if self.norm is not None and self.norm.shift is not None:
            with torch.inference_mode():
                self.shift_logits = self.norm.shift @ self.emb_t  # [vocab] β·Eᵀ
        # The products and the sums of out are written into buffers kept from batch to
        # batch: a fresh [1024, 49k] result is 200 MB of new pages, whose faults cost about
        # a tenth of the product's time on the 2-core host (49,153 faults, 0.1 s of 0.8 s,
        # 2026-12-07).
        self._logits = torch.empty(0)
        self._summed = torch.empty(0)

    def __call__(
        self, r: torch.Tensor, y: torch.Tensor, out: torch.Tensor, targets: torch.Tensor
    ) -> dict[str, _Tops]:
        """r, y, out: [L, b, d]; targets: [b], the model's prediction per prefix."""
        if self.fast:
            return self._affine(r, y, out, targets)
        return self._generic(r, y, out, targets)

    def _affine(
        self, r: torch.Tensor, y: torch.Tensor, out: torch.Tensor, targets: torch.Tensor
    ) -> dict[str, _Tops]:
        n_layers, b, d = r.shape
        got = {v: _Tops.empty(n_layers, b, r.device) for v in self.variants}
        norm = self.norm
        parts = 2 if norm is None else 4  # products a layer: r, y, then g⊙Cr, g⊙Cy
        group = max(1, PROJECT_ROWS // (parts * b))  # layers a product
        for first in range(0, n_layers, group):
            layers = slice(first, min(first + group, n_layers))
            rows = [r[layers], y[layers]]  # [G, b, d] each
            if norm is not None:
                rows += [norm.weighted(r[layers]), norm.weighted(y[layers])]
            x = torch.stack(rows, dim=1).reshape(-1, d)  # [G·parts·b, d], layer by layer
            logits = torch.matmul(x, self.emb_t, out=self._buffer(x.shape[0]))
            # Every pass below covers the group's layers at once: a pass a layer would be
            # a parallel region a layer, and the two threads' waits for each other at the
            # end of each cost 5x the work on the shared 2-core host (2026-12-07).
            by_part = logits.view(-1, parts, b, logits.shape[1])  # [G, parts, b, vocab]
            self._group_tops(got, layers, by_part, out, y, r, targets)
        return got

    def _buffer(self, n_rows: int) -> torch.Tensor:
        """[n_rows, vocab] of the products' buffer (grown where too small)."""
        if self._logits.shape[0] < n_rows:
            self._logits = torch.empty(n_rows, self.emb_t.shape[1], device=self.emb_t.device)
        return self._logits[:n_rows]

    def _group_tops(
        self,
        got: dict[str, _Tops],
        layers: slice,
        by_part: torch.Tensor,
        out: torch.Tensor,
        y: torch.Tensor,
        r: torch.Tensor,
        targets: torch.Tensor,
    ) -> None:
        """The tops of a group of G layers from its products ``by_part`` [G, parts, b,
        vocab]: r·Eᵀ and y·Eᵀ, then (g⊙Cr)·Eᵀ and (g⊙Cy)·Eᵀ where there is a final norm
        (overwritten)."""
        shape = (by_part.shape[0], by_part.shape[2], by_part.shape[3])  # [G, b, vocab]
        if self._summed.shape[1:] != shape[1:] or self._summed.shape[0] < shape[0]:
            self._summed = torch.empty(shape, device=by_part.device)
        summed = self._summed[: shape[0]]
        # Without the norm: logits(out) = logits(r) + logits(y) + logits(b).
        plain_r, plain_y = by_part[:, 0], by_part[:, 1]
        torch.add(plain_r, plain_y, out=summed)
        if self.bias_logits is not None:
            summed += self.bias_logits[layers, None, :]
        g = got[WITHOUT_NORM]
        g.top_out[layers] = summed.argmax(dim=-1)
        g.top_y[layers] = plain_y.argmax(dim=-1)
        g.top_r[layers], g.prob[layers] = _top_and_prob(plain_r, targets)
        norm = self.norm
        if norm is None:
            return
        # With it: each row's logits are its g⊙C-weighted product over its own σ, plus
        # β·Eᵀ; out's weighted product is the sum of r's, y's and b's.
        normed_r, normed_y = by_part[:, 2], by_part[:, 3]
        torch.add(normed_r, normed_y, out=summed)
        if self.bias_normed is not None:
            summed += self.bias_normed[layers, None, :]
        g = got[WITH_NORM]
        # Without β (an RMSNorm), only r's logits need their scale, for p(final): dividing a
        # row by its σ > 0 moves no argmax, and two passes over [G, b, vocab] are saved.
        scaled = [(normed_r, r[layers])]
        if self.shift_logits is not None:
            scaled += [(summed, out[layers]), (normed_y, y[layers])]
        for logits_of, x in scaled:
            logits_of /= norm.scale(x)[..., None]
            if self.shift_logits is not None:
                logits_of += self.shift_logits
        g.top_out[layers] = summed.argmax(dim=-1)
        g.top_y[layers] = normed_y.argmax(dim=-1)
        g.top_r[layers], g.prob[layers] = _top_and_prob(normed_r, targets)

    def _generic(
        self, r: torch.Tensor, y: torch.Tensor, out: torch.Tensor, targets: torch.Tensor
    ) -> dict[str, _Tops]:
        n_layers, b, d = r.shape
        got = {}
        for v in self.variants:
            final_norm = v == WITH_NORM
            tops = _Tops.empty(n_layers, b, r.device)
            rows_r = r.reshape(-1, d)
            every_target = targets.repeat(n_layers)
            for a in range(0, rows_r.shape[0], PROJECT_ROWS):
                logits = self.loaded.value_logits(rows_r[a : a + PROJECT_ROWS], final_norm)
                top, prob = _top_and_prob(logits, every_target[a : a + PROJECT_ROWS])
                tops.top_r.view(-1)[a : a + PROJECT_ROWS] = top
                tops.prob.view(-1)[a : a + PROJECT_ROWS] = prob
            for x, into in ((y, tops.top_y), (out, tops.top_out)):
                rows = x.reshape(-1, d)
                for a in range(0, rows.shape[0], PROJECT_ROWS):
                    logits = self.loaded.value_logits(rows[a : a + PROJECT_ROWS], final_norm)
                    into.view(-1)[a : a + PROJECT_ROWS] = logits.argmax(dim=1)
            got[v] = tops
        return got


def _checked_tops(
    loaded: LoadedModel, given: dict[str, np.ndarray] | None, variants: list[str], vocab: int
) -> dict[str, torch.Tensor]:
    """The memories' own top tokens, [L, d_ff] per variant: ``given`` once checked, else
    computed (``memory_tops``, §4's argmax of v_i·E over every key of every layer)."""
    tops = memory_tops(loaded) if given is None else given
    shape = (loaded.n_layers, loaded.d_ff)
    out = {}
    for v in variants:
        top = tops.get(v)
        if top is None or tuple(np.shape(top)) != shape:
            raise MiningError(
                f"the memories' top tokens ({v}) must be an array of shape {list(shape)} "
                f"for model {loaded.name!r}"
                + ("" if top is None else f", not {list(np.shape(top))}")
            )
        top = np.asarray(top)
        if not np.issubdtype(top.dtype, np.integer) or top.min() < 0 or top.max() >= vocab:
            raise MiningError(
                f"the memories' top tokens ({v}) must be token ids below {vocab} for model "
                f"{loaded.name!r}"
            )
        out[v] = torch.from_numpy(top.astype(np.int64))
    return out


def prefix_batches(
    store: CorpusStore, items: np.ndarray, batch_size: int, pad_id: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """The batches ``compose`` runs, shortest prefixes first (little padding): per batch,
    its rows of ``items`` ([n, 2] sentence, position), the token ids [b, width], the
    mask of real tokens [b, width] and each prefix's last position [b]. Each sentence is
    cut after its prefix and right-padded with ``pad_id``."""
    order = np.argsort(items[:, 1], kind="stable")
    for a in range(0, items.shape[0], batch_size):
        rows = order[a : a + batch_size]
        sentences, positions = items[rows, 0], items[rows, 1]
        ids, present, _ = store.batch(sentences, pad_id)
        width = int(positions.max()) + 1
        present = present[:, :width] & (np.arange(width)[None, :] <= positions[:, None])
        ids = np.where(present, ids[:, :width], pad_id)
        yield rows, ids, present, positions


@contextlib.contextmanager
def _captured(
    loaded: LoadedModel, layer_modules: list[nn.Module], last: torch.Tensor
) -> Iterator[dict[str, list[torch.Tensor]]]:
    """While the ``with`` block runs a forward: per layer, at each prefix's last token
    ``last`` [b], m (the down projection's input), the FFN's output and the layer's
    output, in float32. Hooks are global state: removed on leaving."""
    n_layers = loaded.n_layers
    captured = {k: [torch.empty(0)] * n_layers for k in ("m", "ffn", "out")}
    rows = torch.arange(last.shape[0], device=last.device)

    def at_last(t: torch.Tensor) -> torch.Tensor:
        if t.dim() == 2:  # OPT flattens [batch*pos, d] around its FFN
            t = t.reshape(last.shape[0], -1, t.shape[-1])
        return t[rows, last].float()

    handles = []
    try:
        for layer in range(n_layers):
            down = loaded.down_module(layer)

            def pre(_m: Any, args: tuple[Any, ...], _layer: int = layer) -> None:
                captured["m"][_layer] = at_last(args[0])  # [b, d_ff]

            def post(_m: Any, _a: Any, output: torch.Tensor, _layer: int = layer) -> None:
                captured["ffn"][_layer] = at_last(output)  # [b, d]

            def layer_out(_m: Any, _a: Any, output: Any, _layer: int = layer) -> None:
                hidden = output[0] if isinstance(output, tuple) else output
                captured["out"][_layer] = at_last(hidden)  # [b, d]

            handles += [
                down.register_forward_pre_hook(pre),
                down.register_forward_hook(post),
                layer_modules[layer].register_forward_hook(layer_out),
            ]
        yield captured
    finally:
        for handle in handles:
            handle.remove()


def compose(
    loaded: LoadedModel,
    store: CorpusStore,
    prefixes: Sequence[tuple[int, int]],
    *,
    batch_size: int = 32,
    memory_tops: dict[str, np.ndarray] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """The §5 figures of every layer over ``prefixes`` ((sentence, position) in
    ``store``), as ``report.json``'s ``composition`` holds them (without its
    ``prefix_set``, which the caller names). ``memory_tops``: each memory's own top
    token per variant ([n_layers, d_ff] ints, ``memory_tops(loaded)``), where the caller
    has them (mining's merge computes them); None computes them here (a minute or two
    for SmolLM2 on 2 cores). ``progress(done, total)`` is called after each batch, outside
    the forward's hooks."""
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
    variants = variants_of(loaded)
    n_layers, n = loaded.n_layers, items.shape[0]
    device = loaded.device
    vocab = int(loaded.output_embeddings().shape[0])
    # Each memory's own prediction, argmax of v_i·E (§4's, for every key of the layer).
    tops = {v: t.to(device) for v, t in _checked_tops(loaded, memory_tops, variants, vocab).items()}
    stop = _stop_token_ids(loaded, vocab)
    gated = loaded.arch.gated
    layer_modules = [loaded.model.get_submodule(p) for p in _layer_paths(loaded)]
    values = torch.stack([loaded.values(layer).detach().float() for layer in range(n_layers)])
    project = _Projector(loaded, variants)
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
    pad_id = loaded.tokenizer.pad_token_id or 0
    done = 0
    with torch.inference_mode():
        for rows, ids, present, positions in prefix_batches(store, items, batch_size, pad_id):
            last = torch.from_numpy(positions).to(device)
            with _captured(loaded, layer_modules, last) as captured:
                hidden = loaded.body(
                    input_ids=torch.from_numpy(ids).to(device),
                    attention_mask=torch.from_numpy(present.astype(np.int64)).to(device),
                    use_cache=False,
                ).last_hidden_state
            # The model's prediction: its last hidden state (final norm applied by the
            # body) on E, through project_out where it has one.
            at_end = hidden[torch.arange(hidden.shape[0], device=device), last].float()
            predicted = loaded.value_logits(at_end).argmax(dim=1)  # [b]
            final[rows] = predicted.cpu().numpy()
            m = torch.stack(captured["m"])  # [L, b, d_ff]
            ffn = torch.stack(captured["ffn"])  # [L, b, d]
            out = torch.stack(captured["out"])  # [L, b, d]
            positive = m > 0  # [L, b, d_ff]
            active[:, rows] = positive.float().mean(dim=2).cpu().numpy()
            if gated:
                size = m.abs()
                peak = size.amax(dim=2, keepdim=True)
                active_tenth[:, rows] = (size > TENTH * peak).float().mean(dim=2).cpu().numpy()
            r = out - ffn  # the residual before the FFN, [L, b, d]
            y = torch.bmm(m, values.to(m.device))  # Σ_i m_i v_i, [L, b, d]
            for v, t in project(r, y, out, predicted).items():
                # Does some active memory (m_i > 0) predict what y predicts?
                agree = ((tops[v][:, None, :] == t.top_y[:, :, None]) & positive).any(dim=2)
                for name, value in (
                    ("top_r", t.top_r),
                    ("top_y", t.top_y),
                    ("top_out", t.top_out),
                    ("agree", agree),
                    ("prob", t.prob),
                ):
                    got[v][name][:, rows] = value.cpu().numpy()
            done += rows.size
            if progress is not None:
                progress(done, n)

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
