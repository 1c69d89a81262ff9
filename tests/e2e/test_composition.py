"""§5 on the report page (docs/composition.md): a mined study's composition job, queued by
its run and done by a real worker process, shows its figures beside the paper's captions;
carol runs it again over another slice from the page and the new figures replace the old
without a reload. The page holds at 390, 1024 and 1440 px."""

from __future__ import annotations

import re

import pytest
from django.conf import settings as django_settings
from playwright.sync_api import expect

from mining.models import CompositionJob
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
from tests.integration.processes import tiny_study_mined_here

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.django_db(transaction=True)]

STUDY = "tiny: composed"


def test_carol_reads_the_composition_and_runs_it_again_over_another_slice(
    page,
    start_worker,  # noqa: F811 (the fixture imported above)
    settings,
    tmp_path,
    carol,
):
    # 200 of 300 sentences mined; the load queues the composition job
    study = tiny_study_mined_here(
        settings,
        tmp_path,
        STUDY,
        carol,
        300,
        keys_per_layer=2,
        top_k=3,
        max_sentences=200,
        compose_prefixes=40,
    )
    assert CompositionJob.objects.get(study=study).status == "queued"
    start_worker(queues=["gpu"], data_dir=django_settings.DATA_DIR)

    log_in(page, "carol", PASSWORD)
    expect(page).to_have_url(re.compile(r"/manage$"))
    page.goto(f"/manage/studies/{study.pk}/report")
    section = page.get_by_test_id("composition-section")
    status = page.get_by_test_id("composition-job-status")
    expect(status).to_have_attribute("data-status", "done", timeout=120_000)
    expect(status).to_contain_text("(40 prefixes)")
    expect(page.get_by_test_id("composition-prefixes")).to_have_text("40")
    expect(page.get_by_test_id("composition-held-out")).to_have_text("40")
    # The paper's model is named: these figures are not a replication of it.
    note = page.get_by_test_id("composition-note")
    expect(note).to_contain_text("16-layer model with d_ff 4,096")
    expect(note).to_contain_text("not a replication")
    expect(page.get_by_test_id("caption-agreement")).to_contain_text("Figure 8")
    for figure in ("active", "agreement", "residual", "change", "final-prob"):
        expect(page.get_by_test_id(f"chart-{figure}")).to_be_visible()
    # Both readings of the tiny GPT-2 (it has ln_f): the control switches them.
    page.get_by_role("radio", name="without final norm").check()
    expect(page.get_by_role("radio", name="without final norm")).to_be_checked()
    expect(page.get_by_test_id("sparsity-section")).to_be_visible()
    page.evaluate("() => { window.__sameDocument = true; }")

    form = page.get_by_role("form", name="Composition analysis")
    form.get_by_label("Prefixes in the slice").fill("60")
    form.get_by_role("button", name="Run the analysis").click()
    expect(page.get_by_test_id("composition-prefixes")).to_have_text("60", timeout=120_000)
    expect(status).to_have_attribute("data-status", "done")
    assert page.evaluate("() => window.__sameDocument === true"), "the page was reloaded"
    study.refresh_from_db()
    assert study.composition["n_prefixes"] == 60
    assert list(CompositionJob.objects.filter(study=study).values_list("status", "prefixes")) == [
        ("done", 60),
        ("done", 40),
    ]

    # A slice the corpus cannot give (300 sentences in all): the job fails with its reason
    # and the figures stay those of the last job that completed.
    form.get_by_label("Prefixes in the slice").fill("301")
    form.get_by_role("button", name="Run the analysis").click()
    expect(status).to_have_attribute("data-status", "failed", timeout=120_000)
    expect(page.get_by_test_id("composition-job-error")).to_contain_text(
        "larger than the corpus allows"
    )
    expect(page.get_by_test_id("composition-prefixes")).to_have_text("60")
    study.refresh_from_db()
    assert study.composition["n_prefixes"] == 60

    for width in (390, 1024, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        expect(section).to_be_visible()
        assert_no_horizontal_overflow(page, settle_ms=10_000)
