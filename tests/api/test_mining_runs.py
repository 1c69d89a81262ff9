"""Admin API of mining runs: create (queued on the gpu queue), follow, cancel; roles."""

from __future__ import annotations

import json
from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from mining.models import MiningRun, MiningShard
from tests.conftest import client_for
from tests.errors import field_errors

pytestmark = pytest.mark.django_db

BODY = {"study_name": "s1", "model": "builtin:minilm", "corpus": "builtin:wiki-vital"}


@pytest.fixture
def queued():
    with mock.patch("mining.tasks.prepare_run.delay") as delay:
        yield delay


def test_carol_starts_a_mining_run_which_is_queued_after_commit(
    carol, queued, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(carol).post(
            "/api/admin/mining-runs/", {**BODY, "keys_per_layer": 3, "shards": 2}, format="json"
        )
    assert response.status_code == 201, response.content
    run = MiningRun.objects.get()
    queued.assert_called_once_with(run.pk)
    body = response.json()
    assert body["status"] == "queued"
    assert body["work_id"] == run.work_id and len(run.work_id) == 32
    assert body["params"]["keys_per_layer"] == 3
    assert body["params"]["n_shards"] == 2
    assert body["progress"]["tokens_done"] == 0


def test_progress_is_summed_over_shards(carol):
    run = MiningRun.objects.create(
        study_name="s", params=BODY, status="mining", tokens_total=1000, sentences_total=100
    )
    MiningShard.objects.create(
        run=run, index=0, start=0, end=50, status="done", sentences_done=50, tokens_done=500
    )
    MiningShard.objects.create(
        run=run,
        index=1,
        start=50,
        end=100,
        status="running",
        sentences_done=10,
        tokens_done=100,
        tokens_per_second=200.0,
    )
    progress = client_for(carol).get(f"/api/admin/mining-runs/{run.pk}/").json()["progress"]
    assert progress == {
        "sentences_done": 60,
        "sentences_total": 100,
        "tokens_done": 600,
        "tokens_total": 1000,
        "tokens_per_second": 200.0,
        "eta_seconds": 2.0,
        "shards_done": 1,
        "shards_total": 2,
    }


def test_cancel_marks_the_run_and_asks_shards_to_stop(carol):
    run = MiningRun.objects.create(study_name="s", params=BODY, status="mining")
    response = client_for(carol).post(f"/api/admin/mining-runs/{run.pk}/cancel/")
    assert response.status_code == 200
    run.refresh_from_db()
    assert run.cancel_requested and run.status == "cancelled"
    assert "carol" in run.error


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**BODY, "top_k": 0}, "top_k"),
        ({**BODY, "top_k": "many"}, "top_k"),
        ({**BODY, "top_k": 29}, "top_k"),  # mining keeps 2·top_k of its top-64
        ({**BODY, "device": "tpu"}, "device"),
        ({**BODY, "dtype": "float8"}, "dtype"),
        ({"model": "x", "corpus": "y"}, "study_name"),
        ({**BODY, "shards": 0}, "shards"),
        ({**BODY, "study_name": "x" * 500}, "study_name"),
    ],
)
def test_bad_run_bodies_are_400_naming_the_field(carol, queued, body, field):
    response = client_for(carol).post("/api/admin/mining-runs/", body, format="json")
    assert response.status_code == 400
    assert field in field_errors(response)
    assert not MiningRun.objects.exists()


def test_a_dtype_with_a_lone_surrogate_is_a_400_that_writes_it_as_an_escape(carol, queued):
    # Valid JSON, and DRF's answer echoes the choice: left as it is, the surrogate made
    # the JSON renderer fail (a 500). A raw body: the test client cannot encode one.
    body = (
        '{"study_name": "s1", "model": "builtin:minilm", "corpus": "builtin:wiki-vital", '
        '"dtype": "x\\ud800"}'
    )
    response = client_for(carol).post(
        "/api/admin/mining-runs/", data=body, content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert field_errors(response) == {"dtype": ['"x\\ud800" is not a valid choice.']}
    assert not MiningRun.objects.exists()


def test_a_taken_study_name_is_a_400(carol, queued):
    from tests.factories import StudyFactory

    StudyFactory(name="s1")
    response = client_for(carol).post("/api/admin/mining-runs/", BODY, format="json")
    assert response.status_code == 400
    assert "already exists" in response.json()["detail"]


@pytest.mark.parametrize("persona", ["alice", "mallory", None])
def test_only_admins_reach_mining_runs(request, persona, queued):
    run = MiningRun.objects.create(study_name="s", params=BODY)
    client = client_for(request.getfixturevalue(persona)) if persona else None
    from rest_framework.test import APIClient

    client = client or APIClient()
    assert client.get("/api/admin/mining-runs/").status_code == 403
    assert client.get(f"/api/admin/mining-runs/{run.pk}/").status_code == 403
    assert client.post("/api/admin/mining-runs/", BODY, format="json").status_code == 403
    assert client.post(f"/api/admin/mining-runs/{run.pk}/cancel/").status_code == 403
    run.refresh_from_db()
    assert not run.cancel_requested
    queued.assert_not_called()


def test_an_unknown_run_is_a_json_404(carol):
    response = client_for(carol).get("/api/admin/mining-runs/999999/")
    assert response.status_code == 404
    assert "detail" in response.json()


def test_an_unreachable_queue_is_a_503_and_the_run_is_marked_failed(carol):
    from kombu.exceptions import OperationalError

    with mock.patch("mining.tasks.prepare_run.delay", side_effect=OperationalError("down")):
        response = client_for(carol).post("/api/admin/mining-runs/", BODY, format="json")
    assert response.status_code == 503
    assert "queue is unavailable" in response.json()["detail"]
    assert MiningRun.objects.get().status == "failed"


# --- local files only inside the configured roots -------------------------------------


@pytest.fixture
def roots(settings, tmp_path):
    """A corpus root and a model root under tmp_path, and a secret file beside them."""
    corpora, models = tmp_path / "corpora", tmp_path / "models"
    corpora.mkdir()
    models.mkdir()
    settings.FFKV_CORPUS_ROOTS = [corpora]
    settings.FFKV_MODEL_ROOTS = [models]
    secret = tmp_path / "secret.txt"
    secret.write_text("the server's secret\n")
    return corpora, models, secret


def _post_run(user, **fields):
    return client_for(user).post("/api/admin/mining-runs/", {**BODY, **fields}, format="json")


def _refused(response, field: str, setting: str, root) -> str:
    assert response.status_code == 400, response.content
    (message,) = field_errors(response)[field]
    assert setting in message and str(root) in message, message
    assert not MiningRun.objects.exists()
    return message


def test_a_corpus_outside_the_roots_is_a_400_naming_them(carol, queued, roots):
    corpora, _, _ = roots
    message = _refused(
        _post_run(carol, corpus="/etc/passwd"), "corpus", "FFKV_CORPUS_ROOTS", corpora
    )
    assert "'/etc/passwd'" in message and "builtin: and hf:" in message
    queued.assert_not_called()


def test_a_symlink_inside_the_corpus_root_pointing_outside_is_a_400(carol, queued, roots):
    corpora, _, secret = roots
    (corpora / "innocent.txt").symlink_to(secret)
    response = _post_run(carol, corpus=str(corpora / "innocent.txt"))
    _refused(response, "corpus", "FFKV_CORPUS_ROOTS", corpora)
    (corpora / "etc").symlink_to("/etc")
    response = _post_run(carol, corpus=str(corpora / "etc" / "passwd"))
    _refused(response, "corpus", "FFKV_CORPUS_ROOTS", corpora)


@pytest.mark.parametrize(
    "spec",
    [
        "{corpora}/../secret.txt",
        "{corpora}/sub/../../secret.txt",
        "wikitext:{corpora}/../secret.txt",
        "{corpora}/../secret.jsonl",
        "hf:{corpora}/..::train",
        "hf:/etc::train",
    ],
)
def test_a_corpus_escaping_the_root_is_a_400(carol, queued, roots, spec):
    corpora, _, _ = roots
    response = _post_run(carol, corpus=spec.format(corpora=corpora))
    _refused(response, "corpus", "FFKV_CORPUS_ROOTS", corpora)


@pytest.mark.parametrize(
    "spec",
    [
        "{corpora}/inside.txt",
        "{corpora}/sub/../inside.txt",
        "wikitext:{corpora}/inside.txt",
        "{corpora}/link-inside.txt",
        "builtin:wiki-vital",
        "hf:wikitext:wikitext-103-raw-v1:validation",
        "hf:{corpora}::train",
    ],
)
def test_a_corpus_inside_the_roots_or_builtin_or_hub_is_accepted(carol, queued, roots, spec):
    corpora, _, _ = roots
    (corpora / "inside.txt").write_text("One sentence.\n")
    (corpora / "link-inside.txt").symlink_to(corpora / "inside.txt")
    response = _post_run(carol, corpus=spec.format(corpora=corpora))
    assert response.status_code == 201, response.content
    assert MiningRun.objects.get().params["corpus"] == spec.format(corpora=corpora)


@pytest.mark.parametrize("field", ["model", "corpus"])
@pytest.mark.parametrize("value", ["/data/a\\u0000b", "/data/\\ud800.txt"])
def test_a_path_no_file_can_have_is_a_400(carol, queued, roots, field, value):
    # A raw body: the test client cannot encode a lone surrogate.
    body = json.dumps({**BODY, field: "VALUE"}).replace("VALUE", value)
    response = client_for(carol).post(
        "/api/admin/mining-runs/", data=body, content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert field in field_errors(response)
    assert not MiningRun.objects.exists()


def test_a_model_folder_outside_the_roots_is_a_400_naming_them(carol, queued, roots, tmp_path):
    _, models, _ = roots
    for name in ("/etc", str(models / ".." / "corpora"), str(tmp_path)):
        message = _refused(_post_run(carol, model=name), "model", "FFKV_MODEL_ROOTS", models)
        assert "Hugging Face ids are always allowed" in message


def test_a_model_folder_holding_a_symlink_out_of_the_roots_is_a_400(carol, queued, roots):
    _, models, secret = roots
    folder = models / "tiny"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "vocab.txt").symlink_to(secret)  # a tokenizer would read it as its vocabulary
    message = _refused(_post_run(carol, model=str(folder)), "model", "FFKV_MODEL_ROOTS", models)
    assert "'vocab.txt'" in message


@pytest.mark.parametrize("name", ["{models}/tiny", "builtin:minilm", "gpt2", "org/model"])
def test_a_model_inside_the_roots_or_builtin_or_hub_is_accepted(carol, queued, roots, name):
    _, models, _ = roots
    (models / "tiny").mkdir()
    (models / "tiny" / "config.json").write_text("{}")
    (models / "tiny" / "self").symlink_to(models / "tiny")  # a loop inside stays inside
    response = _post_run(carol, model=name.format(models=models))
    assert response.status_code == 201, response.content


def test_runs_come_newest_first_with_their_duration_and_final_tokens_per_second(carol):
    start = timezone.now() - timedelta(hours=1)
    done = MiningRun.objects.create(
        study_name="old",
        params=BODY,
        status="done",
        tokens_total=6000,
        started_at=start,
        mining_started_at=start + timedelta(seconds=10),
        mining_finished_at=start + timedelta(seconds=40),
        finished_at=start + timedelta(seconds=65),
    )
    MiningShard.objects.create(
        run=done, index=0, start=0, end=10, status="done", sentences_done=10, tokens_done=6000
    )
    MiningRun.objects.filter(pk=done.pk).update(created_at=start)
    queued_run = MiningRun.objects.create(study_name="new", params=BODY)

    rows = client_for(carol).get("/api/admin/mining-runs/").json()

    assert [r["id"] for r in rows] == [queued_run.pk, done.pk]
    assert rows[0]["duration_seconds"] is None
    assert rows[0]["final_tokens_per_second"] is None
    assert rows[1]["duration_seconds"] == 65.0
    assert rows[1]["final_tokens_per_second"] == 200.0  # 6000 tokens in 30 s of mining
    assert rows[1]["progress"]["tokens_per_second"] == 0.0  # no shard running any more
