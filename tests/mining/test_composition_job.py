"""The §5 composition analysis as a job (mining/composition.py): the slice it reads, the
figures it stores on the study, once, the sparsity figures the merge stores, and the
inputs it refuses before writing anything. The services run in this process, as
`manage.py compose` runs them; tests/e2e/test_composition.py does it from the report page
with a worker process."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotate.models import Study
from mining import services
from mining.composition import composition_compute, composition_job_create, composition_job_run
from mining.core import MineConfig, MiningError
from mining.core.composition import compose
from mining.core.store import build_store
from mining.core.value_agreement import memory_tops
from mining.models import CompositionJob, MiningRun
from tests.factories import StudyFactory
from tests.unit.mining.conftest import random_sentences

pytestmark = pytest.mark.django_db

MINED = 120  # of the tiny corpus's 200 lines


@pytest.fixture(autouse=True)
def _data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"


def _mined(tiny_gpt2_dir, tiny_corpus, carol, *, compose_prefixes=0, max_sentences=MINED):
    config = MineConfig(
        model=str(tiny_gpt2_dir),
        corpus=str(tiny_corpus),
        sentences="lines",
        keys_per_layer=2,
        top_k=3,
        batch_size=8,
        max_sentences=max_sentences,
    )
    run = services.mining_run_create(
        study_name="composed", config=config, created_by=carol, compose_prefixes=compose_prefixes
    )
    for shard in services.mining_run_prepare(run=run):
        services.mining_shard_mine(shard=shard)
    services.mining_run_merge(run=run)
    run.refresh_from_db()
    assert run.status == MiningRun.Status.DONE
    return run


def test_the_merge_stores_sparsity_and_queues_the_composition_the_run_asked_for(
    tiny_gpt2_dir, tiny_corpus, carol, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as sent:
        run = _mined(tiny_gpt2_dir, tiny_corpus, carol, compose_prefixes=30)
    study = run.study
    assert [row["layer"] for row in study.sparsity["layers"]] == [1, 2]
    assert all(0 <= row["above_tenth_of_peak"] <= 1 for row in study.sparsity["layers"])
    job = CompositionJob.objects.get(study=study)
    assert (job.status, job.prefixes, job.seed, job.created_by) == ("queued", 30, 0, carol)
    assert sent  # the job's task goes once the load commits
    # Each memory's own top token, saved for the analysis: §4's, for every key.
    saved = np.load(services.run_dir(run) / services.MEMORY_TOPS)
    loaded = services.model_for(services.mining_config(run))
    for name, tops in memory_tops(loaded).items():
        assert np.array_equal(saved[name], tops)


def test_a_run_without_a_composition_queues_none(tiny_gpt2_dir, tiny_corpus, carol):
    run = _mined(tiny_gpt2_dir, tiny_corpus, carol)
    assert not CompositionJob.objects.exists()
    assert run.study.composition == {}


def test_the_job_reads_held_out_sentences_and_stores_its_figures_once(
    tiny_gpt2_dir, tiny_corpus, carol
):
    run = _mined(tiny_gpt2_dir, tiny_corpus, carol)
    study = run.study
    job = composition_job_create(study=study, prefixes=40, seed=5, created_by=carol, send=False)
    composition_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.error) == ("done", "")
    study.refresh_from_db()
    stored = study.composition
    assert stored["job"] == job.pk and stored["n_prefixes"] == 40
    assert stored["slice"] == {
        "prefixes": 40,
        "held_out": 40,
        "from_mined": 0,
        "seed": 5,
        "note": None,
    }
    assert [row["layer"] for row in stored["layers"]] == [1, 2]
    # The slice: the 40 lines after the 120 mined, in order, each cut at a real token.
    lines = tiny_corpus.read_text(encoding="utf-8").splitlines()
    assert [p["sentence"] for p in stored["prefix_set"]] == lines[MINED : MINED + 40]

    # The figures are those of compose() over that slice, from the model's own store.
    loaded = services.model_for(services.mining_config(run))
    store = build_store(lines[MINED : MINED + 40], loaded.tokenizer, services.run_dir(run) / "s")
    items = [(i, p["position"]) for i, p in enumerate(stored["prefix_set"])]
    assert all(not store.special(i)[p] for i, p in items)
    assert stored["layers"] == compose(loaded, store, items)["layers"]

    # Delivered again: the job is done, nothing is written again.
    composition_job_run(job_id=job.pk)
    study.refresh_from_db()
    assert study.composition == stored
    # The same slice computed again gives the same figures (the draw is seeded).
    again = composition_compute(study=study, prefixes=40, seed=5)
    assert again["layers"] == stored["layers"] and again["prefix_set"] == stored["prefix_set"]


def test_a_slice_past_the_unread_sentences_samples_mined_ones_and_says_so(
    tiny_gpt2_dir, tiny_corpus, carol
):
    run = _mined(tiny_gpt2_dir, tiny_corpus, carol)
    figures = composition_compute(study=run.study, prefixes=100, seed=1)
    assert (figures["slice"]["held_out"], figures["slice"]["from_mined"]) == (80, 20)
    assert "20 prefixes come from a seeded sample of the mined" in figures["slice"]["note"]
    lines = tiny_corpus.read_text(encoding="utf-8").splitlines()
    sentences = [p["sentence"] for p in figures["prefix_set"]]
    assert sentences[:80] == lines[MINED:]
    assert set(sentences[80:]) <= set(lines[:MINED]) and len(set(sentences[80:])) == 20


def test_a_slice_larger_than_the_corpus_fails_with_its_reason_and_writes_nothing(
    tiny_gpt2_dir, tiny_corpus, carol
):
    run = _mined(tiny_gpt2_dir, tiny_corpus, carol)
    job = composition_job_create(study=run.study, prefixes=201, send=False)
    composition_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "failed"
    assert job.error == (
        "a slice of 201 prefixes is larger than the corpus allows: one prefix a sentence, "
        "and the corpus has 80 sentences that mining did not read and 120 that it did"
    )
    assert Study.objects.get(pk=run.study_id).composition == {}
    assert not list(services.run_dir(run).glob("composition-*"))  # its slice store is gone


def test_a_run_over_the_whole_corpus_refuses_a_larger_slice_before_queueing(
    tiny_gpt2_dir, tiny_corpus, carol
):
    run = _mined(tiny_gpt2_dir, tiny_corpus, carol, max_sentences=None)
    with pytest.raises(MiningError, match="a slice of 201 prefixes is larger than the corpus"):
        composition_job_create(study=run.study, prefixes=201)
    assert not CompositionJob.objects.exists()


def test_studies_without_a_next_token_or_a_mining_run_are_refused(carol):
    encoder = StudyFactory(name="an encoder", is_causal=False)
    with pytest.raises(MiningError, match="mined an encoder: it predicts no next token"):
        composition_job_create(study=encoder)
    imported = StudyFactory(name="imported")
    with pytest.raises(MiningError, match="was not mined here"):
        composition_job_create(study=imported)
    with pytest.raises(MiningError, match="between 1 and 50000 prefixes"):
        composition_job_create(study=imported, prefixes=0)
    assert not CompositionJob.objects.exists()


def test_one_job_at_a_time(tiny_gpt2_dir, tiny_corpus, carol):
    run = _mined(tiny_gpt2_dir, tiny_corpus, carol)
    composition_job_create(study=run.study, prefixes=10, send=False)
    with pytest.raises(MiningError, match="already queued or running"):
        composition_job_create(study=run.study, prefixes=20, send=False)
    assert CompositionJob.objects.count() == 1


def test_the_compose_command_runs_here_and_reports_bad_input(
    tiny_gpt2_dir, tiny_corpus, carol, capsys
):
    run = _mined(tiny_gpt2_dir, tiny_corpus, carol)
    call_command("compose", study="composed", prefixes=12, seed=2)
    assert "Stored: 2 layers over 12 prefixes" in capsys.readouterr().out
    assert Study.objects.get(pk=run.study_id).composition["slice"]["seed"] == 2
    with pytest.raises(CommandError, match="larger than the corpus allows"):
        call_command("compose", study="composed", prefixes=500)
    with pytest.raises(CommandError, match="There is no study"):
        call_command("compose", study="no such study")


def test_random_sentences_are_distinct_lines():
    # The slice's checks above compare lines: the tiny corpus has no duplicate to drop.
    lines = random_sentences(200, seed=3)
    assert len(set(lines)) == 200
