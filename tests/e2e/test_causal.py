"""The Causal page (docs/causal.md): carol traces "The Eiffel Tower is in", opens a key the
trace links to, then ablates the keys alice labelled semantic in one layer and reads the
ablation against its random-key control; a real worker process runs the jobs. A tiny GPT-2
knows no fact: here the page and the jobs are under test, the figures are checked against
the model in tests/unit/mining/test_causal.py."""

from __future__ import annotations

import re

import pytest
from django.conf import settings as django_settings
from playwright.sync_api import expect

from annotate.models import Key, Study
from mining.models import CausalJob
from tests.e2e.conftest import log_in
from tests.e2e.helpers import (  # noqa: F401 (patient_expect is an autouse fixture)
    assert_no_horizontal_overflow,
    ids_from,
    patient_expect,
)
from tests.factories import PASSWORD, annotate_key
from tests.integration.conftest import (  # noqa: F401 (fixtures: real worker processes)
    postgres,
    redis_broker,
    start_worker,
)
from tests.integration.processes import tiny_study_mined_here

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.django_db(transaction=True)]

STUDY = "tiny: causal"


def test_carol_traces_a_fact_opens_a_linked_key_and_ablates_alices_semantic_keys(
    page,
    start_worker,  # noqa: F811 (the fixture imported above)
    settings,
    tmp_path,
    alice,
    carol,
):
    ids_from(104_233, Study, Key, CausalJob)
    # every key is mined: every key a figure names has a page
    # A model named by a long path, with nowhere to break, as a server's models often are:
    # the page's note names it (the full parallel suite's longer temporary paths once made
    # the page 6 px too wide at 390 px).
    folder = tmp_path / "models_kept_on_a_long_lived_annotation_server"
    study = tiny_study_mined_here(settings, folder, STUDY, carol, 200, all_keys=True, top_k=5)
    semantic = list(Key.objects.filter(study=study, layer=2).order_by("index"))[:3]
    for key in semantic:
        annotate_key(key, alice, [("semantic", [1, 2, 3])])
    annotate_key(Key.objects.get(study=study, layer=1, index=0), alice, [("semantic", [1, 2, 3])])
    start_worker(queues=["gpu"], data_dir=django_settings.DATA_DIR)

    log_in(page, "carol", PASSWORD)
    expect(page).to_have_url(re.compile(r"/manage$"))
    page.goto(f"/manage/studies/{study.pk}")
    page.get_by_test_id("causal-link").click()
    expect(page.get_by_role("heading", name=f"Causal probes: {STUDY}")).to_be_visible()

    # Causal tracing with ROME's defaults.
    tracing = page.get_by_role("form", name="Causal tracing")
    tracing.get_by_label("Prompt").fill("The Eiffel Tower is in")
    tracing.get_by_label("Subject").fill("The Eiffel Tower")
    tracing.get_by_label("Answer").fill(" Paris")
    tracing.get_by_role("button", name="Run the tracing").click()
    result = page.get_by_test_id("causal-result")
    expect(result).to_have_attribute("data-status", "done", timeout=120_000)
    trace = page.get_by_test_id("trace-result")
    for kind in ("hidden", "mlp", "attn"):
        expect(trace.get_by_test_id(f"heatmap-{kind}")).to_be_visible()
    expect(trace.get_by_test_id("trace-p-clean")).to_contain_text("%")
    job = CausalJob.objects.get(study=study, kind="tracing")
    assert job.params["answer"] == " Paris" and job.params["noise"] == 3.0
    top = job.result["keys"]["top"][0]
    link = trace.get_by_test_id("trace-keys").get_by_role(
        "link", name=f"L{top['layer']} · key {top['index']}"
    )
    key = Key.objects.get(study=study, layer=top["layer"], index=top["index"])
    expect(link).to_have_attribute("href", f"/manage/review/keys/{key.pk}")
    link.click()
    expect(page).to_have_url(re.compile(rf"/manage/review/keys/{key.pk}$"))
    page.go_back()

    # The keys alice labelled semantic in layer 2, against as many random keys of layer 2.
    page.get_by_role("tab", name="Key ablation").click()
    ablation = page.get_by_role("form", name="Key ablation")
    ablation.get_by_role("radio", name="Their patterns' kind").check()
    ablation.get_by_label("Annotator").fill("alice")
    ablation.get_by_label("Only in layers").fill("2")
    ablation.get_by_label("Random prefixes").fill("40")
    ablation.get_by_role("button", name="Run the ablation").click()
    expect(result).to_contain_text("Key ablation", timeout=30_000)
    expect(result).to_have_attribute("data-status", "done", timeout=120_000)
    own = page.get_by_test_id("ablation-own-layers")
    expect(own).to_contain_text("Random keys (control)")
    expect(own).to_contain_text("Layer 2")
    expect(page.get_by_test_id("ablation-random-layers")).to_contain_text("Overall")
    job = CausalJob.objects.get(study=study, kind="ablation")
    assert job.params["group"]["resolved"] == [[2, k.index] for k in semantic]
    assert len(job.result["control_keys"]) == 3
    assert all(layer == 2 for layer, _ in job.result["control_keys"])
    keys = page.get_by_test_id("ablation-own-keys")
    for k in semantic:
        expect(keys.get_by_role("link", name=f"L2 · key {k.index}")).to_be_visible()

    # Each width as a desktop or a phone opens the page: loaded at that width, the
    # ablation's result opened from the job list.
    for width in (390, 1024, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        page.reload()
        page.get_by_role("button", name=f"Show job {job.pk} (Key ablation)").click()
        expect(page.get_by_test_id("ablation-result")).to_be_visible()
        assert_no_horizontal_overflow(page, settle_ms=10_000)
