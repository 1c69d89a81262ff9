"""Causal probes (mining/core/causal.py) against plain computations written here: the
model run example by example, its modules edited by hooks written in this file and named
by each family's own attributes; integrated gradients against autograd step by step and
against finite differences; and every bad input refused with its message."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM

from mining.core import MiningError, adapt
from mining.core.causal import (
    ablate_logprobs,
    ablation,
    attribute,
    dissociation,
    trace,
)
from mining.core.value_agreement import value_argmax
from tests.conftest import SMOLLM2_GROUP

from .conftest import make_tokenizer, model_fixture, tiny_loaded

FAMILIES = ["gpt2", "gpt_neox", "opt", "llama"]
PROMPT = "alpha beta gamma delta epsilon zeta"
SUBJECT = "gamma delta"
SHARPEN = 6.0


def sharp(family, n_layers=None):
    """A tiny model whose predictions are not flat: its weight matrices × 6. Random
    weights at std 0.02 predict nearly uniformly (p ≈ 1/54), and every effect would be too
    small to tell apart from rounding."""
    if n_layers is None:
        loaded = tiny_loaded(family)
    else:
        fixture = model_fixture(family)
        config = AutoConfig.for_model(
            fixture["model_type"], **{**fixture["config"], "num_hidden_layers": n_layers}
        )
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_config(config).eval()
        loaded = adapt(model, make_tokenizer(family), f"tiny-{family}-{n_layers}")
    with torch.no_grad():
        for p in loaded.model.parameters():
            if p.dim() >= 2:
                p.mul_(SHARPEN)
    return loaded


def _modules(family, model):
    """(decoder layers, their attention modules, their down projections, the input
    embedding), by each family's own attribute names."""
    if family == "gpt2":
        layers = list(model.transformer.h)
        return (
            layers,
            [b.attn for b in layers],
            [b.mlp.c_proj for b in layers],
            model.transformer.wte,
        )
    if family == "gpt_neox":
        layers = list(model.gpt_neox.layers)
        return (
            layers,
            [b.attention for b in layers],
            [b.mlp.dense_4h_to_h for b in layers],
            model.gpt_neox.embed_in,
        )
    if family == "opt":
        layers = list(model.model.decoder.layers)
        return (
            layers,
            [b.self_attn for b in layers],
            [b.fc2 for b in layers],
            model.model.decoder.embed_tokens,
        )
    layers = list(model.model.layers)
    return (
        layers,
        [b.self_attn for b in layers],
        [b.mlp.down_proj for b in layers],
        (model.model.embed_tokens),
    )


def _value_rows(down):
    # nn.Linear keeps [d_model, d_ff]; GPT-2's Conv1D keeps [d_ff, d_model], values as rows
    return down.weight.t() if isinstance(down, torch.nn.Linear) else down.weight


class _Hooks:
    def __init__(self):
        self.handles = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()

    def pre(self, module, fn):
        self.handles.append(module.register_forward_pre_hook(fn))

    def post(self, module, fn):
        self.handles.append(module.register_forward_hook(fn))


def _ids(loaded, text):
    return loaded.tokenizer(text)["input_ids"]


def _top_token(loaded, ids):
    with torch.no_grad():
        return int(loaded.model(input_ids=torch.tensor([ids])).logits[0, -1].argmax())


# Ablation ----------------------------------------------------------------------------


def plain_logp(family, loaded, prefix, targets, keys, scale):
    """log p(targets) at the prefix's last token, the model run on the prefix alone with
    the coefficients of ``keys`` × scale at every position."""
    _, _, downs, _ = _modules(family, loaded.model)
    with _Hooks() as hooks, torch.no_grad():
        for layer in {k[0] for k in keys}:
            factor = torch.ones(loaded.d_ff)
            factor[[k[1] for k in keys if k[0] == layer]] = scale
            # [pos, d_ff] (OPT) or [1, pos, d_ff]: the factor broadcasts over both
            hooks.pre(downs[layer], lambda _m, a, f=factor: (a[0] * f,))
        logits = loaded.model(input_ids=torch.tensor([prefix])).logits[0, -1]
    return torch.log_softmax(logits.double(), dim=-1)[targets].numpy()


EXAMPLES = [
    ([6, 7, 8, 9, 10], 11),
    ([12, 13], 14),
    ([15, 16, 17, 18, 19, 20, 21], 22),
    ([23], 24),
    ([25, 26, 27], 28),
]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("scale", [0.0, 0.5])
def test_ablated_logprobs_equal_a_forward_with_the_coefficients_edited(family, scale):
    loaded = sharp(family)
    keys = [(0, 1), (1, 3), (1, 7)]
    extra = [[30, 31], [32, 33], [34, 35], [36, 37], [38, 39]]
    got = ablate_logprobs(loaded, EXAMPLES, keys, scale=scale, targets=extra, batch_size=2)
    for n, (prefix, target) in enumerate(EXAMPLES):
        wanted = [target, *extra[n]]
        clean = plain_logp(family, loaded, prefix, wanted, keys, 1.0)
        ablated = plain_logp(family, loaded, prefix, wanted, keys, scale)
        assert got["clean"][n] == pytest.approx(clean[0], abs=2e-5)
        assert got["ablated"][n] == pytest.approx(ablated[0], abs=2e-5)
        assert got["targets_clean"][n] == pytest.approx(clean[1:], abs=2e-5)
        assert got["targets_ablated"][n] == pytest.approx(ablated[1:], abs=2e-5)
    assert got["ablated"] != pytest.approx(got["clean"], abs=1e-4)  # the edit did something


def test_the_control_keys_are_random_keys_of_the_same_layers_and_fixed_by_the_seed():
    loaded = sharp("gpt2")
    keys = [(0, 1), (0, 2), (0, 3), (1, 5)]
    sets = {"random": EXAMPLES[:2]}
    first = ablation(loaded, sets, keys, seed=3, replicates=50)
    control = first["control_keys"]
    assert sorted(c[0] for c in control) == [1, 1, 1, 2]  # same count per layer (1-based)
    assert not {tuple(c) for c in control} & {(a + 1, b) for a, b in keys}
    assert first == ablation(loaded, sets, keys, seed=3, replicates=50)  # deterministic
    assert ablation(loaded, sets, keys, seed=4, replicates=50)["control_keys"] != control


def _interval_holds(ci, mean):
    assert ci["mean"] == pytest.approx(mean, abs=2e-5)
    assert ci["low"] - 1e-9 <= ci["mean"] <= ci["high"] + 1e-9


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_ablation_means_are_the_plain_changes_overall_per_layer_and_per_key(family):
    loaded = sharp(family)
    keys = [(0, 4), (1, 2), (1, 9)]
    tags = [(0, 4), (1, 2), (1, 2), (1, 9), None]
    own = [(p, t, k) for (p, t), k in zip(EXAMPLES, tags, strict=True)]
    got = ablation(loaded, {"own": own}, keys, scale=0.0, seed=1, replicates=200)
    control = [(c[0] - 1, c[1]) for c in got["control_keys"]]
    assert got["keys"] == [[1, 4], [2, 2], [2, 9]]
    tops = {k: int(value_argmax(loaded, k[0], final_norm=False)[k[1]]) for k in keys}
    deltas, control_deltas, top_deltas, top_control = [], [], [], []
    for (prefix, target), tag in zip(EXAMPLES, tags, strict=True):
        wanted = [target, tops[tag] if tag else target]
        clean = plain_logp(family, loaded, prefix, wanted, keys, 1.0)
        ablated = plain_logp(family, loaded, prefix, wanted, keys, 0.0)
        controlled = plain_logp(family, loaded, prefix, wanted, control, 0.0)
        deltas.append(ablated[0] - clean[0])
        control_deltas.append(controlled[0] - clean[0])
        top_deltas.append(ablated[1] - clean[1])
        top_control.append(controlled[1] - clean[1])
    row = got["sets"]["own"]
    assert row["n"] == 5
    _interval_holds(row["overall"]["ablated"], np.mean(deltas))
    _interval_holds(row["overall"]["control"], np.mean(control_deltas))
    layers = {r["layer"]: r for r in row["layers"]}
    assert layers[1]["n"] == 1 and layers[2]["n"] == 3
    _interval_holds(layers[2]["ablated"], np.mean(deltas[1:4]))
    _interval_holds(layers[2]["control"], np.mean(control_deltas[1:4]))
    by_key = {tuple(r["key"]): r for r in row["keys"]}
    assert by_key[(2, 2)]["n"] == 2
    _interval_holds(by_key[(2, 2)]["ablated"], np.mean(deltas[1:3]))
    _interval_holds(by_key[(2, 9)]["ablated"], deltas[3])
    assert by_key[(2, 2)]["value_top"]["token"] == tops[(1, 2)]
    _interval_holds(by_key[(2, 2)]["value_top"]["ablated"], np.mean(top_deltas[1:3]))
    _interval_holds(by_key[(2, 2)]["value_top"]["control"], np.mean(top_control[1:3]))
    _interval_holds(by_key[(1, 4)]["value_top"]["ablated"], top_deltas[0])


def test_a_key_without_tagged_examples_has_no_interval():
    loaded = sharp("gpt2")
    got = ablation(loaded, {"random": EXAMPLES[:3]}, [(0, 4)], replicates=20)
    (key,) = got["sets"]["random"]["keys"]
    assert key["n"] == 0 and key["ablated"] is None and key["value_top"]["control"] is None
    assert got["sets"]["random"]["overall"]["ablated"] is not None


# Double dissociation -----------------------------------------------------------------


def test_the_dissociation_table_is_four_direct_runs():
    family = "opt"
    loaded = sharp(family)
    group_a, group_b = [(0, 3), (1, 5)], [(1, 8), (1, 11)]
    set_p, set_q = EXAMPLES[:3], EXAMPLES[2:]
    got = dissociation(loaded, group_a, group_b, set_p, set_q, seed=2, replicates=300)

    def loss_change(group, examples):
        return np.mean(
            [
                plain_logp(family, loaded, p, [t], group, 1.0)[0]
                - plain_logp(family, loaded, p, [t], group, 0.0)[0]
                for p, t in examples
            ]
        )

    cells = {
        (g, s): loss_change(group, examples)
        for g, group in (("a", group_a), ("b", group_b))
        for s, examples in (("p", set_p), ("q", set_q))
    }
    for (g, s), value in cells.items():
        _interval_holds(got["table"][g][s], value)
    interaction = (cells["a", "p"] - cells["a", "q"]) - (cells["b", "p"] - cells["b", "q"])
    _interval_holds(got["interaction"], interaction)
    assert got["interaction"]["sign"] == int(np.sign(interaction))
    assert got["a_p_minus_a_q"]["mean"] == pytest.approx(
        cells["a", "p"] - cells["a", "q"], abs=2e-5
    )
    assert got["groups"] == {"a": [[1, 3], [2, 5]], "b": [[2, 8], [2, 11]]}
    assert got == dissociation(loaded, group_a, group_b, set_p, set_q, seed=2, replicates=300)


# Causal tracing ----------------------------------------------------------------------


def plain_trace_setup(family, loaded, ids, span, samples, noise, seed):
    """The clean run's states and the corrupted embeddings' noise, as trace's docstring
    defines them."""
    layers, attns, downs, embed = _modules(family, loaded.model)
    sigma = float(embed.weight.detach().float().std())
    generator = torch.Generator().manual_seed(seed)
    z = torch.randn((samples, span[1] - span[0], embed.weight.shape[1]), generator=generator)
    clean = {"hidden": {}, "mlp": {}, "attn": {}}
    n_tok = len(ids)
    with _Hooks() as hooks, torch.no_grad():
        for j in range(len(layers)):
            hooks.post(
                layers[j],
                lambda _m, _a, o, j=j: clean["hidden"].__setitem__(
                    j, (o[0] if isinstance(o, tuple) else o)[0]
                ),
            )
            hooks.post(
                downs[j],
                lambda _m, _a, o, j=j: clean["mlp"].__setitem__(j, o.reshape(n_tok, -1)),
            )
            hooks.post(attns[j], lambda _m, _a, o, j=j: clean["attn"].__setitem__(j, o[0][0]))
        loaded.model(input_ids=torch.tensor([ids]))
    modules = {"hidden": layers, "mlp": downs, "attn": attns}
    return modules, embed, noise * sigma * z, clean


def plain_p(loaded, ids, span, answer, embed, noise, restores):
    """p(answer) at the last token averaged over the noise samples, the subject's input
    embeddings + noise, and each (module, position, clean value) of ``restores`` put back."""
    samples, n_tok = noise.shape[0], len(ids)

    def corrupt(_m, _a, out):
        out = out.clone()
        out[:, span[0] : span[1]] += noise
        return out

    def restore(position, value):
        def hook(_m, _a, out):
            first = out[0] if isinstance(out, tuple) else out
            edited = first.clone().reshape(samples, n_tok, -1)  # OPT's fc2: [S*T, d]
            edited[:, position] = value
            edited = edited.reshape(first.shape)
            return (edited, *out[1:]) if isinstance(out, tuple) else edited

        return hook

    with _Hooks() as hooks, torch.no_grad():
        hooks.post(embed, corrupt)
        for module, position, value in restores:
            hooks.post(module, restore(position, value))
        logits = loaded.model(input_ids=torch.tensor([ids] * samples)).logits[:, -1]
    return float(torch.softmax(logits.double(), dim=-1)[:, answer].mean())


def _window(layer, window, n_layers):
    # ROME's code: range(max(0, l - w // 2), min(L, l - (-w // 2)))
    return range(max(0, layer - window // 2), min(n_layers, layer - (-window // 2)))


@pytest.mark.parametrize(
    ("family", "n_layers", "window"),
    [("gpt2", None, 10), ("gpt_neox", None, 1), ("opt", None, 10), ("llama", 4, 3)],
)
def test_every_restored_site_equals_that_configuration_run_alone(family, n_layers, window):
    loaded = sharp(family, n_layers)
    ids = _ids(loaded, PROMPT)
    answer = _top_token(loaded, ids)
    answer_text = loaded.tokenizer.decode([answer])
    samples, noise, seed = 3, 3.0, 5
    got = trace(loaded, PROMPT, SUBJECT, answer_text, noise, samples, window, seed)
    span = got["subject_span"]
    special = 1 if family in ("opt", "llama") else 0  # </s> or <s> first
    assert span == [2 + special, 4 + special]
    assert got["tokens"][span[0]] == "gamma" and got["answer_id"] == answer
    modules, embed, z, clean = plain_trace_setup(family, loaded, ids, span, samples, noise, seed)
    p_corrupted = plain_p(loaded, ids, span, answer, embed, z, [])
    assert got["p_corrupted"] == pytest.approx(p_corrupted, abs=1e-6)
    assert got["p_clean"] == pytest.approx(plain_p(loaded, ids, span, answer, embed, 0 * z, []))
    n_tok, n_layers = len(ids), loaded.n_layers
    for kind in ("hidden", "mlp", "attn"):
        effects = np.array(got["effects"][kind])
        assert effects.shape == (n_layers, n_tok)
        assert not effects[:, : span[0]].any()  # before the subject nothing is corrupted
        for layer in range(n_layers):
            sites = [layer] if kind == "hidden" else _window(layer, window, n_layers)
            for t in range(span[0], n_tok):
                restores = [(modules[kind][j], t, clean[kind][j][t]) for j in sites]
                expected = plain_p(loaded, ids, span, answer, embed, z, restores) - p_corrupted
                assert effects[layer, t] == pytest.approx(expected, abs=1e-6), (kind, layer, t)
    assert np.abs(np.array(got["effects"]["mlp"])).max() > 1e-4  # effects well above rounding
    # The final hidden state at the last token restored: the clean prediction back.
    assert got["effects"]["hidden"][-1][-1] == pytest.approx(
        got["p_clean"] - got["p_corrupted"], abs=1e-6
    )


@pytest.mark.parametrize("family", ["gpt2", "opt"])
def test_the_keys_at_the_peak_mlp_site_are_ranked_by_coefficient_times_gradient(family):
    loaded = sharp(family)
    ids = _ids(loaded, PROMPT)
    answer = _top_token(loaded, ids)
    got = trace(loaded, PROMPT, SUBJECT, loaded.tokenizer.decode([answer]), samples=2)
    position = got["last_subject"]
    layer = int(np.argmax(np.array(got["effects"]["mlp"])[:, position]))
    assert got["keys"]["layer"] == layer + 1 and got["keys"]["token"] == position
    _, _, downs, _ = _modules(family, loaded.model)
    seen = {}
    with _Hooks() as hooks:
        hooks.pre(downs[layer], lambda _m, a: seen.__setitem__("m", a[0]))
        hooks.post(downs[layer], lambda _m, _a, o: seen.__setitem__("y", o))
        logits = loaded.model(input_ids=torch.tensor([ids])).logits[0, -1]
        logp = torch.log_softmax(logits, dim=-1)[answer]
        (grad,) = torch.autograd.grad(logp, seen["y"])
    n_tok = len(ids)
    direction = grad.reshape(n_tok, -1)[position]
    m = seen["m"].reshape(n_tok, -1)[position].detach()
    scores = m * (_value_rows(downs[layer]).detach() @ direction)
    top = torch.topk(scores, 20)
    listed = got["keys"]["top"]
    assert [k["index"] for k in listed] == top.indices.tolist()
    assert [k["score"] for k in listed] == pytest.approx(top.values.tolist(), rel=1e-4, abs=1e-7)
    assert [k["m"] for k in listed] == pytest.approx(m[top.indices].tolist(), abs=1e-6)
    assert {k["layer"] for k in listed} == {layer + 1}


def test_tracing_is_fixed_by_its_seed():
    loaded = sharp("llama")
    answer = loaded.tokenizer.decode([_top_token(loaded, _ids(loaded, PROMPT))])
    first = trace(loaded, PROMPT, SUBJECT, answer, samples=2, seed=7)
    assert first == trace(loaded, PROMPT, SUBJECT, answer, samples=2, seed=7)
    assert first["effects"] != trace(loaded, PROMPT, SUBJECT, answer, samples=2, seed=8)["effects"]


# Attribution -------------------------------------------------------------------------


def plain_p_with(family, loaded, ids, answer, layer, coefficients):
    """p(answer) with ``layer``'s coefficients at the last token set to ``coefficients``."""
    _, _, downs, _ = _modules(family, loaded.model)

    def pre(_m, a):
        m = a[0].clone()
        m.reshape(len(ids), -1)[-1] = coefficients  # [1, pos, d_ff] or OPT's [pos, d_ff]
        return (m,)

    with _Hooks() as hooks:
        hooks.pre(downs[layer], pre)
        logits = loaded.model(input_ids=torch.tensor([ids])).logits[0, -1]
    return torch.softmax(logits, dim=-1)[answer]


def _last_coefficients(family, loaded, ids, layer):
    _, _, downs, _ = _modules(family, loaded.model)
    seen = {}
    with _Hooks() as hooks, torch.no_grad():
        hooks.pre(downs[layer], lambda _m, a: seen.__setitem__("m", a[0]))
        loaded.model(input_ids=torch.tensor([ids]))
    return seen["m"].reshape(len(ids), -1)[-1].clone()


def plain_ig(family, loaded, ids, answer, layer, steps):
    """Integrated gradients of ``layer``'s coefficients at the last token, step by step."""
    m = _last_coefficients(family, loaded, ids, layer)
    total = torch.zeros_like(m)
    for k in range(1, steps + 1):
        x = (k / steps * m).requires_grad_(True)
        (g,) = torch.autograd.grad(plain_p_with(family, loaded, ids, answer, layer, x), x)
        total += g
    return (m * total / steps).detach().double().numpy()


@pytest.mark.parametrize("family", FAMILIES)
def test_attributions_are_integrated_gradients_step_by_step(family):
    loaded = sharp(family)
    prompt = "red green blue cat dog"
    ids = _ids(loaded, prompt)
    answer = _top_token(loaded, ids)
    got = attribute(loaded, [prompt], loaded.tokenizer.decode([answer]), steps=5, threshold=0.2)
    plain = np.stack([plain_ig(family, loaded, ids, answer, j, 5) for j in range(2)])
    (row,) = got["prompts"]
    flat = plain.reshape(-1)
    top = np.argsort(-flat, kind="stable")[:20]
    assert [(t["layer"] - 1, t["index"]) for t in row["top"]] == [
        (i // loaded.d_ff, i % loaded.d_ff) for i in top
    ]
    assert [t["attribution"] for t in row["top"]] == pytest.approx(flat[top], rel=1e-4, abs=1e-8)
    assert row["max_attribution"] == pytest.approx(flat.max(), rel=1e-4)
    kept = np.argwhere(plain > 0.2 * plain.max())
    assert row["kept"] == [[int(a) + 1, int(b)] for a, b in kept]
    assert got["selected"] == row["kept"]  # one prompt: all it kept


def test_attributions_agree_with_finite_differences():
    # GPT-2 in float64: finite differences need it, and Llama's RMSNorm computes in float32
    family = "gpt2"
    loaded = sharp(family)
    loaded.model.double()
    prompt = "red green blue cat dog"
    ids = _ids(loaded, prompt)
    answer = _top_token(loaded, ids)
    steps, layer, h = 4, 1, 1e-5
    got = attribute(loaded, [prompt], loaded.tokenizer.decode([answer]), steps=steps)
    m = _last_coefficients(family, loaded, ids, layer)
    checked = [t for t in got["prompts"][0]["top"] if t["layer"] == layer + 1][:3]
    assert checked
    with torch.no_grad():
        for entry in checked:
            i = entry["index"]
            slope = 0.0
            for k in range(1, steps + 1):
                x = k / steps * m
                up, down = x.clone(), x.clone()
                up[i] += h
                down[i] -= h
                f_up = plain_p_with(family, loaded, ids, answer, layer, up)
                f_down = plain_p_with(family, loaded, ids, answer, layer, down)
                slope += float(f_up - f_down) / (2 * h)
            assert entry["attribution"] == pytest.approx(float(m[i]) * slope / steps, rel=1e-6)


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_a_layers_attributions_sum_to_the_change_from_the_baseline(family):
    # The right Riemann sum misses (F'(1) - F'(0)) / (2 · steps). Along this path p first
    # rises then falls back near its start (GPT-2's layer 1: 0.0991 → 0.1048 → 0.0982), so
    # the net change is small beside that error: 200 steps are 12% off there, 4,000 within 1%.
    loaded = sharp(family)
    prompt = "red green blue cat dog"
    ids = _ids(loaded, prompt)
    answer = _top_token(loaded, ids)
    got = attribute(loaded, [prompt], loaded.tokenizer.decode([answer]), steps=4000)
    with torch.no_grad():
        logits = loaded.model(input_ids=torch.tensor([ids])).logits[0, -1]
    p_clean = float(torch.softmax(logits, dim=-1)[answer])
    assert got["prompts"][0]["p"] == pytest.approx(p_clean, rel=1e-5)
    for row in got["prompts"][0]["completeness"]:
        layer = row["layer"] - 1
        zero = torch.zeros(loaded.d_ff)
        with torch.no_grad():
            p_zero = float(plain_p_with(family, loaded, ids, answer, layer, zero))
        assert row["f_full"] == pytest.approx(p_clean, rel=1e-5)
        assert row["f_baseline"] == pytest.approx(p_zero, rel=1e-5)
        change = row["f_full"] - row["f_baseline"]
        assert abs(change) > 1e-4
        assert row["sum"] == pytest.approx(change, rel=0.01)


def test_selected_keys_are_suppressed_and_amplified_beside_random_ones():
    family = "gpt_neox"
    loaded = sharp(family)
    prompts = ["red green blue cat", "red green blue dog"]
    answer = "fish"
    answer_id = _ids(loaded, "fish")[0]
    got = attribute(loaded, prompts, answer, steps=5, threshold=0.3, share=1.0, seed=4)
    kept = [{tuple(k) for k in row["kept"]} for row in got["prompts"]]
    assert {tuple(k) for k in got["selected"]} == kept[0] & kept[1]  # kept by every prompt
    assert got["selected"]
    selected = [(a - 1, b) for a, b in got["selected"]]
    control = [(a - 1, b) for a, b in got["control_keys"]]
    assert sorted(a for a, _ in control) == sorted(a for a, _ in selected)
    assert not set(control) & set(selected)

    def p_scaled(ids, keys, scale):
        _, _, downs, _ = _modules(family, loaded.model)

        def pre(layer):
            def hook(_m, a):
                m = a[0].clone()
                last = m.reshape(len(ids), -1)[-1]
                last[[k for j, k in keys if j == layer]] *= scale
                return (m,)

            return hook

        with _Hooks() as hooks, torch.no_grad():
            for layer in {j for j, _ in keys}:
                hooks.pre(downs[layer], pre(layer))
            logits = loaded.model(input_ids=torch.tensor([ids])).logits[0, -1]
        return float(torch.softmax(logits.double(), dim=-1)[answer_id])

    for what, scale in (("suppress", 0.0), ("amplify", 2.0)):
        for group, keys in (("selected", selected), ("control", control)):
            changes = []
            for prompt in prompts:
                ids = _ids(loaded, prompt)
                base = p_scaled(ids, keys, 1.0)
                changes.append((p_scaled(ids, keys, scale) - base) / base)
            assert got["effects"][what][group] == pytest.approx(np.mean(changes), abs=1e-5)
    assert got == attribute(loaded, prompts, answer, steps=5, threshold=0.3, share=1.0, seed=4)


def test_without_room_for_a_random_group_the_attribution_keeps_its_result():
    # threshold 0 keeps every key with a positive attribution: 26 of layer 1's 48 here,
    # and no random group of 26 others is left in that layer
    loaded = sharp("gpt2")
    got = attribute(loaded, ["red green blue cat dog"], "fish", steps=5, threshold=0.0)
    assert "too few are left for a control group" in got["control_note"]
    assert got["control_keys"] == [] and got["effects"]["suppress"]["control"] is None
    assert got["effects"]["suppress"]["selected"] < 0


# Refusals ----------------------------------------------------------------------------


def test_a_prompt_longer_than_the_context_is_refused():
    loaded = tiny_loaded("gpt2")  # n_positions 64
    long = " ".join(["alpha"] * 70)
    with pytest.raises(MiningError, match=r"is 70 tokens, longer than the context of model "):
        trace(loaded, long, "alpha", "beta")
    with pytest.raises(MiningError, match=r"\(64 tokens\)"):
        attribute(loaded, [long], "beta")
    with pytest.raises(MiningError, match=r"example 0: the prefix is 70 tokens, longer than"):
        ablate_logprobs(loaded, [([6] * 70, 7)], [(0, 1)])


def test_an_answer_of_several_tokens_is_refused_naming_them():
    loaded = tiny_loaded("llama")
    with pytest.raises(MiningError, match=r"'delta epsilon' is 2 tokens after the prompt .*delta"):
        trace(loaded, PROMPT, SUBJECT, "delta epsilon")
    with pytest.raises(MiningError, match=r"is 2 tokens after the prompt"):
        attribute(loaded, [PROMPT], "delta epsilon")


def test_a_subject_not_in_the_prompt_is_refused():
    loaded = tiny_loaded("gpt2")
    with pytest.raises(MiningError, match=r"the subject 'omega' is not in the prompt"):
        trace(loaded, PROMPT, "omega", "eta")


def test_an_empty_group_is_refused():
    loaded = tiny_loaded("gpt2")
    with pytest.raises(MiningError, match=r"the ablated group has no key"):
        ablation(loaded, {"own": EXAMPLES}, [])
    with pytest.raises(MiningError, match=r"group B has no key"):
        dissociation(loaded, [(0, 1)], [], EXAMPLES, EXAMPLES)
    with pytest.raises(MiningError, match=r"prefix set 'own' is empty"):
        ablation(loaded, {"own": []}, [(0, 1)])


def test_a_key_out_of_range_is_refused():
    loaded = tiny_loaded("gpt2")  # 2 layers, d_ff 48
    with pytest.raises(MiningError, match=r"key \(0, 48\) has index 48 out of range: d_ff is 48"):
        ablate_logprobs(loaded, EXAMPLES, [(0, 48)])
    with pytest.raises(MiningError, match=r"key \(2, 0\) has layer 2 out of range"):
        ablation(loaded, {"own": EXAMPLES}, [(2, 0)])
    with pytest.raises(MiningError, match=r"layer 2 is out of range: the model has layers 0..1"):
        attribute(loaded, [PROMPT], "eta", layers=[0, 2])
    with pytest.raises(MiningError, match=r"tagged with key \(1, 1\), which is not in the ablated"):
        ablation(loaded, {"own": [([6, 7], 8, (1, 1))]}, [(0, 1)])


def test_an_encoder_is_refused():
    loaded = tiny_loaded("bert")
    for call in (
        lambda: trace(loaded, PROMPT, SUBJECT, "eta"),
        lambda: ablation(loaded, {"own": EXAMPLES}, [(0, 1)]),
        lambda: ablate_logprobs(loaded, EXAMPLES, [(0, 1)]),
        lambda: dissociation(loaded, [(0, 1)], [(1, 1)], EXAMPLES, EXAMPLES),
        lambda: attribute(loaded, [PROMPT], "eta"),
    ):
        with pytest.raises(MiningError, match=r"is an encoder: it predicts no next token"):
            call()


# SmolLM2 -----------------------------------------------------------------------------


@pytest.mark.slow
@SMOLLM2_GROUP
def test_smollm2_traces_the_capital_of_france(smollm2):
    loaded = smollm2
    got = trace(loaded, "The capital of France is", "France", "Paris", samples=2)
    assert got["tokens"] == ["The", " capital", " of", " France", " is"]
    assert got["answer_token"] == " Paris" and got["subject_span"] == [3, 4]
    assert got["p_clean"] > 0.2 > got["p_corrupted"]
    ids = _ids(loaded, "The capital of France is")
    modules, embed, z, clean = plain_trace_setup(
        "llama", loaded, ids, (3, 4), samples=2, noise=3.0, seed=0
    )
    p_corrupted = plain_p(loaded, ids, (3, 4), got["answer_id"], embed, z, [])
    restored = plain_p(
        loaded,
        ids,
        (3, 4),
        got["answer_id"],
        embed,
        z,
        [(modules["hidden"][10], 3, clean["hidden"][10][3])],
    )
    # 30 float32 layers, batched with a cache or run plainly: they round differently
    assert got["effects"]["hidden"][10][3] == pytest.approx(restored - p_corrupted, rel=1e-4)
