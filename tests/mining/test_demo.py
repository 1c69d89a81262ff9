"""`make demo`'s set-up step: accounts made once, printed, reused on the next run; the
demo study's mining run, queued for the worker, naming alice and bob."""

import json
import signal
from unittest import mock

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from annotate.models import Study
from annotate.permissions import user_is_annotator
from mining.management.commands import demo
from mining.models import MiningRun, MiningShard
from tests.conftest import SMOLLM2_GROUP

pytestmark = pytest.mark.django_db


def test_demo_setup_creates_the_accounts_and_is_idempotent(settings, tmp_path, capsys):
    settings.DATA_DIR = tmp_path
    call_command("demo", setup_only=True, no_mine=True)
    first = capsys.readouterr().out
    accounts = json.loads((tmp_path / "demo-accounts.json").read_text())
    assert set(accounts) == {"carol", "alice", "bob"}
    for name, password in accounts.items():
        assert f"password: {password}" in first
        user = authenticate(username=name, password=password)
        assert user is not None
    carol = authenticate(username="carol", password=accounts["carol"])
    alice = authenticate(username="alice", password=accounts["alice"])
    assert carol is not None and carol.is_staff and not user_is_annotator(carol)
    assert alice is not None and not alice.is_staff and user_is_annotator(alice)

    call_command("demo", setup_only=True, no_mine=True)
    assert json.loads((tmp_path / "demo-accounts.json").read_text()) == accounts
    assert authenticate(username="bob", password=accounts["bob"]) is not None


def test_the_demo_study_is_one_run_that_names_alice_and_bob_and_its_guidelines(settings, tmp_path):
    settings.DATA_DIR = tmp_path
    call_command("demo", setup_only=True, no_mine=True)
    run = demo.demo_run_ensure(sentences=40)
    assert run is not None and run.status == MiningRun.Status.QUEUED
    assert run.study_name == demo.DEMO_STUDY and run.created_by.username == "carol"
    assert (run.params["model"], run.params["corpus"]) == (demo.DEMO_MODEL, demo.DEMO_CORPUS)
    assert (run.params["max_sentences"], run.params["keys_per_layer"]) == (40, 2)
    assert run.params["compose_prefixes"] == demo.DEMO_COMPOSE_PREFIXES  # §5 after mining
    assert run.params["checkpoint_every"] == demo.DEMO_CHECKPOINT_EVERY  # a stop loses little
    assert sorted(run.assign_to.values_list("username", flat=True)) == ["alice", "bob"]
    assert run.assign_batch == demo.DEMO_BATCH
    assert run.guidelines == demo.DEMO_GUIDELINES_FILE.read_text(encoding="utf-8")

    # A second start while it is under way (or after a stop) finds the same run.
    assert demo.demo_run_ensure(sentences=40) == run
    MiningRun.objects.filter(pk=run.pk).update(status=MiningRun.Status.MINING)
    assert demo.demo_run_ensure(sentences=40) == run
    assert MiningRun.objects.count() == 1
    # Once its study is there, nothing is mined again.
    study = Study.objects.create(name=demo.DEMO_STUDY, model_name="m", corpus="c")
    MiningRun.objects.filter(pk=run.pk).update(status=MiningRun.Status.DONE, study=study)
    assert demo.demo_run_ensure(sentences=40) is None
    assert MiningRun.objects.count() == 1


def test_a_demo_stopped_while_mining_sends_the_shards_not_done_again(settings, tmp_path):
    settings.DATA_DIR = tmp_path
    call_command("demo", setup_only=True, no_mine=True)
    run = demo.demo_run_ensure(sentences=40)
    MiningRun.objects.filter(pk=run.pk).update(status=MiningRun.Status.MINING)
    run.refresh_from_db()
    done = MiningShard.objects.create(run=run, index=0, start=0, end=20, status="done")
    pending = MiningShard.objects.create(run=run, index=1, start=20, end=40, status="running")
    with (
        mock.patch("mining.tasks.prepare_run.delay") as prepare,
        mock.patch("mining.tasks.mine_shard.delay") as shard,
        mock.patch("mining.tasks.merge_run.delay") as merge,
    ):
        demo.Command()._send(run)
    prepare.assert_not_called()
    merge.assert_not_called()
    shard.assert_called_once_with(pending.pk)
    assert done.pk != pending.pk


def test_the_demo_serves_on_the_port_asked_for_with_a_worker_for_both_queues():
    web, worker = demo.demo_processes(8060)
    assert "gunicorn" in web and web[web.index("--bind") + 1] == "127.0.0.1:8060"
    assert "celery" in worker and worker[worker.index("-Q") + 1] == "celery,gpu"
    # On Ctrl-C the worker is not left to finish its shard (minutes): SIGQUIT, then
    # SIGKILL after a few seconds; the web server gets the usual SIGTERM.
    child = mock.Mock()
    child.args = worker
    assert demo._stopping(child) == (signal.SIGQUIT, 5.0)
    child.args = web
    assert demo._stopping(child)[0] == signal.SIGTERM


@pytest.mark.slow
@SMOLLM2_GROUP
def test_demo_mines_the_demo_study_and_assigns_it_to_both_annotators(settings, tmp_path, smollm2):
    from annotate.models import Assignment

    settings.DATA_DIR = tmp_path
    # mined in this process, then composed over a slice of 16 prefixes
    call_command("demo", setup_only=True, sentences=40, compose_prefixes=16)
    study = Study.objects.get(name="demo: SmolLM2-135M on wiki-vital")
    assert (study.model_name, study.n_layers, study.d_ff, study.is_causal) == (
        "builtin:smollm2-135m",
        30,
        1536,
        True,
    )
    assert study.keys.count() == 60
    assert sorted(set(study.keys.values_list("layer", flat=True))) == list(range(1, 31))
    # §4 over every key of the 30 layers, stored with the study
    assert [row["layer"] for row in study.value_agreement["layers"]] == list(range(1, 31))
    assert all(row["n_keys"] == 1536 for row in study.value_agreement["layers"])
    # §5: sparsity from the pass, and the composition job the demo runs after mining, both
    # over the 30 layers, the composition on sentences after the 40 mined, with and
    # without SmolLM2's final RMSNorm.
    assert [row["layer"] for row in study.sparsity["layers"]] == list(range(1, 31))
    assert [row["layer"] for row in study.composition["layers"]] == list(range(1, 31))
    assert study.composition["slice"]["held_out"] == 16
    assert study.composition["final_norm"] == [False, True]
    assert set(study.composition["layers"][0]["none_agree_share"]) == {
        "without_final_norm",
        "with_final_norm",
    }
    prefix = study.keys.first().prefixes.get(rank=1)
    assert prefix.sentence and prefix.trigger_token
    assignments = Assignment.objects.filter(batch__study=study)
    assert sorted(a.annotator.username for a in assignments) == ["alice", "bob"]
    assert all(a.keys.count() == 60 for a in assignments)  # overlap 2: both see every key

    example = Study.objects.get(name__startswith="example:")  # fixtures/example-study.jsonl
    assert example.keys.exists()
    # its work belongs to its own (inactive) example annotators, never to alice or bob
    assert not Assignment.objects.filter(
        batch__study=example, annotator__username__in=["alice", "bob"]
    ).exists()
    assert study.mining_definitions["checkpoint_note"].count("dequantized from 4 bits") == 1

    # The demo study has guidelines (version 1), which alice and bob read before their
    # first key; the example study (archived) has none.
    guidelines = list(study.guidelines.values_list("version", "created_by__username"))
    assert guidelines == [(1, "carol")]
    text = study.guidelines.get().text
    assert "3" in text and "shallow" in text and "semantic" in text
    assert not example.guidelines.exists()

    call_command("demo", setup_only=True, sentences=40)  # idempotent: nothing mined again
    assert Study.objects.count() == 2
    assert MiningRun.objects.count() == 1
    assert Assignment.objects.filter(batch__study=study).count() == 2
    assert study.guidelines.count() == 1


def test_a_second_stop_signal_while_the_demo_stops_is_ignored_not_a_traceback():
    # Ctrl-C pressed twice, or `kill` sent to the whole process group, used to interrupt
    # the shutdown itself with a second KeyboardInterrupt and its traceback.
    saved = {signum: signal.getsignal(signum) for signum in demo.STOP_SIGNALS}
    try:
        for signum in demo.STOP_SIGNALS:
            signal.signal(signum, demo.stop_on_first_signal)
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGTERM)
        signal.raise_signal(signal.SIGTERM)  # while stopping: ignored
        signal.raise_signal(signal.SIGINT)
        assert all(signal.getsignal(s) == signal.SIG_IGN for s in demo.STOP_SIGNALS)
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
