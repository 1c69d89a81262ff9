"""A run's work folder belongs to that run alone (docs/mining.md, "Runs, shards and the
merge"): named by a random id stored on the run, described by a manifest, refused when it
does not match."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from unittest import mock

import pytest
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection

from annotate.models import Study, TriggerPrefix
from mining import services
from mining.core import MineConfig, mine
from mining.models import MiningRun, MiningShard

from .conftest import save_tiny_model

pytestmark = pytest.mark.django_db

KEYS_PER_LAYER, TOP_K, BATCH_SIZE = 3, 5, 8
OPTIONS = {
    "keys_per_layer": KEYS_PER_LAYER,
    "top_k": TOP_K,
    "batch_size": BATCH_SIZE,
    "sentences": "lines",
}


@pytest.fixture(autouse=True)
def _data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"


def _mine(model: Path, corpus: Path, study: str) -> None:
    call_command("mine", model=str(model), corpus=str(corpus), study=study, **OPTIONS)


def _study_rows(study: Study) -> list[tuple]:
    return list(
        TriggerPrefix.objects.filter(key__study=study)
        .order_by("key__layer", "key__index", "rank")
        .values_list(
            "key__layer", "key__index", "rank", "sentence_index", "position", "text", "coefficient"
        )
    )


def _reference_rows(model: Path, corpus: Path) -> list[tuple]:
    """The same job run in this process over a temporary store: what the study must hold."""
    result = mine(
        MineConfig(
            model=str(model),
            corpus=str(corpus),
            sentences="lines",
            keys_per_layer=KEYS_PER_LAYER,
            top_k=TOP_K,
            batch_size=BATCH_SIZE,
        )
    )
    return [
        (
            key.layer + 1,
            key.index,
            ex.rank,
            ex.sentence_index,
            ex.position,
            ex.prefix,
            ex.coefficient,
        )
        for key in sorted(result.keys, key=lambda k: (k.layer, k.index))
        for ex in key.examples
    ]


def _assert_exact(study: Study | None, model: Path, corpus: Path) -> None:
    assert study is not None
    rows = _study_rows(study)
    reference = _reference_rows(model, corpus)
    assert len(rows) == KEYS_PER_LAYER * 2 * TOP_K
    assert [row[:-1] for row in rows] == [row[:-1] for row in reference]
    assert [row[-1] for row in rows] == pytest.approx([row[-1] for row in reference], rel=1e-5)


def _forget_every_run() -> None:
    """A fresh database over the same data folder: no runs, no studies, ids from 1 again."""
    MiningRun.objects.all().delete()
    Study.objects.all().delete()
    sequences = [
        {"table": MiningRun._meta.db_table, "column": "id"},
        {"table": MiningShard._meta.db_table, "column": "id"},
    ]
    with connection.cursor() as cursor:
        for sql in connection.ops.sequence_reset_by_name_sql(no_style(), sequences):
            cursor.execute(sql)


def test_two_fresh_databases_over_one_data_folder_give_two_exact_studies(tmp_path, tiny_corpus):
    # Same vocabulary size, different tokenizers (llama puts <s> first): a store reused
    # across the two would not crash, it would silently shift every position.
    gpt2 = save_tiny_model("gpt2", tmp_path / "tiny-gpt2")
    llama = save_tiny_model("llama", tmp_path / "tiny-llama")

    _forget_every_run()  # PostgreSQL's sequences outlive earlier tests' rolled-back rows
    _mine(gpt2, tiny_corpus, "first")
    first = MiningRun.objects.get()
    first_pk = first.pk
    _forget_every_run()
    _mine(llama, tiny_corpus, "second")
    second = MiningRun.objects.get()

    assert second.pk == first_pk  # the database really forgot: the old bug's set-up
    assert second.status == MiningRun.Status.DONE, second.error
    _assert_exact(second.study, llama, tiny_corpus)
    # and the other way round, with the first run's folder still on disk
    _forget_every_run()
    _mine(gpt2, tiny_corpus, "third")
    third = MiningRun.objects.get()
    assert third.pk == first_pk
    _assert_exact(third.study, gpt2, tiny_corpus)


# --- the manifest, and folders that are not the run's ---------------------------------


@pytest.fixture
def run(tiny_gpt2_dir, tiny_corpus) -> MiningRun:
    config = MineConfig(
        model=str(tiny_gpt2_dir),
        corpus=str(tiny_corpus),
        sentences="lines",
        keys_per_layer=2,
        top_k=3,
        batch_size=8,
        key_list=None,
    )
    return services.mining_run_create(study_name="folders", config=config, n_shards=2)


@pytest.fixture
def no_queue():
    """The tasks run here, called directly; what they would queue is only recorded."""
    with (
        mock.patch("mining.tasks.mine_shard.delay") as mine_shard,
        mock.patch("mining.tasks.merge_run.delay") as merge_run,
    ):
        yield {"mine_shard": mine_shard, "merge_run": merge_run}


def _failed_with(run: MiningRun, *parts: str) -> None:
    run.refresh_from_db()
    assert run.status == MiningRun.Status.FAILED
    for part in parts:
        assert part in run.error
    assert "\n" not in run.error


def test_the_folder_is_named_by_a_random_work_id_and_holds_a_manifest(run, settings):
    other = MiningRun.objects.create(study_name="other", params=run.params)
    assert re.fullmatch(r"[0-9a-f]{32}", run.work_id)
    assert other.work_id != run.work_id
    assert services.run_dir(run) == Path(settings.DATA_DIR) / "mining" / run.work_id

    services.mining_run_prepare(run=run)

    manifest = json.loads((services.run_dir(run) / "manifest.json").read_text())
    assert set(manifest) == {"format", "work_id", "model", "corpus", "config", "created_at"}
    assert manifest["format"] == "ffkv.mining-run/v1"
    assert manifest["work_id"] == run.work_id
    assert (manifest["model"], manifest["corpus"]) == (run.params["model"], run.params["corpus"])
    assert manifest["config"] == {
        "all_keys": False,
        "coefficient": "post",
        "batch_size": 8,
        "device": "cpu",
        "dtype": "float32",
        "keep_k": 64,
        "key_list": None,
        "keys_per_layer": 2,
        "max_sentences": None,
        "max_tokens": 128,
        "seed": 0,
        "sentences": "lines",
        "sort_window": 16,
        "top_k": 3,
        "value_top_n": 10,
    }
    assert datetime.fromisoformat(manifest["created_at"]).tzinfo is not None
    assert not [p.name for p in services.run_dir(run).iterdir() if p.name.endswith(".tmp")]


def test_prepare_run_again_reuses_its_own_folder(run):
    services.mining_run_prepare(run=run)
    folder = services.run_dir(run)
    tokens = folder / "store" / "tokens.i32"
    built = tokens.stat().st_mtime_ns
    manifest = (folder / "manifest.json").read_text()

    shards = services.mining_run_prepare(run=run)

    assert len(shards) == 2
    assert tokens.stat().st_mtime_ns == built  # the store was not built again
    assert (folder / "manifest.json").read_text() == manifest


def _foreign_folder(run: MiningRun, manifest: dict | str | None) -> Path:
    """The run's folder, already full of another run's files."""
    folder = services.run_dir(run)
    (folder / "store").mkdir(parents=True)
    (folder / "store" / "meta.json").write_text('{"format": "ffkv.corpus-store/v1"}')
    (folder / "shard-0000.pt").write_bytes(b"someone else's partial")
    if isinstance(manifest, dict):
        (folder / "manifest.json").write_text(json.dumps(manifest))
    elif isinstance(manifest, str):
        (folder / "manifest.json").write_text(manifest)
    return folder


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"work_id": "0" * 32}, "work_id is '00000000000000000000000000000000'"),
        ({"model": "/some/other/model"}, "model is '/some/other/model'"),
        ({"corpus": "builtin:wiki-vital"}, "corpus is 'builtin:wiki-vital'"),
        ({"format": "ffkv.mining-run/v0"}, "format is 'ffkv.mining-run/v0'"),
    ],
)
def test_a_folder_of_another_run_is_refused_and_the_run_fails(run, no_queue, change, named):
    from mining.tasks import prepare_run

    folder = _foreign_folder(run, {**services.run_manifest(run), **change})
    before = _snapshot(folder)

    prepare_run(run.pk)

    _failed_with(run, str(folder), "does not belong to this run", named, "refused")
    assert _snapshot(folder) == before  # nothing read into the run, nothing overwritten
    assert not MiningShard.objects.filter(run=run).exists()
    no_queue["mine_shard"].assert_not_called()


def test_a_folder_mined_with_another_config_names_the_setting(run, no_queue):
    from mining.tasks import prepare_run

    manifest = services.run_manifest(run)
    manifest["config"] = {**manifest["config"], "max_tokens": 64, "key_list": [[0, 1]]}
    folder = _foreign_folder(run, manifest)

    prepare_run(run.pk)

    _failed_with(
        run,
        str(folder),
        "config key_list is [[0, 1]], this run's is None",
        "config max_tokens is 64, this run's is 128",
    )


@pytest.mark.parametrize(
    ("manifest", "named"),
    [
        (None, "has no manifest.json"),
        ("{not json", "manifest.json is unreadable"),
        ("[1, 2]", "manifest.json is not a JSON object"),
    ],
)
def test_a_folder_without_a_readable_manifest_is_refused(run, no_queue, manifest, named):
    from mining.tasks import prepare_run

    folder = _foreign_folder(run, manifest)
    before = _snapshot(folder)

    prepare_run(run.pk)

    _failed_with(run, str(folder), named, "refused")
    assert _snapshot(folder) == before


def test_a_shard_refuses_a_folder_that_changed_hands_after_prepare(run, no_queue):
    from mining.tasks import mine_shard

    shards = services.mining_run_prepare(run=run)
    folder = services.run_dir(run)
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({**manifest, "model": "elsewhere"}))

    mine_shard(shards[0].pk)

    _failed_with(run, str(folder), "model is 'elsewhere'")
    assert not services.shard_path(shards[0]).exists()  # no checkpoint written into it
    assert MiningShard.objects.get(pk=shards[0].pk).attempts == 0


def test_merge_refuses_a_folder_whose_manifest_went_missing(run, no_queue):
    from mining.tasks import merge_run

    shards = services.mining_run_prepare(run=run)
    run.refresh_from_db()  # the shards hold this run: now they see it mining
    for shard in shards:
        services.mining_shard_mine(shard=shard)
    run.refresh_from_db()
    assert run.status == MiningRun.Status.MERGING
    folder = services.run_dir(run)
    (folder / "manifest.json").unlink()

    merge_run(run.pk)

    _failed_with(run, str(folder), "has no manifest.json")
    assert run.study is None
    assert services.shard_path(run.shards.first()).is_file()  # left for a person to look at


def test_an_empty_folder_left_by_a_killed_prepare_is_taken(run):
    folder = services.run_dir(run)
    folder.mkdir(parents=True)
    (folder / ".manifest.json.1234.tmp").write_text('{"half": ')

    services.mining_run_prepare(run=run)

    assert json.loads((folder / "manifest.json").read_text())["work_id"] == run.work_id
