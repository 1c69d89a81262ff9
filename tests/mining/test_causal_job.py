"""Causal probes as jobs (mining/causal.py): key groups resolved from a list, from the
annotators' or the curators' pattern labels; the prefix sets a job reads (the keys' own
trigger prefixes, random ones, an uploaded text); each probe's figures stored on its job
with the links to the mined keys; and the inputs refused before anything runs, or by the
job before any forward. The services run in this process; tests/e2e/test_causal.py drives
them from the Causal page with a worker process."""

from __future__ import annotations

import numpy as np
import pytest

from annotate.models import GoldAnnotation, Key
from mining import services
from mining.causal import (
    causal_job_create,
    causal_job_run,
    own_examples,
    random_examples,
    resolve_group,
    text_examples,
)
from mining.core import MineConfig, MiningError
from mining.core.causal import ablation
from mining.core.store import CorpusStore
from mining.models import CausalJob, MiningRun
from tests.conftest import client_for
from tests.factories import StudyFactory, annotate_key

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"


@pytest.fixture
def mined(tiny_gpt2_dir, tiny_corpus, carol):
    config = MineConfig(
        model=str(tiny_gpt2_dir),
        corpus=str(tiny_corpus),
        sentences="lines",
        keys_per_layer=3,
        top_k=5,
        batch_size=8,
    )
    run = services.mining_run_create(study_name="causal", config=config, created_by=carol)
    for shard in services.mining_run_prepare(run=run):
        services.mining_shard_mine(shard=shard)
    services.mining_run_merge(run=run)
    run.refresh_from_db()
    assert run.status == MiningRun.Status.DONE
    return run


def _store(run):
    return CorpusStore.open(services.mining_config(run).store_dir)


def _label(study, alice, bob):
    """alice: a semantic pattern on the first key of each layer, a shallow one on the
    second; bob: semantic on the second key of layer 2; gold: shallow on the third key of
    layer 1. Returns the keys by layer."""
    keys = {layer: list(Key.objects.filter(study=study, layer=layer)) for layer in (1, 2)}
    for layer in (1, 2):
        annotate_key(keys[layer][0], alice, [("semantic", [1, 2, 3])])
        annotate_key(keys[layer][1], alice, [("shallow", [1, 2, 3])])
    annotate_key(keys[2][1], bob, [("semantic", [2, 3, 4])])
    annotate_key(keys[1][2], bob, [("semantic", [1, 2, 3])], status="draft")  # not submitted
    gold = GoldAnnotation.objects.create(key=keys[1][2], status=GoldAnnotation.Status.SUBMITTED)
    gold.patterns.create(description="gold", kind="shallow")
    return keys


def loaded_specials(run):
    return set(services.model_for(services.mining_config(run)).tokenizer.all_special_ids)


def _pair(key):
    return [key.layer, key.index]


def test_key_groups_resolve_from_lists_labels_and_gold(mined, alice, bob):
    study = mined.study
    keys = _label(study, alice, bob)
    by_label = {"by": "label", "kinds": ["semantic"], "source": "annotations"}
    assert resolve_group(study, by_label, "g") == sorted(
        [_pair(keys[1][0]), _pair(keys[2][0]), _pair(keys[2][1])]
    )
    alice_layer_2 = {**by_label, "annotator": "alice", "layers": [2]}
    assert resolve_group(study, alice_layer_2, "g") == [_pair(keys[2][0])]
    gold = {"by": "label", "kinds": ["shallow"], "source": "gold"}
    assert resolve_group(study, gold, "g") == [_pair(keys[1][2])]
    listed = {"by": "keys", "keys": [[2, 7], [1, 3], [2, 7]]}
    assert resolve_group(study, listed, "g") == [[1, 3], [2, 7]]
    with pytest.raises(
        MiningError,
        match=r"^group A is empty: no key carries a semantic "
        r"pattern in carol's submitted annotations in layers 1$",
    ):
        resolve_group(study, {**by_label, "annotator": "carol", "layers": [1]}, "group A")
    with pytest.raises(MiningError, match=r"key 3:0 is not in the model \(layers 1–2"):
        resolve_group(study, {"by": "keys", "keys": [[3, 0]]}, "g")


def test_prefix_sets_are_the_keys_own_random_ones_or_an_uploaded_text(mined):
    study, store = mined.study, _store(mined)
    key = Key.objects.filter(study=study).first()
    own = own_examples(study, store, [[key.layer, key.index]], tag=True)
    prefixes = list(key.prefixes.order_by("rank"))
    by_position = {(p.sentence_index, p.position): p for p in prefixes}
    assert own and len(own) <= len(prefixes)
    for ids, target, tagged in own:
        assert tagged == (key.layer - 1, key.index)
        sentence = next(
            s
            for (s, p), row in by_position.items()
            if p == len(ids) - 1 and list(store.tokens(s)[: p + 1]) == list(ids)
        )
        assert target == int(store.tokens(sentence)[len(ids)])

    drawn = random_examples(store, 40, seed=3)
    again = random_examples(store, 40, seed=3)
    assert len(drawn) == 40
    assert [(list(i), t) for i, t in drawn] == [(list(i), t) for i, t in again]
    sentences = [list(store.tokens(i)) for i in range(len(store))]
    for ids, target in drawn:  # a prefix of some sentence, followed by a real token there
        ids = list(ids)
        assert any(s[: len(ids) + 1] == [*ids, target] for s in sentences)
        assert target not in loaded_specials(mined)

    loaded = services.model_for(services.mining_config(mined))
    pairs = text_examples(loaded, "alpha beta gamma\n\n  beta delta  \n", "set P")
    ids = loaded.tokenizer("alpha beta gamma")["input_ids"]
    assert [(list(p), t) for p, t in pairs[:2]] == [(ids[:1], ids[1]), (ids[:2], ids[2])]
    assert len(pairs) == 3  # two pairs in the first line, one in the second
    with pytest.raises(MiningError, match="set Q is empty: give one sentence a line"):
        text_examples(loaded, " \n ", "set Q")


def test_an_ablation_job_stores_the_core_figures_with_links_to_the_mined_keys(mined, carol):
    study = mined.study
    keys = list(Key.objects.filter(study=study, layer=2))[:2]
    group = {"by": "keys", "keys": [_pair(k) for k in keys]}
    job = causal_job_create(
        study=study,
        kind="ablation",
        params={"group": group, "scale": 0.0, "random_prefixes": 30, "seed": 4},
        created_by=carol,
        send=False,
    )
    assert job.params["group"]["resolved"] == sorted(_pair(k) for k in keys)
    causal_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.error) == ("done", "")
    result = job.result
    # The figures are mining.core.causal.ablation's on the same sets.
    store = _store(mined)
    loaded = services.model_for(services.mining_config(mined))
    sets = {
        "own": own_examples(study, store, group["keys"], tag=True),
        "random": random_examples(store, 30, 4),
    }
    direct = ablation(loaded, sets, [(k.layer - 1, k.index) for k in keys], scale=0.0, seed=4)
    assert {k: v for k, v in result.items() if k != "key_ids"} == direct
    # Every mined key it names links to its page; control keys that were not mined do not.
    for key in keys:
        assert result["key_ids"][f"{key.layer}:{key.index}"] == key.pk
    mined_pairs = {(k.layer, k.index) for k in Key.objects.filter(study=study)}
    for layer, index in result["control_keys"]:
        assert (f"{layer}:{index}" in result["key_ids"]) == ((layer, index) in mined_pairs)
    # Delivered again after it ended: nothing changes.
    causal_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.result == result


def test_a_dissociation_job_reads_a_groups_own_prefixes_and_a_text(mined, carol):
    study = mined.study
    a, b = (
        list(Key.objects.filter(study=study, layer=1))[:1],
        list(Key.objects.filter(study=study, layer=2))[:1],
    )
    job = causal_job_create(
        study=study,
        kind="dissociation",
        params={
            "group_a": {"by": "keys", "keys": [_pair(k) for k in a]},
            "group_b": {"by": "keys", "keys": [_pair(k) for k in b]},
            "set_p": {"by": "own", "group": "a"},
            "set_q": {"by": "text", "text": "alpha beta gamma delta\nbeta beta alpha"},
            "scale": 0.0,
            "seed": 0,
        },
        send=False,
    )
    causal_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "done", job.error
    table = job.result["table"]
    assert set(table) == {"a", "b"} and set(table["a"]) == {"p", "q"}
    assert job.result["n"]["q"] == 5  # 3 + 2 pairs of the text
    assert job.result["interaction"]["sign"] in (-1, 0, 1)


def test_tracing_and_attribution_jobs_run_and_bad_prompts_fail_before_any_forward(mined):
    study = mined.study
    trace = causal_job_create(
        study=study,
        kind="tracing",
        params={"prompt": "alpha beta gamma", "subject": "beta", "answer": "delta", "samples": 3},
        send=False,
    )
    causal_job_run(job_id=trace.pk)
    trace.refresh_from_db()
    assert trace.status == "done", trace.error
    assert np.asarray(trace.result["effects"]["hidden"]).shape == (2, 3)
    mined_pairs = {(k.layer, k.index): k.pk for k in Key.objects.filter(study=study)}
    for key in trace.result["keys"]["top"]:
        pair = (key["layer"], key["index"])
        assert trace.result["key_ids"].get(f"{pair[0]}:{pair[1]}") == mined_pairs.get(pair)

    attribution = causal_job_create(
        study=study,
        kind="attribution",
        params={"prompts": ["alpha beta", "gamma beta"], "answer": "delta", "steps": 4},
        send=False,
    )
    causal_job_run(job_id=attribution.pk)
    attribution.refresh_from_db()
    assert attribution.status == "done", attribution.error
    assert len(attribution.result["prompts"]) == 2

    missing = causal_job_create(
        study=study,
        kind="tracing",
        params={"prompt": "alpha beta gamma", "subject": "omega", "answer": "delta"},
        send=False,
    )
    causal_job_run(job_id=missing.pk)
    missing.refresh_from_db()
    assert missing.status == "failed" and missing.result == {}
    assert "omega" in missing.error and "not" in missing.error


def test_requests_that_cannot_run_are_refused_before_anything_is_queued(mined, carol, alice):
    url = f"/api/admin/studies/{mined.study_id}/causal/"
    assert client_for(alice).post(url, {"kind": "tracing"}, format="json").status_code == 403
    assert client_for(alice).get(url).status_code == 403
    curator = client_for(carol)
    no_answer = curator.post(url, {"kind": "tracing", "prompt": "a", "subject": "a"}, format="json")
    assert no_answer.status_code == 400 and set(no_answer.json()["fields"]) == {"answer"}
    empty = curator.post(
        url,
        {"kind": "ablation", "group": {"by": "label", "kinds": ["semantic"], "layers": [1]}},
        format="json",
    )
    assert empty.status_code == 400 and empty.json()["code"] == "causal_refused"
    assert empty.json()["detail"] == (
        "the key group is empty: no key carries a semantic pattern in the submitted "
        "annotations in layers 1"
    )
    encoder = StudyFactory(name="an encoder", is_causal=False)
    refused = curator.post(
        f"/api/admin/studies/{encoder.pk}/causal/",
        {"kind": "tracing", "prompt": "a b", "subject": "a", "answer": "b"},
        format="json",
    )
    assert refused.status_code == 400 and "mined an encoder" in refused.json()["detail"]
    assert not CausalJob.objects.exists()

    made = curator.post(
        url,
        {"kind": "tracing", "prompt": "alpha beta", "subject": "alpha", "answer": "gamma"},
        format="json",
    )
    assert made.status_code == 202
    job = made.json()
    assert (job["kind"], job["status"], job["params"]["noise"], job["params"]["samples"]) == (
        "tracing",
        "queued",
        3.0,
        10,
    )
    assert "group" not in job["params"]  # only what the probe reads is kept
    listed = curator.get(url).json()
    assert [j["id"] for j in listed] == [job["id"]]
    detail = curator.get(f"/api/admin/causal/{job['id']}/").json()
    assert detail["result"] == {} and detail["status"] == "queued"
    assert curator.get("/api/admin/causal/999999/").status_code == 404
