"""The streaming miner against a brute force that keeps every activation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from mining.core import (
    MineConfig,
    MiningError,
    MiningStopped,
    Partial,
    finalize,
    merge_partials,
    mine_range,
    resolve_keys,
    sample_keys,
    shard_ranges,
)
from mining.core.miner import HIST_EDGES, SENTINEL, pack_keys, unpack_sentences, unpack_values

from .conftest import (
    FAMILIES,
    NON_GATED,
    brute_force_topk,
    capture_all,
    every_fourth_position,
    random_sentences,
    tiny_loaded,
)

# (family, coefficient): every family ranks "post"; the non-gated ones also "pre".
CASES = [(f, "post") for f in FAMILIES] + [(f, "pre") for f in NON_GATED]


def entries(partial: Partial, layer: int, key: int) -> list[tuple[float, int, int]]:
    row = partial.keys[layer, key]
    keep = row != SENTINEL
    return list(
        zip(
            unpack_values(row[keep]).tolist(),
            unpack_sentences(row[keep]).tolist(),
            partial.positions[layer, key][keep].tolist(),
            strict=True,
        )
    )


def small_cfg(**kwargs) -> MineConfig:  # type: ignore[no-untyped-def]
    defaults = {
        "model": "tiny",
        "corpus": "tiny",
        "keep_k": 8,
        "top_k": 5,
        "batch_size": 4,
        "sort_window": 2,
        "checkpoint_every": 3,
    }
    defaults.update(kwargs)
    return MineConfig(**defaults)


def assert_partials_equal(a: Partial, b: Partial) -> None:
    for name in Partial.TENSORS:
        assert torch.equal(getattr(a, name), getattr(b, name)), name


@pytest.mark.parametrize(("family", "coefficient"), CASES)
def test_top_k_of_every_key_equals_brute_force(family, coefficient, store_factory, miner_path):
    loaded = tiny_loaded(family)
    store = store_factory(loaded, random_sentences(150, seed=1))
    cfg = small_cfg(coefficient=coefficient)
    partial = mine_range(loaded, store, cfg, 0, len(store))
    expected = brute_force_topk(loaded, store, capture_all(loaded, store, cfg), cfg.keep_k)
    for layer in range(loaded.n_layers):
        for key in range(loaded.d_ff):
            assert entries(partial, layer, key) == expected[(layer, key)], (layer, key)


@pytest.mark.parametrize(("family", "coefficient"), CASES)
def test_statistics_equal_brute_force(family, coefficient, store_factory, miner_path):
    loaded = tiny_loaded(family)
    store = store_factory(loaded, random_sentences(60, seed=2))
    cfg = small_cfg(coefficient=coefficient)
    partial = mine_range(loaded, store, cfg, 0, len(store))
    acts = capture_all(loaded, store, cfg)
    for layer in range(loaded.n_layers):
        real = [acts[layer][s][~store.special(s)] for s in range(len(store))]
        flat = np.concatenate(real)  # [real positions, d_ff]
        assert int(partial.n_positions) == flat.shape[0]
        assert torch.equal(partial.n_positive[layer], torch.from_numpy((flat > 0).sum(0)))
        np.testing.assert_allclose(
            partial.mean()[layer].numpy(), flat.mean(0), rtol=1e-5, atol=1e-6
        )
        assert torch.equal(partial.max[layer], torch.from_numpy(flat.max(0)))
        # Per token: the keys above a tenth of the position's largest m (none there when
        # that is not positive), in float32, at every fourth position (sentence + t).
        counted = every_fourth_position(acts[layer], store)
        floor = np.maximum(np.float32(0.1) * counted.max(1), np.float32(0.0))  # [positions]
        above = counted > floor[:, None]
        assert int(partial.n_sparsity_positions) == counted.shape[0] > 0
        assert int(partial.n_above_tenth[layer]) == int(above.sum())
        assert float(partial.above_tenth()[layer]) == pytest.approx(above.mean())
        per_sentence_max = np.stack([r.max(0) for r in real])  # [sentences, d_ff]
        edges = np.asarray(HIST_EDGES, np.float32)
        bins = np.where(
            np.signbit(per_sentence_max),
            np.searchsorted(edges, per_sentence_max, "left"),  # (e, e'] below zero
            np.searchsorted(edges, per_sentence_max, "right"),  # [e, e') from zero up
        )
        for key in range(loaded.d_ff):
            counts = np.bincount(bins[:, key], minlength=len(HIST_EDGES) + 1)
            assert partial.hist[layer, key].tolist() == counts.tolist()


@pytest.mark.parametrize(
    ("family", "coefficient", "n_shards"),
    [(f, c, 5) for f, c in CASES] + [("gpt2", "post", 1), ("gpt2", "post", 2)],
)
def test_shards_merge_to_exactly_one_pass(family, coefficient, n_shards, store_factory, miner_path):
    loaded = tiny_loaded(family)
    store = store_factory(loaded, random_sentences(130, seed=3))
    cfg = small_cfg(coefficient=coefficient)
    whole = mine_range(loaded, store, cfg, 0, len(store))
    ranges = shard_ranges(len(store), n_shards, cfg)
    assert len(ranges) == n_shards and ranges[0][0] == 0 and ranges[-1][1] == len(store)
    parts = [mine_range(loaded, store, cfg, a, b) for a, b in ranges]
    assert_partials_equal(merge_partials(parts[::-1]), whole)  # any order


def test_merge_rejects_overlapping_or_incomplete_shards(store_factory):
    loaded = tiny_loaded("bert")
    store = store_factory(loaded, random_sentences(40, seed=3))
    cfg = small_cfg()
    part = mine_range(loaded, store, cfg, 0, 16)
    with pytest.raises(MiningError, match="overlapping"):
        merge_partials([part, part])


def test_unaligned_shard_is_refused(store_factory):
    loaded = tiny_loaded("bert")
    store = store_factory(loaded, random_sentences(40, seed=3))
    with pytest.raises(MiningError, match="aligned"):
        mine_range(loaded, store, small_cfg(), 3, 20)


def test_stopped_shard_resumes_from_its_checkpoint_to_the_same_result(
    store_factory, miner_path, tmp_path
):
    loaded = tiny_loaded("gpt2")
    store = store_factory(loaded, random_sentences(120, seed=4))
    cfg = small_cfg()
    whole = mine_range(loaded, store, cfg, 0, len(store))
    ckpt = tmp_path / "shard-0000.ckpt.pt"
    calls = []
    with pytest.raises(MiningStopped):
        mine_range(
            loaded,
            store,
            cfg,
            0,
            len(store),
            checkpoint_path=ckpt,
            should_stop=lambda: len(calls) >= 7,
            progress=lambda s, t: calls.append(s),
        )
    saved = Partial.load(ckpt)
    assert saved.meta["batches_done"] == 7 and not saved.complete
    resumed_progress = []
    resumed = mine_range(
        loaded,
        store,
        cfg,
        0,
        len(store),
        checkpoint_path=ckpt,
        progress=lambda s, t: resumed_progress.append(s),
    )
    assert resumed_progress[0] == calls[-1] + 4  # picked up after batch 7, not from 0
    assert resumed_progress[-1] == len(store)
    assert_partials_equal(resumed, whole)
    # A complete checkpoint is returned as is: a shard run twice leaves one result.
    again = mine_range(
        loaded,
        store,
        cfg,
        0,
        len(store),
        checkpoint_path=ckpt,
        progress=lambda s, t: pytest.fail("recomputed"),
    )
    assert_partials_equal(again, whole)


def test_partial_round_trips_through_a_file(store_factory, tmp_path):
    loaded = tiny_loaded("llama")
    store = store_factory(loaded, random_sentences(30, seed=5))
    partial = mine_range(loaded, store, small_cfg(), 0, len(store))
    partial.save(tmp_path / "p.pt")
    loaded_back = Partial.load(tmp_path / "p.pt")
    assert_partials_equal(loaded_back, partial)
    assert loaded_back.meta == partial.meta


def test_hundreds_of_sentences_with_one_first_token_keep_distinct_prefixes(
    store_factory, miner_path
):
    loaded = tiny_loaded("gpt2")
    with torch.no_grad():  # make position 0 ("alpha", same everywhere) win most keys
        loaded.model.transformer.wpe.weight[0] *= 8
    store = store_factory(loaded, random_sentences(300, seed=6, first="alpha"))
    cfg = small_cfg(keep_k=16, batch_size=8)
    partial = mine_range(loaded, store, cfg, 0, len(store))
    acts = capture_all(loaded, store, cfg)
    expected = brute_force_topk(loaded, store, acts, cfg.keep_k)
    undeduplicated = brute_force_topk(loaded, store, acts, cfg.keep_k, distinct=False)
    flooded = 0
    for layer in range(loaded.n_layers):
        for key in range(loaded.d_ff):
            got = entries(partial, layer, key)
            assert got == expected[(layer, key)]
            prefixes = [store.tokens(s)[: t + 1].tobytes() for _, s, t in got]
            assert len(set(prefixes)) == len(prefixes)
            raw = [t for _, _, t in undeduplicated[(layer, key)]]
            flooded += raw.count(0) >= 4
    # Without distinct prefixes these keys would show "alpha" four times or more.
    assert flooded >= 3  # measured: 6 of the 96 keys with this seed


@pytest.mark.parametrize("family", ["bert", "llama"])
def test_padding_and_special_tokens_are_never_triggers(family, store_factory, miner_path):
    loaded = tiny_loaded(family)
    with torch.no_grad():  # make [CLS]/[SEP]/<s> (ids 2, 3, 4) and [PAD] (0) loud
        emb = loaded.model.get_input_embeddings().weight
        emb[[0, 2, 3, 4]] *= 20
    store = store_factory(loaded, random_sentences(80, seed=7))
    cfg = small_cfg()
    partial = mine_range(loaded, store, cfg, 0, len(store))
    for layer in range(loaded.n_layers):
        for key in range(loaded.d_ff):
            for value, s, t in entries(partial, layer, key):
                assert t < store.lengths[s] and not store.special(s)[t]
                assert math.isfinite(value)
    keys = [(layer, i) for layer in range(loaded.n_layers) for i in range(loaded.d_ff)]
    for result in finalize(loaded, store, partial, keys, cfg.top_k):
        for ex in result.examples:
            assert ex.trigger_token not in ("[CLS]", "[SEP]", "<s>", "[PAD]")
            assert ex.prefix and ex.sentence.startswith(ex.prefix)


def test_position_zero_is_a_candidate_without_a_bos_token(store_factory, miner_path):
    loaded = tiny_loaded("gpt2")
    with torch.no_grad():
        loaded.model.transformer.wpe.weight[0] *= 8
    store = store_factory(loaded, random_sentences(50, seed=8))
    partial = mine_range(loaded, store, small_cfg(), 0, len(store))
    assert (partial.positions[partial.keys != SENTINEL] == 0).any()


def test_glu_coefficient_is_act_gate_times_up(store_factory):
    loaded = tiny_loaded("llama")
    store = store_factory(loaded, random_sentences(20, seed=9))
    sentences = np.arange(len(store))
    ids, present, _ = store.batch(sentences, 0)
    inputs, captured = {}, {}
    mlps = [layer.mlp for layer in loaded.model.model.layers]
    handles = [
        mlp.register_forward_pre_hook(lambda mod, args, i=i: inputs.__setitem__(i, args[0]))
        for i, mlp in enumerate(mlps)
    ]
    try:
        with (
            torch.inference_mode(),
            loaded.capture(lambda i, m: captured.__setitem__(i, m.clone())),
        ):
            loaded.forward(torch.from_numpy(ids), torch.from_numpy(present.astype(np.int64)))
    finally:
        for h in handles:
            h.remove()
    for i, mlp in enumerate(mlps):
        x = inputs[i]  # [batch, pos, d_model]
        with torch.inference_mode():
            by_hand = F.silu(x @ mlp.gate_proj.weight.T) * (x @ mlp.up_proj.weight.T)
        torch.testing.assert_close(captured[i], by_hand, rtol=1e-5, atol=1e-6)
    # and the miner's best coefficient of a key is that product's max over real tokens
    partial = mine_range(loaded, store, small_cfg(batch_size=32), 0, len(store))
    value, s, _t = entries(partial, 1, 3)[0]
    x = inputs[1][int(np.flatnonzero(sentences == s)[0])]
    mlp = mlps[1]
    with torch.inference_mode():
        column = F.silu(x @ mlp.gate_proj.weight[3]) * (x @ mlp.up_proj.weight[3])
    real = torch.from_numpy(~store.special(s))
    assert value == pytest.approx(float(column[: store.lengths[s]][real].max()), rel=1e-5)


def test_bfloat16_winners_are_rescored_in_float32(store_factory):
    bf16 = tiny_loaded("gpt2", seed=3)
    bf16.model.to(torch.bfloat16)
    fp32 = tiny_loaded("gpt2", seed=3)
    fp32.model.to(torch.bfloat16).float()  # the same (bf16-rounded) weights, in float32
    store = store_factory(fp32, random_sentences(100, seed=10))
    cfg16 = small_cfg(dtype="bfloat16", keep_k=12)
    partial = mine_range(bf16, store, cfg16, 0, len(store))
    mined = unpack_values(partial.keys[partial.keys != SENTINEL])
    assert torch.equal(mined, mined.to(torch.bfloat16).float())  # bf16 while mining
    keys = resolve_keys(cfg16, bf16.n_layers, bf16.d_ff)
    results = finalize(bf16, store, partial, keys, cfg16.top_k)
    assert bf16.dtype == torch.bfloat16  # restored after re-scoring
    acts = capture_all(fp32, store, small_cfg())
    not_bf16 = 0
    for result in results:
        values = [ex.coefficient for ex in result.examples]
        assert values == sorted(values, reverse=True)
        for ex in result.examples:
            m = acts[result.layer][ex.sentence_index][:, result.index].copy()
            m[store.special(ex.sentence_index)] = -np.inf
            assert ex.coefficient == pytest.approx(float(m.max()), rel=1e-5, abs=1e-6)
            assert ex.position == int(m.argmax()) or m[ex.position] == pytest.approx(m.max())
            not_bf16 += float(torch.tensor(ex.coefficient).bfloat16()) != ex.coefficient
    assert not_bf16 > 0  # the reported values are float32, not bf16 roundings


def test_rank_keys_order_by_value_then_sentence():
    values = torch.tensor([1.0, 1.0, -0.0, 0.0, -2.0, float("inf")])
    sentences = torch.tensor([7, 3, 5, 4, 0, 9])
    order = torch.argsort(pack_keys(values, sentences), descending=True).tolist()
    assert [int(sentences[i]) for i in order] == [9, 3, 7, 4, 5, 0]
    keys = pack_keys(values, sentences)
    assert torch.equal(unpack_sentences(keys), sentences)
    assert unpack_values(keys).tolist() == [1.0, 1.0, 0.0, 0.0, -2.0, float("inf")]


def test_sample_keys_is_seeded_sorted_and_per_layer():
    keys = sample_keys(3, 100, 10, seed=0)
    assert keys == sample_keys(3, 100, 10, seed=0)
    assert keys != sample_keys(3, 100, 10, seed=1)
    for layer in range(3):
        idx = [i for lyr, i in keys if lyr == layer]
        assert len(idx) == 10 and idx == sorted(set(idx))


def test_too_many_keys_per_layer_is_an_error():
    with pytest.raises(MiningError, match=r"keys_per_layer \(101\) exceeds the 100 keys"):
        sample_keys(2, 100, 101, seed=0)


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ((2, 0), "layer 2 out of range"),
        ((-1, 0), "layer -1 out of range"),
        ((0, 48), "key index 48 out of range"),
    ],
)
def test_explicit_keys_out_of_range_are_errors(key, message):
    with pytest.raises(MiningError, match=message):
        resolve_keys(small_cfg(key_list=[key]), 2, 48)


def test_top_k_above_keep_k_is_an_error():
    with pytest.raises(MiningError, match=r"top_k \(65\) cannot exceed keep_k \(64\)"):
        MineConfig(top_k=65, keep_k=64).validate()


def test_dense_and_flat_merges_agree_when_candidates_crowd_one_key():
    from mining.core.miner import _merge_topk, _merge_topk_flat

    gen = torch.Generator().manual_seed(0)
    n_keys, k = 6, 4
    empty = (
        torch.full((n_keys, k), SENTINEL),
        torch.zeros((n_keys, k), dtype=torch.int32),
        torch.zeros((n_keys, k), dtype=torch.int64),
    )
    for crowded in (False, True):
        n = 200
        f = (
            torch.zeros(n, dtype=torch.int64)
            if crowded
            else torch.randint(0, n_keys, (n,), generator=gen)
        )
        values = torch.randint(0, 5, (n,), generator=gen).float()  # many equal values
        sentences = torch.randperm(n, generator=gen)
        pos = torch.randint(0, 3, (n,), generator=gen, dtype=torch.int32)
        hashes = pos.long() * 7 + values.long()  # equal prefix ⇒ equal value, as in a model
        for dedup in (False, True):
            cand = (f, pack_keys(values, sentences), pos, hashes)
            dense = _merge_topk(*empty, *cand, dedup=dedup)
            flat = _merge_topk_flat(*empty, *cand, dedup=dedup)
            for a, b in zip(dense, flat, strict=True):
                assert torch.equal(a, b)


@pytest.mark.parametrize(
    "real",
    [
        [[0, 1, 1, 1, 0], [0, 1, 1, 0, 0]],  # [CLS] a b [SEP] / [CLS] a [SEP] pad
        [[1, 0, 1, 0, 0], [0, 1, 0, 0, 1]],  # no position real in every row
        [[1, 1, 1, 1, 1], [1, 1, 1, 1, 1]],  # no mask at all
    ],
)
def test_sentence_max_uses_only_real_positions(real, monkeypatch):
    from mining.core.miner import _StreamingMiner

    monkeypatch.setenv("FFKV_MINING_KERNEL", "tensor")  # the kernel has no separate max

    real_np = np.array(real, dtype=bool)
    miner = _StreamingMiner(Partial.empty({}, 1, 3, 4), False, torch.device("cpu"), 2)
    miner.begin_batch(np.arange(2), torch.zeros((2, 5), dtype=torch.int64), real_np, torch.float32)
    m = torch.randn(2, 5, 3) + 10 * torch.from_numpy(~real_np)[:, :, None]  # loud non-real
    expected = m.masked_fill(torch.from_numpy(~real_np)[:, :, None], -math.inf).amax(dim=1)
    assert torch.equal(miner._best(m), expected)


def test_histogram_buckets_follow_the_documented_edges():
    from mining.core.miner import hist_buckets

    edges = torch.tensor(HIST_EDGES)
    values = torch.cat(
        [
            torch.randn(5000) * 6,
            edges,
            -edges,
            edges * 1.0001,
            edges * 0.9999,
            torch.tensor([0.0, -0.0, 1e-30, -1e-30, 1e30, -1e30]),
        ]
    )
    signbit = torch.signbit(values)
    expected = torch.where(
        signbit,
        torch.bucketize(values, edges, right=False),
        torch.bucketize(values, edges, right=True),
    )
    assert torch.equal(hist_buckets(values).long(), expected)


@pytest.mark.parametrize(("family", "coefficient"), CASES)
def test_kernel_and_tensor_paths_agree(family, coefficient, store_factory, monkeypatch):
    """The compiled CPU kernel and the tensor path give the same state: bit for bit,
    except the sums, which the kernel accumulates in float64 rather than float32."""
    loaded = tiny_loaded(family)
    store = store_factory(loaded, random_sentences(120, seed=11))
    cfg = small_cfg(coefficient=coefficient)
    results = {}
    for path in ("auto", "tensor"):
        monkeypatch.setenv("FFKV_MINING_KERNEL", path)
        results[path] = mine_range(loaded, store, cfg, 0, len(store))
    kernel, tensor = results["auto"], results["tensor"]
    for name in Partial.TENSORS:
        if name != "sum_fixed":
            assert torch.equal(getattr(kernel, name), getattr(tensor, name)), name
    torch.testing.assert_close(kernel.mean(), tensor.mean(), rtol=1e-5, atol=1e-6)


# GELU families: for ReLU (OPT) the positive top values are equal before and after.
@pytest.mark.parametrize("family", ["gpt2", "bert"])
def test_rescoring_ranks_the_coefficient_the_run_mined(family, store_factory):
    """A "pre" run re-scored in float32 must re-measure the pre-activation value: the
    same float32 numbers the miner kept, the same positions."""
    loaded = tiny_loaded(family)
    store = store_factory(loaded, random_sentences(60, seed=14))
    cfg = small_cfg(coefficient="pre")
    partial = mine_range(loaded, store, cfg, 0, len(store))
    assert partial.meta["fingerprint"]["coefficient"] == "pre"
    keys = [(0, 2), (1, 5), (1, 9)]
    fresh = finalize(loaded, store, partial, keys, cfg.top_k, rescore=True)
    as_mined = finalize(loaded, store, partial, keys, cfg.top_k, rescore=False)
    for a, b in zip(fresh, as_mined, strict=True):
        assert [(e.coefficient, e.sentence_index, e.position) for e in a.examples] == [
            (e.coefficient, e.sentence_index, e.position) for e in b.examples
        ]
        assert any(e.coefficient < 0 for e in a.examples) or a.stats.density < 1


def test_partials_of_different_coefficient_modes_do_not_merge(store_factory):
    loaded = tiny_loaded("gpt2")
    store = store_factory(loaded, random_sentences(40, seed=15))
    cfg = small_cfg()
    (a, _), (b, end) = shard_ranges(len(store), 2, cfg)
    post = mine_range(loaded, store, cfg, a, b)
    pre = mine_range(loaded, store, small_cfg(coefficient="pre"), b, end)
    with pytest.raises(MiningError, match="different runs or settings"):
        merge_partials([post, pre])
