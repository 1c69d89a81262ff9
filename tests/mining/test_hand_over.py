"""A mining run that names its annotators hands them the study when it is loaded: one
batch of every key, given whole to each of them, and the run's guidelines as version 1,
in the load's own transaction, once. Here the services run in this process, as the
`mine` command runs them; tests/e2e/test_preparing.py does it with a worker process."""

from __future__ import annotations

import pytest

from annotate.models import Assignment, Batch, Guideline
from mining import services
from mining.core import MineConfig, MiningError
from mining.models import MiningRun

pytestmark = pytest.mark.django_db

GUIDELINES = "# Read me\n\nA pattern covers at least 3 prefixes."


@pytest.fixture(autouse=True)
def _data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"


@pytest.fixture
def config(tiny_gpt2_dir, tiny_corpus) -> MineConfig:
    return MineConfig(
        model=str(tiny_gpt2_dir),
        corpus=str(tiny_corpus),
        sentences="lines",
        keys_per_layer=2,
        top_k=3,
        batch_size=8,
    )


def _mine_here(run: MiningRun) -> MiningRun:
    shards = services.mining_run_prepare(run=run)
    for shard in shards:
        services.mining_shard_mine(shard=shard)
    services.mining_run_merge(run=run)
    run.refresh_from_db()
    return run


def test_a_run_hands_its_study_to_its_annotators_when_it_is_loaded(config, alice, bob, carol):
    run = services.mining_run_create(
        study_name="handed over",
        config=config,
        created_by=carol,
        assign_to=[bob, alice],
        assign_batch="first batch",
        guidelines=GUIDELINES,
    )
    assert sorted(u.username for u in run.assign_to.all()) == ["alice", "bob"]
    run = _mine_here(run)
    assert run.status == MiningRun.Status.DONE and run.study is not None
    study = run.study
    batch = Batch.objects.get(study=study)
    assert batch.name == "first batch" and batch.created_by == carol
    assert batch.keys.count() == study.keys.count() == 4  # 2 layers × 2 keys
    assignments = Assignment.objects.filter(batch=batch).order_by("annotator__username")
    assert [a.annotator.username for a in assignments] == ["alice", "bob"]
    assert all(a.keys.count() == 4 for a in assignments)  # every key for each of them
    guideline = Guideline.objects.get(study=study)
    assert (guideline.version, guideline.text, guideline.created_by) == (1, GUIDELINES, carol)

    # A merge delivered again finds the study loaded and hands nothing over twice.
    services.mining_run_merge(run=run)
    assert Batch.objects.filter(study=study).count() == 1
    assert Assignment.objects.filter(batch__study=study).count() == 2
    assert Guideline.objects.filter(study=study).count() == 1


def test_a_run_without_annotators_hands_nothing_over(config):
    run = _mine_here(services.mining_run_create(study_name="alone", config=config))
    assert run.status == MiningRun.Status.DONE
    assert not Batch.objects.filter(study=run.study).exists()
    assert not Guideline.objects.filter(study=run.study).exists()


def test_an_annotator_deactivated_while_the_run_mines_is_left_out(config, alice, bob, carol):
    run = services.mining_run_create(
        study_name="one left", config=config, created_by=carol, assign_to=[alice, bob]
    )
    bob.is_active = False
    bob.save()
    run = _mine_here(run)
    assert run.status == MiningRun.Status.DONE  # the mining is not lost for it
    holders = Assignment.objects.filter(batch__study=run.study)
    assert [a.annotator.username for a in holders] == ["alice"]
    assert Batch.objects.get(study=run.study).name == services.ASSIGN_BATCH_DEFAULT


def test_a_run_refuses_to_name_anyone_but_active_annotators(config, alice, carol, mallory):
    for user in (mallory, carol):
        with pytest.raises(MiningError) as refused:
            services.mining_run_create(study_name="refused", config=config, assign_to=[user])
        assert str(refused.value) == services.ASSIGN_NOT_ANNOTATOR.format(username=user.username)
    assert not MiningRun.objects.exists()


def test_guidelines_on_a_run_need_its_creator_as_their_author(config, alice):
    with pytest.raises(MiningError, match="author"):
        services.mining_run_create(
            study_name="no author", config=config, assign_to=[alice], guidelines=GUIDELINES
        )
    assert not MiningRun.objects.exists()


def test_a_merge_queues_the_scores_and_the_suggestions_of_its_study_once_loaded(
    config, django_capture_on_commit_callbacks
):
    # docs/evidence.md: the held-out scores and the machine's suggestions are Celery jobs
    # sent when the study is loaded; sent on commit, so a worker never finds it missing.
    from annotate.services import scores as score_service
    from annotate.services import suggestions as suggestion_service

    run = services.mining_run_create(study_name="queued", config=config)
    shards = services.mining_run_prepare(run=run)
    for shard in shards:
        services.mining_shard_mine(shard=shard)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        study = services.mining_run_merge(run=run)
    sent = [(c.func, c.args, c.keywords) for c in callbacks if hasattr(c, "func")]
    scored = [args[0] for func, args, _ in sent if func is score_service._send]
    assert [(k["study_id"], k["missing_only"]) for k in scored] == [(study.pk, True)]
    suggested = [args for func, args, _ in sent if func is suggestion_service._send]
    assert suggested == [(suggestion_service.SUGGEST_TASK, study.pk)]
