"""Alice's home while a study is mined for her (the demo's first start): she sees that her
keys are being mined, and how far, and her keys appear without a reload when the run
ends, loaded and handed over by a real worker process."""

from __future__ import annotations

import pytest
from django.conf import settings as django_settings
from playwright.sync_api import expect

from mining import services
from mining.core import MineConfig
from mining.models import MiningRun, MiningShard
from mining.tasks import mine_shard
from tests.e2e.conftest import log_in
from tests.e2e.helpers import (  # noqa: F401 (patient_expect is an autouse fixture)
    assert_no_horizontal_overflow,
    patient_expect,
)
from tests.factories import PASSWORD
from tests.integration.conftest import (  # noqa: F401 (fixtures: real worker processes)
    postgres,
    redis_broker,
    start_worker,
)
from tests.integration.processes import tiny_job

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.django_db(transaction=True)]

SENTENCES = 400
STUDY = "tiny: being mined for alice"


def test_alice_follows_her_study_being_mined_and_gets_its_keys_without_a_reload(
    page,
    start_worker,  # noqa: F811 (the fixture imported above)
    settings,
    tmp_path,
    alice,
    carol,
):
    settings.DATA_DIR = tmp_path / "data"
    model, corpus = tiny_job(tmp_path / "job", SENTENCES)
    # The worker process gets the same roots (tests/integration/conftest.worker_env).
    settings.FFKV_CORPUS_ROOTS = [corpus.parent]
    settings.FFKV_MODEL_ROOTS = [model.parent]
    config = MineConfig(
        model=str(model),
        corpus=str(corpus),
        sentences="lines",
        keys_per_layer=2,
        top_k=3,
        batch_size=8,
    )
    run = services.mining_run_create(
        study_name=STUDY,
        config=config,
        n_shards=2,
        created_by=carol,
        assign_to=[alice],
        assign_batch="tiny batch",
        guidelines="Read these first.",
    )
    # The run is half mined when alice arrives: prepared and its first shard mined here,
    # its second shard and the merge left to the worker.
    first, second = services.mining_run_prepare(run=run)
    services.mining_shard_mine(shard=first)
    run.refresh_from_db()
    assert run.status == MiningRun.Status.MINING
    half = first.end - first.start

    log_in(page, "alice", PASSWORD)
    notice = page.get_by_role("region", name="Your keys are being mined")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text(STUDY)
    expect(notice).to_contain_text("Mining")
    bar = notice.get_by_role("progressbar")
    expect(bar).to_have_attribute("aria-valuenow", str(half))
    expect(bar).to_have_attribute("aria-valuemax", str(run.sentences_total))
    expect(notice.get_by_test_id("preparing-counts")).to_contain_text(
        f"{half:,} / {run.sentences_total:,} sentences"
    )
    expect(page.get_by_test_id("assignments-empty")).to_have_count(0)
    for width in (390, 1024, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        assert_no_horizontal_overflow(page)
    page.evaluate("() => { window.__sameDocument = true; }")

    # The worker mines the second shard, merges, loads the study and gives her its keys.
    start_worker(queues=["gpu"], data_dir=django_settings.DATA_DIR)
    mine_shard.delay(second.pk)

    row = page.get_by_test_id("assignment-row")
    expect(row).to_contain_text("tiny batch", timeout=120_000)
    expect(row).to_contain_text(STUDY)
    expect(notice).to_have_count(0)
    assert page.evaluate("() => window.__sameDocument === true"), "the page was reloaded"
    run.refresh_from_db()
    assert run.status == MiningRun.Status.DONE
    assert MiningShard.objects.filter(run=run, status=MiningShard.Status.DONE).count() == 2
