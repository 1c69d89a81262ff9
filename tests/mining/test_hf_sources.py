"""``hf:NAME:CONFIG:SPLIT`` reads the Hub, or a local folder inside the corpus roots, and
nothing else: a name of one of the datasets library's file loaders (``text``, ``json``,
...) would read whatever matches under the worker's working folder, and a bare name that
is no known Hub dataset may be one. Checked when the run is submitted (a 400 naming the
problem, nothing recorded) and again on the worker, where ``datasets`` resolves the
files. Nothing here downloads: refusals happen before ``datasets`` is called, and the
names accepted are only checked, never loaded."""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

import pytest

from mining import services
from mining.core import MineConfig, MiningError, iter_sentences
from mining.core.sources import check_corpus_source
from mining.models import MiningRun
from mining.tasks import prepare_run
from tests.conftest import client_for

SECRET = "The server's secret line."
BODY = {"study_name": "hf", "model": "builtin:minilm"}

FILE_LOADERS = [
    "hf:text::test",
    "hf:json::x",
    "hf:csv:default:train",
    "hf:parquet::train",
    "hf:arrow::train",
    "hf:pandas::train",
    "hf:imagefolder::train",
    "hf:webdataset::train",
    "hf:sql::train",
    "hf:Text::train",
]
NOT_HUB_DATASETS = ["hf:test::train", "hf:my-local-data::train", "hf:wiki text::train"]
ESCAPES = ["hf:../x::train", "hf:/etc::train", "hf:~::train", "hf:a/b/../../..::train"]
HUB = [
    "hf:wikitext:wikitext-103-raw-v1:train",
    "hf:Salesforce/wikitext:wikitext-103-raw-v1:validation",
    "hf:allenai/c4:en:validation",
]


@pytest.fixture
def corpora(settings, tmp_path: Path) -> Path:
    """The only corpus root; a secret file lies beside it."""
    root = tmp_path / "corpora"
    root.mkdir()
    settings.FFKV_CORPUS_ROOTS = [root]
    (tmp_path / "secret.jsonl").write_text(json.dumps({"text": SECRET}) + "\n")
    return root


@pytest.fixture
def no_download():
    """``datasets`` must not be asked for anything (this machine has no network)."""
    import datasets

    refuse = AssertionError("datasets was called")
    with (
        mock.patch.object(datasets, "load_dataset", side_effect=refuse) as load,
        mock.patch.object(datasets, "load_dataset_builder", side_effect=refuse) as builder,
    ):
        yield load, builder


def _dataset_folder(folder: Path, readme: str | None = None) -> Path:
    folder.mkdir(parents=True)
    (folder / "train.jsonl").write_text(json.dumps({"text": "Inside the root."}) + "\n")
    if readme is not None:
        (folder / "README.md").write_text(readme)
    return folder


# --- when the run is submitted: the API and the service -------------------------------


def _post(user, corpus: str):
    return client_for(user).post(
        "/api/admin/mining-runs/", {**BODY, "corpus": corpus}, format="json"
    )


def _field_error(response) -> dict:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "invalid", body
    (error,) = body["fields"]["corpus"]
    return error


@pytest.fixture
def queued():
    with mock.patch("mining.tasks.prepare_run.delay") as delay:
        yield delay


@pytest.mark.django_db
@pytest.mark.parametrize("spec", FILE_LOADERS)
def test_a_datasets_file_loader_as_the_name_is_a_400_naming_it(carol, corpora, queued, spec):
    error = _field_error(_post(carol, spec))
    name = spec.split(":")[1]
    assert error["code"] == "hf_dataset_refused", error
    assert f"{name!r}" in error["message"] and "file loader" in error["message"], error
    assert str(corpora) in error["message"], error  # where the files may go instead
    assert not MiningRun.objects.exists()
    queued.assert_not_called()


@pytest.mark.django_db
@pytest.mark.parametrize("spec", NOT_HUB_DATASETS)
def test_a_bare_name_that_is_no_known_hub_dataset_is_a_400(carol, corpora, queued, spec):
    error = _field_error(_post(carol, spec))
    assert error["code"] == "hf_dataset_refused", error
    assert "OWNER/NAME" in error["message"] and "wikitext" in error["message"], error
    assert not MiningRun.objects.exists()
    queued.assert_not_called()


@pytest.mark.django_db
@pytest.mark.parametrize("spec", ESCAPES)
def test_a_path_as_the_name_outside_the_roots_is_a_400(carol, corpora, queued, spec):
    error = _field_error(_post(carol, spec))
    assert "FFKV_CORPUS_ROOTS" in error["message"] and str(corpora) in error["message"], error
    assert not MiningRun.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("spec", ["hf:../x", "hf:/etc", "hf:text"])
def test_a_spec_without_config_and_split_is_a_400(carol, corpora, queued, spec):
    error = _field_error(_post(carol, spec))
    assert "expected hf:NAME:CONFIG:SPLIT" in error["message"], error
    assert not MiningRun.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("spec", [*HUB, "hf:{corpora}/ds::train", "hf:{corpora}/text::train"])
def test_hub_datasets_and_folders_inside_the_roots_are_accepted(carol, corpora, queued, spec):
    _dataset_folder(corpora / "ds")
    _dataset_folder(corpora / "text")  # a folder may bear a loader's name: it is a path
    spec = spec.format(corpora=corpora)
    response = _post(carol, spec)
    assert response.status_code == 201, response.content
    assert MiningRun.objects.get().params["corpus"] == spec


@pytest.mark.django_db
def test_the_service_refuses_a_file_loader_too(corpora):
    config = MineConfig(model="builtin:minilm", corpus="hf:text::test")
    with pytest.raises(MiningError, match="file loader"):
        services.mining_run_create(study_name="cli", config=config)
    assert not MiningRun.objects.exists()


# --- the check itself, without Django --------------------------------------------------


def test_names_are_checked_without_loading_anything(tmp_path, no_download):
    root = tmp_path / "root"
    root.mkdir()
    for spec in HUB:
        assert check_corpus_source(spec, [root]) is None
    for spec in [*FILE_LOADERS, *NOT_HUB_DATASETS]:
        with pytest.raises(MiningError, match="hf:"):
            check_corpus_source(spec, [root])
        # The reader refuses them too, confined or not, before datasets is called.
        for roots in ([root], None):
            with pytest.raises(MiningError, match=r"file loader|OWNER/NAME"):
                list(iter_sentences(spec, "lines", roots=roots))
    load, builder = no_download
    load.assert_not_called()
    builder.assert_not_called()


def test_a_namespaced_name_that_is_a_local_folder_is_a_path(tmp_path, monkeypatch):
    root = tmp_path / "root"
    root.mkdir()
    monkeypatch.chdir(tmp_path)
    _dataset_folder(tmp_path / "org" / "name")
    # datasets reads a folder of that name in the working folder before the Hub.
    with pytest.raises(MiningError, match="outside the corpus roots"):
        check_corpus_source("hf:org/name::train", [root])
    assert check_corpus_source("hf:org/other::train", [root]) is None


# --- again on the worker, where datasets resolves the files ---------------------------

README_ESCAPE = """---
configs:
- config_name: default
  data_files:
  - split: train
    path: "../../secret.jsonl"
---
"""


def test_a_dataset_folder_whose_card_points_outside_the_roots_is_refused_on_reading(tmp_path):
    root = tmp_path / "corpora"
    (tmp_path / "secret.jsonl").write_text(json.dumps({"text": SECRET}) + "\n")
    folder = _dataset_folder(root / "ds", readme=README_ESCAPE)
    # The folder itself, and everything in it, lies inside: submission accepts it...
    assert check_corpus_source(f"hf:{folder}::train", [root]) == folder
    # ...but its card's data files resolve outside, which only the reader can see.
    with pytest.raises(MiningError, match=r"its data file .*secret\.jsonl.* outside the corpus"):
        list(iter_sentences(f"hf:{folder}::train", "lines", roots=[root]))
    (folder / "README.md").unlink()
    assert list(iter_sentences(f"hf:{folder}::train", "lines", roots=[root])) == [
        "Inside the root."
    ]


@pytest.mark.django_db
def test_a_hub_name_that_is_a_folder_where_the_worker_runs_fails_the_run_there(
    settings, tmp_path, tiny_gpt2_dir, monkeypatch
):
    settings.DATA_DIR = tmp_path / "data"
    settings.FFKV_CORPUS_ROOTS = [tmp_path / "corpora"]
    config = MineConfig(model=str(tiny_gpt2_dir), corpus="hf:org/name::train", sentences="lines")
    run = services.mining_run_create(study_name="worker cwd", config=config)
    # The worker runs in another folder, where a folder of that name holds a secret.
    worker_cwd = tmp_path / "worker"
    folder = worker_cwd / "org" / "name"
    folder.mkdir(parents=True)
    (folder / "train.jsonl").write_text(json.dumps({"text": SECRET}) + "\n")
    monkeypatch.chdir(worker_cwd)
    with mock.patch("mining.tasks.mine_shard.delay") as queued:
        prepare_run(run.pk)  # the task, called here as a worker would run it
    run.refresh_from_db()
    assert run.status == MiningRun.Status.FAILED, run.status
    assert "'org/name'" in run.error and "FFKV_CORPUS_ROOTS" in run.error, run.error
    queued.assert_not_called()
    for path in (tmp_path / "data").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


@pytest.mark.django_db
def test_a_dataset_card_pointing_outside_the_roots_fails_the_run_on_the_worker(
    settings, corpora, tmp_path, tiny_gpt2_dir
):
    settings.DATA_DIR = tmp_path / "data"
    folder = _dataset_folder(corpora / "ds")
    config = MineConfig(model=str(tiny_gpt2_dir), corpus=f"hf:{folder}::train", sentences="lines")
    run = services.mining_run_create(study_name="card", config=config)
    (folder / "README.md").write_text(README_ESCAPE)  # after submission: only the worker sees it
    with mock.patch("mining.tasks.mine_shard.delay") as queued:
        prepare_run(run.pk)
    run.refresh_from_db()
    assert run.status == MiningRun.Status.FAILED, run.status
    assert "secret.jsonl" in run.error and str(corpora) in run.error, run.error
    queued.assert_not_called()
    for path in (tmp_path / "data").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
