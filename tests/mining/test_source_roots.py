"""Mining reads local files only inside the configured roots (docs/mining.md, "Corpora"):
the `mine` command refuses the rest with a clear error, and the worker checks again where
it opens the file, so a root narrowed or a symlink swapped after submission is caught."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from django.core.management import CommandError, call_command

from mining import services
from mining.core import MineConfig, MiningError, iter_sentences, load_model
from mining.core.sources import check_corpus_source, check_model_source, parse_roots
from mining.models import MiningRun
from mining.tasks import mine_shard, prepare_run

SECRET = "The server's secret line."
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def layout(settings, tmp_path: Path, tiny_gpt2_dir: Path, tiny_corpus: Path):
    """tmp_path/corpora and tmp_path/models are the roots (the tiny model and corpus
    moved inside), tmp_path/secret.txt lies outside both."""
    settings.DATA_DIR = tmp_path / "data"
    corpora, models = tmp_path / "corpora", tmp_path / "models"
    corpora.mkdir()
    models.mkdir()
    corpus = tiny_corpus.rename(corpora / "corpus.txt")
    model = tiny_gpt2_dir.rename(models / "tiny-gpt2")
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET + "\n")
    settings.FFKV_CORPUS_ROOTS = [corpora]
    settings.FFKV_MODEL_ROOTS = [models]
    return {"corpora": corpora, "models": models, "corpus": corpus, "model": model}


def _mine(model: str, corpus: str, study: str) -> None:
    call_command("mine", model=model, corpus=corpus, study=study, sentences="lines", top_k=2)


@pytest.mark.django_db
def test_the_mine_command_refuses_a_corpus_outside_the_roots(layout):
    with pytest.raises(CommandError) as error:
        _mine(str(layout["model"]), "/etc/passwd", "passwd")
    message = str(error.value)
    assert "'/etc/passwd'" in message and "FFKV_CORPUS_ROOTS" in message
    assert str(layout["corpora"]) in message
    assert not MiningRun.objects.exists()


@pytest.mark.django_db
def test_the_mine_command_refuses_a_model_outside_the_roots(layout, tmp_path):
    with pytest.raises(CommandError) as error:
        _mine(str(layout["models"] / ".." / "corpora"), str(layout["corpus"]), "escape")
    assert "FFKV_MODEL_ROOTS" in str(error.value) and str(layout["models"]) in str(error.value)
    assert not MiningRun.objects.exists()


@pytest.mark.django_db
def test_the_mine_command_mines_from_inside_the_roots(layout):
    _mine(str(layout["model"]), str(layout["corpus"]), "inside")
    run = MiningRun.objects.get()
    assert run.status == MiningRun.Status.DONE and run.study is not None


def _submitted(layout) -> MiningRun:
    config = MineConfig(
        model=str(layout["model"]),
        corpus=str(layout["corpus"]),
        sentences="lines",
        keys_per_layer=2,
        top_k=3,
    )
    return services.mining_run_create(study_name="checked twice", config=config)


def _failed_naming(run: MiningRun, setting: str, root: Path) -> None:
    run.refresh_from_db()
    assert run.status == MiningRun.Status.FAILED, run.status
    assert setting in run.error and str(root) in run.error, run.error


def _nothing_read_from(secret: str, folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


@pytest.mark.django_db
def test_a_corpus_swapped_for_a_symlink_after_submission_fails_on_the_worker(layout, tmp_path):
    run = _submitted(layout)
    layout["corpus"].unlink()
    layout["corpus"].symlink_to(tmp_path / "secret.txt")
    with mock.patch("mining.tasks.mine_shard.delay") as queued:
        prepare_run(run.pk)  # the task, called here as a worker would run it
    _failed_naming(run, "FFKV_CORPUS_ROOTS", layout["corpora"])
    queued.assert_not_called()
    _nothing_read_from(SECRET, tmp_path / "data")


@pytest.mark.django_db
def test_roots_narrowed_after_submission_fail_the_run_on_the_worker(layout, settings, tmp_path):
    run = _submitted(layout)
    settings.FFKV_CORPUS_ROOTS = [tmp_path / "elsewhere"]
    with mock.patch("mining.tasks.mine_shard.delay"):
        prepare_run(run.pk)
    _failed_naming(run, "FFKV_CORPUS_ROOTS", tmp_path / "elsewhere")


@pytest.mark.django_db
def test_a_model_root_narrowed_before_a_shard_fails_the_run_there(layout, settings, tmp_path):
    run = _submitted(layout)
    with mock.patch("mining.tasks.mine_shard.delay") as queued:
        prepare_run(run.pk)
    (shard_id,) = [call.args[0] for call in queued.call_args_list]
    settings.FFKV_MODEL_ROOTS = [tmp_path / "elsewhere"]  # the model is already cached
    with mock.patch("mining.tasks.merge_run.delay") as merged:
        mine_shard(shard_id)
    _failed_naming(run, "FFKV_MODEL_ROOTS", tmp_path / "elsewhere")
    merged.assert_not_called()


# --- mining.core.sources, without Django -----------------------------------------------


def test_roots_are_separated_by_colons_or_commas():
    assert parse_roots("/a:/b, /c,,") == ["/a", "/b", "/c"]
    assert parse_roots("") == []


def test_the_reader_checks_where_it_opens_the_file(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "ok.txt").write_text("Inside the root.\n")
    (tmp_path / "secret.txt").write_text(SECRET + "\n")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    assert list(iter_sentences(str(root / "ok.txt"), "lines", roots=[root])) == ["Inside the root."]
    for spec in (str(root / "link.txt"), f"{root}/../secret.txt", f"wikitext:{root}/link.txt"):
        with pytest.raises(MiningError, match="outside the corpus roots"):
            list(iter_sentences(spec, "lines", roots=[root]))
    # No roots given (the benches, library use): not confined.
    assert list(iter_sentences(str(root / "link.txt"), "lines")) == [SECRET]


def test_the_model_loader_checks_the_folder_and_everything_in_it(tmp_path, tiny_gpt2_dir):
    root = tmp_path / "models"
    root.mkdir()
    model = tiny_gpt2_dir.rename(root / "tiny")
    assert load_model(str(model), roots=[root]).n_layers > 0
    (tmp_path / "secret.txt").write_text(SECRET + "\n")
    (model / "vocab.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(MiningError, match=r"its entry 'vocab\.txt' is outside the model roots"):
        load_model(str(model), roots=[root])
    with pytest.raises(MiningError, match="outside the model roots"):
        load_model(str(tmp_path), roots=[root])


def test_a_name_no_file_can_have_is_refused_clearly(tmp_path):
    for name in ("/data/a\x00b", "./\ud800.txt"):
        with pytest.raises(MiningError, match="is not a valid path"):
            check_corpus_source(name, [tmp_path])
        with pytest.raises(MiningError, match="is not a valid path"):
            check_model_source(name, [tmp_path])


def test_builtin_and_hub_sources_read_no_local_file(tmp_path):
    for spec in ("builtin:wiki-vital", "hf:wikitext:wikitext-103-raw-v1:validation"):
        assert check_corpus_source(spec, []) is None
    for name in ("builtin:minilm", "gpt2", "org/model"):
        assert check_model_source(name, []) is None
    with pytest.raises(MiningError, match=r"FFKV_CORPUS_ROOTS: none"):
        check_corpus_source("hf:/etc::train", [])
    with pytest.raises(MiningError, match=r"FFKV_MODEL_ROOTS: none"):
        check_model_source("./models/x", [])


def _fresh_django(code: str, env: dict[str, str] | None = None) -> str:
    """stdout of ``code`` run after ``django.setup()`` in a fresh process, with the
    default settings (this process's roots are tmp_path) and ``env`` on top."""
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith("FFKV_")},
        "DJANGO_SETTINGS_MODULE": "config.settings",
        **(env or {}),
    }
    done = subprocess.run(
        [sys.executable, "-c", "import django\ndjango.setup()\n" + code],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _roots_setting(env: dict[str, str]) -> dict[str, list[str]]:
    out = _fresh_django(
        "import json\n"
        "from django.conf import settings as s\n"
        "print(json.dumps({n: list(map(str, getattr(s, n))) for n in "
        "('FFKV_CORPUS_ROOTS', 'FFKV_MODEL_ROOTS')}))\n",
        env,
    )
    result: dict[str, list[str]] = json.loads(out.strip().splitlines()[-1])
    return result


def test_the_roots_settings_default_to_the_data_folder_and_parse_lists():
    assert _roots_setting({"FFKV_DATA_DIR": "/srv/ffkv"}) == {
        "FFKV_CORPUS_ROOTS": ["/srv/ffkv/corpora", str(ROOT / "fixtures")],
        "FFKV_MODEL_ROOTS": ["/srv/ffkv/models"],
    }
    roots = _roots_setting(
        {"FFKV_CORPUS_ROOTS": "/data/a:/data/b, corpora", "FFKV_MODEL_ROOTS": ""}
    )
    # Relative folders are taken from the repository, the same for web and workers.
    assert roots["FFKV_CORPUS_ROOTS"] == ["/data/a", "/data/b", str(ROOT / "corpora")]
    assert roots["FFKV_MODEL_ROOTS"] == [str(ROOT / "var" / "models")]


def test_the_project_sample_corpus_is_inside_the_default_roots():
    # fixtures/README.md mines fixtures/sentences.txt from the repository root.
    out = _fresh_django(
        "from mining.core import MiningError\n"
        "from mining.sources import check_corpus\n"
        "check_corpus('fixtures/sentences.txt')\n"
        "try:\n"
        "    check_corpus('fixtures/../config/settings.py')\n"
        "except MiningError as exc:\n"
        "    print(exc)\n"
    )
    assert "outside the corpus roots" in out
