"""Mining runs: create, prepare (tokenize, cut shards), mine shards, merge and load.

The same functions serve the Celery tasks (one shard per task on queue ``gpu``) and the
``mine`` command running everything in-process; ``mining.core`` does the work.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import socket
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotate.models import Study
from annotate.permissions import ANNOTATOR_GROUP, user_is_annotator
from annotate.services.batches import assignment_create_with_overlap, batch_create
from annotate.services.guidelines import guideline_publish
from annotate.services.scores import scores_queue
from annotate.services.suggestions import suggestions_queue
from mining.core.config import MineConfig
from mining.core.errors import MiningError, MiningStopped

from .loader import STUDY_EXISTS, study_load
from .models import MiningRun, MiningShard
from .sources import check_model, check_sources, corpus_roots, model_roots

# The views import this module: the engine (torch, numba) is imported inside the
# functions that run on the workers, never by a web process.
if TYPE_CHECKING:
    from mining.core.models import LoadedModel

STUDY_NAME_REQUIRED = "A study name is required."
RUN_ACTIVE = "A mining run for study {name!r} is already under way."
ASSIGN_NOT_ANNOTATOR = "{username!r} is not an active annotator: the study cannot be given to them."
GUIDELINES_NEED_AUTHOR = "Guidelines for the new study need the run's creator as their author."
ASSIGN_BATCH_DEFAULT = "all keys"
CANCELLED = "Cancelled by {user}."
STOPPED = "run {run} is {status}{cancelled}: {what} stopped"
MEMORY_TOPS = "memory_tops.npz"  # each key's own top token (§4), saved by the merge
PERTURB_TOP_N = 50  # the paper's §3.2 uses each key's top-50 trigger prefixes
PROGRESS_EVERY_S = 1.0  # how often a shard writes its progress row
CANCEL_CHECK_EVERY_S = 2.0
HEARTBEAT_MAX_EVERY_S = 30.0
STALE_CHECK_MAX_EVERY_S = 60.0
STALE_RUN = (
    "no worker heartbeat for {seconds} s: its work was queued again {requeues} times "
    "without a worker taking it up (FFKV_RUN_STALE_AFTER_S={stale_after})"
)
STALE_CANCEL = (
    "the cancel was asked for and no worker gave a sign of life for {seconds} s after it "
    "(FFKV_RUN_STALE_AFTER_S={stale_after}): the run ended as cancelled"
)
# The states in which some worker holds the run; a queued run waits for a free worker
# (its prepare message sits in the broker), which is not a stale run.
WORKING = (MiningRun.Status.PREPARING, MiningRun.Status.MINING, MiningRun.Status.MERGING)
# The states a run can still be cancelled from: all until the study's load commits.
ACTIVE = (MiningRun.Status.QUEUED, *WORKING)

_CONFIG_FIELDS = {f.name for f in dataclasses.fields(MineConfig)}
Progress = Callable[[int, int], None]


def run_dir(run: MiningRun) -> Path:
    # Named by the run's random work id, never its primary key: a fresh database over an
    # old data folder gives out the same keys again.
    return Path(settings.DATA_DIR) / "mining" / run.work_id


def shard_path(shard: MiningShard) -> Path:
    return run_dir(shard.run) / f"shard-{shard.index:04d}.pt"


def this_worker() -> str:
    """Names the process that mines a shard, recorded on the shard."""
    return f"{socket.gethostname()} pid {os.getpid()}"


def mining_config(run: MiningRun) -> MineConfig:
    params = {k: v for k, v in run.params.items() if k in _CONFIG_FIELDS}
    if params.get("key_list") is not None:
        params["key_list"] = [tuple(pair) for pair in params["key_list"]]
    params["store_dir"] = str(run_dir(run) / "store")
    return MineConfig(**params)


# --- the run folder's manifest ------------------------------------------------------

MANIFEST = "manifest.json"
MANIFEST_FORMAT = "ffkv.mining-run/v1"
# The MineConfig fields that decide what the folder holds (the tokenized store, the
# shards' partial top-K) and what is mined from it. Left out: model and corpus (kept
# at the top of the manifest), checkpoint_every (when a shard saves, not what),
# store_dir (a place inside this folder) and extra (free-form notes).
MANIFEST_CONFIG_FIELDS = tuple(
    sorted(_CONFIG_FIELDS - {"model", "corpus", "checkpoint_every", "store_dir", "extra"})
)
_MANIFEST_CHECKED = ("format", "work_id", "model", "corpus", "config")


def run_manifest(run: MiningRun) -> dict[str, Any]:
    """What ``manifest.json`` of ``run``'s folder says, less its creation time."""
    config = mining_config(run).to_dict()
    manifest = {
        "format": MANIFEST_FORMAT,
        "work_id": run.work_id,
        "model": config["model"],
        "corpus": config["corpus"],
        "config": {name: config[name] for name in MANIFEST_CONFIG_FIELDS},
    }
    # Through JSON and back, so that it compares equal to a manifest read from disk
    # (key_list's tuples come back as lists).
    result: dict[str, Any] = json.loads(json.dumps(manifest))
    return result


def _write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    # Temp file + os.replace: a reader never sees half a manifest.
    tmp = folder / f".{MANIFEST}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, folder / MANIFEST)


def _manifest_differences(found: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    differences = []
    for name in _MANIFEST_CHECKED:
        if name == "config" and isinstance(found.get(name), dict):
            for field in MANIFEST_CONFIG_FIELDS:
                here, wanted = found["config"].get(field), expected["config"][field]
                if here != wanted:
                    differences.append(f"config {field} is {here!r}, this run's is {wanted!r}")
        elif found.get(name) != expected[name]:
            differences.append(f"{name} is {found.get(name)!r}, this run's is {expected[name]!r}")
    return differences


def check_run_dir(run: MiningRun) -> None:
    """Refuse a work folder that is not this run's: its manifest must be there, readable
    and match the run (work id, model, corpus, config). Never resume or reuse another's."""
    folder = run_dir(run)
    path = folder / MANIFEST
    if not folder.is_dir():
        raise MiningError(f"run folder {folder} does not exist: was it deleted? Start a new run.")
    if not path.is_file():
        raise MiningError(
            f"run folder {folder} has no {MANIFEST}: it may hold another run's files; "
            "refused, nothing in it is reused"
        )
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MiningError(
            f"run folder {folder}: {MANIFEST} is unreadable ({exc}); refused, nothing in it "
            "is reused"
        ) from exc
    if not isinstance(found, dict):
        raise MiningError(
            f"run folder {folder}: {MANIFEST} is not a JSON object; refused, nothing in it "
            "is reused"
        )
    differences = _manifest_differences(found, run_manifest(run))
    if differences:
        raise MiningError(
            f"run folder {folder} does not belong to this run: {'; '.join(differences)}; "
            "refused, nothing in it is reused"
        )


def _claim_run_dir(run: MiningRun) -> None:
    """Give a new (or empty) folder its manifest; check the manifest of any other."""
    folder = run_dir(run)
    folder.mkdir(parents=True, exist_ok=True)
    # Only a manifest left half-written by a killed prepare may be here beside nothing.
    leftovers = [p for p in folder.iterdir() if not p.name.startswith(f".{MANIFEST}.")]
    if not leftovers:
        _write_manifest(folder, {**run_manifest(run), "created_at": timezone.now().isoformat()})
    check_run_dir(run)


@lru_cache(maxsize=2)
def _cached_model(name: str, device: str, dtype: str) -> LoadedModel:
    from mining.core import load_model

    # A worker process mines many shards of the same model: load it once.
    return load_model(name, device=device, dtype=dtype, roots=model_roots())


def model_for(config: MineConfig) -> LoadedModel:
    check_model(config.model)  # again on every use: the roots or the folder may change
    return _cached_model(config.model, config.device, config.dtype)


@transaction.atomic
def mining_run_create(
    *,
    study_name: str,
    config: MineConfig,
    n_shards: int = 1,
    perturb: bool = False,
    compose_prefixes: int = 0,
    created_by: Any = None,
    assign_to: Sequence[Any] = (),
    assign_batch: str = "",
    guidelines: str = "",
) -> MiningRun:
    """Record a run after the checks that need no model (the rest come in prepare).

    ``assign_to`` (active annotators), ``assign_batch`` and ``guidelines``: what the
    study's load hands over (``mining_run_hand_over``). ``compose_prefixes``: the slice
    of the composition analysis queued once the study is loaded (0: none)."""
    study_name = study_name.strip()
    if not study_name:
        raise MiningError(STUDY_NAME_REQUIRED)
    config.validate()
    check_sources(config)  # local files only inside FFKV_CORPUS_ROOTS / FFKV_MODEL_ROOTS
    if n_shards < 1:
        raise MiningError("the number of shards must be at least 1")
    if Study.objects.filter(name=study_name).exists():
        raise MiningError(STUDY_EXISTS.format(name=study_name))
    active = MiningRun.objects.filter(study_name=study_name, study__isnull=True).exclude(
        status__in=[MiningRun.Status.FAILED, MiningRun.Status.CANCELLED]
    )
    if active.exists():
        raise MiningError(RUN_ACTIVE.format(name=study_name))
    params = {k: v for k, v in config.to_dict().items() if k != "store_dir"}
    if params.get("key_list") is not None:
        params["key_list"] = [list(pair) for pair in params["key_list"]]
    params["n_shards"] = n_shards
    params["perturb"] = perturb
    if compose_prefixes < 0:
        raise MiningError("the composition slice cannot be negative")
    params["compose_prefixes"] = compose_prefixes
    annotators = list(assign_to)
    for user in annotators:
        if not user_is_annotator(user):
            raise MiningError(ASSIGN_NOT_ANNOTATOR.format(username=user.get_username()))
    if guidelines.strip() and created_by is None:
        raise MiningError(GUIDELINES_NEED_AUTHOR)
    run = MiningRun.objects.create(
        study_name=study_name,
        params=params,
        created_by=created_by,
        assign_batch=assign_batch.strip()[:200] if annotators else "",
        guidelines=guidelines if guidelines.strip() else "",
    )
    run.assign_to.set(annotators)
    return run


def mining_run_hand_over(*, run: MiningRun, study: Study) -> None:
    """What the run's creator asked for once the study is there: its keys for the
    run's annotators, and its first guidelines. Called inside the load's transaction, so
    that the run is done exactly when the annotators hold their keys, once.

    One batch of all the study's keys, given whole to each annotator named on the run
    who is still an active annotator (overlap = their number: every key seen by all of
    them, as the paper's agreement needs); the others are skipped, not refused, so that
    an account closed while the run mined costs no mining."""
    annotators = list(
        run.assign_to.filter(is_active=True, groups__name=ANNOTATOR_GROUP).order_by("pk")
    )
    if run.guidelines and run.created_by is not None:
        guideline_publish(study=study, text=run.guidelines, author=run.created_by)
    if not annotators:
        return
    keys = list(study.keys.order_by("layer", "index"))
    if not keys:
        return
    batch = batch_create(
        study=study,
        name=run.assign_batch or ASSIGN_BATCH_DEFAULT,
        keys=keys,
        created_by=run.created_by,
    )
    assignment_create_with_overlap(batch=batch, annotators=annotators, overlap=len(annotators))


def mining_run_prepare(*, run: MiningRun) -> list[MiningShard]:
    """Load the model, check the keys, tokenize the corpus into the run's store, cut shards.

    Rerunnable: a store already built is reused, shard rows are created once. The work
    folder gets its manifest here; a folder that is not this run's is refused.
    """
    from mining.core import CorpusStore, build_corpus_store, resolve_keys, shard_ranges

    now = timezone.now()
    # Conditional: a cancel that came after the task read the run (or while the engine
    # was being imported above) is never overwritten.
    started = _alive(run, MiningRun.Status.QUEUED, MiningRun.Status.PREPARING).update(
        status=MiningRun.Status.PREPARING, started_at=now, heartbeat_at=now, requeues=0
    )
    if not started:
        current = MiningRun.objects.get(pk=run.pk)
        if current.cancel_requested or current.finished:
            raise MiningStopped(_stopped(current, "prepare"))
        return list(current.shards.order_by("index"))  # prepared already: nothing to do
    stop = _stop_unless(run, MiningRun.Status.PREPARING, "prepare")
    config = mining_config(run)
    loaded = model_for(config)
    resolve_keys(config, loaded.n_layers, loaded.d_ff)  # bad keys fail before any work
    loaded.check_coefficient(config.coefficient)  # and "pre" on a gated family
    stop()
    _claim_run_dir(run)
    store_path = Path(config.store_dir or "")
    if (store_path / "meta.json").is_file():
        store = CorpusStore.open(store_path)
    else:
        store = build_corpus_store(
            config,
            loaded,
            str(store_path),
            corpus_roots(),
            should_stop=_throttled(
                CANCEL_CHECK_EVERY_S, lambda: not _still(run, MiningRun.Status.PREPARING)
            ),
        )
    ranges = shard_ranges(len(store), int(run.params.get("n_shards", 1)), config)
    with transaction.atomic():
        locked = MiningRun.objects.select_for_update().get(pk=run.pk)
        if locked.status != MiningRun.Status.PREPARING or locked.cancel_requested:
            raise MiningStopped(_stopped(locked, "prepare"))
        for index, (start, end) in enumerate(ranges):
            MiningShard.objects.get_or_create(
                run=run,
                index=index,
                defaults={"start": start, "end": end, "tokens_total": store.tokens_in(start, end)},
            )
        MiningRun.objects.filter(pk=run.pk).update(
            status=MiningRun.Status.MINING,
            mining_started_at=timezone.now(),
            mining_finished_at=None,
            sentences_total=len(store),
            tokens_total=store.n_tokens,
            sentences_truncated=int(store.meta.get("n_truncated", 0)),
        )
    return list(MiningShard.objects.filter(run_id=run.pk).order_by("index"))


def _alive(run: MiningRun, *statuses: str) -> Any:
    """The run's row, if it is in one of ``statuses`` and no cancel was asked for."""
    return MiningRun.objects.filter(pk=run.pk, status__in=statuses, cancel_requested=False)


def _still(run: MiningRun, status: str) -> bool:
    return bool(_alive(run, status).exists())


def _stopped(run: MiningRun, what: str) -> str:
    cancelled = ", cancel asked for" if run.cancel_requested else ""
    return STOPPED.format(run=run.pk, status=run.status, cancelled=cancelled, what=what)


def _stop_unless(run: MiningRun, status: str, what: str) -> Callable[[], None]:
    """A check between steps: MiningStopped once the run left ``status`` (cancelled)."""

    def check() -> None:
        if not _still(run, status):
            raise MiningStopped(_stopped(MiningRun.objects.get(pk=run.pk), what))

    return check


def _throttled(every_s: float, fn: Callable[..., Any]) -> Callable[..., Any]:
    last = [0.0]

    def call(*args: Any) -> Any:
        now = time.monotonic()
        if now - last[0] >= every_s:
            last[0] = now
            return fn(*args)
        return None

    return call


def mining_shard_mine(
    *, shard: MiningShard, progress: Progress | None = None, worker: str | None = None
) -> bool:
    """Mine one shard, checkpointing, resuming a previous attempt if there was one.

    Returns True when this call completed the last shard of its run, so that the caller
    starts the merge (exactly one caller sees True). ``worker`` names the process on the
    shard's row (default: this host and pid); the run's heartbeat goes with progress.
    A shard of a run that is not mining returns False at once; one whose run is
    cancelled (before it starts, or while it mines) raises MiningStopped, and from the
    cancel on its row is never written again: not claimed, no progress, never done.
    """
    from mining.core import CorpusStore, mine_range

    run = MiningRun.objects.get(pk=shard.run_id)  # as it is now, not as the task read it
    if run.cancel_requested:
        raise MiningStopped(_stopped(run, f"shard {shard.index}"))
    if run.status != MiningRun.Status.MINING:
        return False  # failed meanwhile, or already merged
    check_run_dir(run)
    config = mining_config(run)
    loaded = model_for(config)
    store = CorpusStore.open(config.store_dir or "")
    if not _shard_claim(shard, worker or this_worker()):
        return False  # done already (a message delivered twice)
    mining_run_heartbeat(run_id=run.pk)
    started = time.monotonic()
    cancelled = [False]

    def write_progress(sentences: int, tokens: int) -> None:
        elapsed = max(time.monotonic() - started, 1e-6)
        with transaction.atomic():
            # The run's row locked against a cancel: a write is either before the cancel
            # commits or not at all.
            if not _lock_alive(run, MiningRun.Status.MINING):
                cancelled[0] = True
                return
            MiningShard.objects.filter(pk=shard.pk).update(
                sentences_done=sentences, tokens_done=tokens, tokens_per_second=tokens / elapsed
            )

    throttled_write = _throttled(PROGRESS_EVERY_S, write_progress)
    # A sign of life per group of batches, not per batch: one more UPDATE every few s.
    throttled_beat = _throttled(heartbeat_every_s(), lambda: mining_run_heartbeat(run_id=run.pk))

    def on_progress(sentences: int, tokens: int) -> None:
        if not cancelled[0]:
            throttled_write(sentences, tokens)
            throttled_beat()
        if progress is not None:
            progress(sentences, tokens)

    check_cancel = _throttled(
        CANCEL_CHECK_EVERY_S, lambda: not _still(run, MiningRun.Status.MINING)
    )

    def should_stop() -> bool:
        if not cancelled[0] and check_cancel():
            cancelled[0] = True
        return cancelled[0]

    partial = mine_range(
        loaded,
        store,
        config,
        shard.start,
        shard.end,
        checkpoint_path=shard_path(shard),
        progress=on_progress,
        should_stop=should_stop,
    )
    with transaction.atomic():
        locked = MiningRun.objects.select_for_update().get(pk=run.pk)
        if locked.cancel_requested:
            raise MiningStopped(_stopped(locked, f"shard {shard.index}"))
        if locked.status != MiningRun.Status.MINING:
            return False
        MiningShard.objects.filter(pk=shard.pk).update(
            status=MiningShard.Status.DONE,
            sentences_done=shard.end - shard.start,
            tokens_done=int(partial.meta["tokens_done"]),
        )
        pending = locked.shards.exclude(status=MiningShard.Status.DONE).exists()
        if pending:
            mining_run_heartbeat(run_id=run.pk)
            return False
        locked.status = MiningRun.Status.MERGING
        locked.heartbeat_at = locked.mining_finished_at = timezone.now()
        locked.requeues = 0
        locked.save(update_fields=["status", "heartbeat_at", "mining_finished_at", "requeues"])
        return True


def _lock_alive(run: MiningRun, status: str) -> bool:
    """Inside a transaction: lock the run's row if it is in ``status`` and not cancelled.
    A cancel (an UPDATE of that row) then waits for this transaction, and one that came
    first is seen here."""
    return _alive(run, status).select_for_update(no_key=True).values_list("pk").first() is not None


@transaction.atomic
def _shard_claim(shard: MiningShard, worker: str) -> bool:
    """Mark the shard running, only while its run is mining and not cancelled (checked
    under the run's row lock, so that a cancel is either before the claim or after it).
    False for a shard that is done already or a run no longer mining; MiningStopped for a
    cancelled run."""
    locked = MiningRun.objects.select_for_update().get(pk=shard.run_id)
    if locked.cancel_requested:
        raise MiningStopped(_stopped(locked, f"shard {shard.index}"))
    if locked.status != MiningRun.Status.MINING:
        return False
    current = MiningShard.objects.select_for_update().get(pk=shard.pk)
    if current.status == MiningShard.Status.DONE:
        return False
    MiningShard.objects.filter(pk=shard.pk).update(
        status=MiningShard.Status.RUNNING, attempts=F("attempts") + 1, worker=worker[:300]
    )
    return True


def mining_run_merge(*, run: MiningRun) -> Study:
    """Merge the shards' partial results, finalize the sampled keys, load the study."""
    from mining.core import (
        HIST_EDGES,
        CorpusStore,
        Partial,
        finalize,
        merge_partials,
        model_info,
        resolve_keys,
    )
    from mining.core.perturb import KINDS as PERTURB_KINDS
    from mining.core.perturb import perturb
    from mining.core.pipeline import mining_definitions
    from mining.core.sparsity import sparsity
    from mining.core.value_agreement import memory_tops, value_agreement

    run.refresh_from_db()
    if run.study_id is not None:
        return Study.objects.get(pk=run.study_id)
    stop = _stop_unless(run, MiningRun.Status.MERGING, "merge")
    stop()  # cancelled (or failed) before the merge began
    check_run_dir(run)
    mining_run_heartbeat(run_id=run.pk)
    config = mining_config(run)
    loaded = model_for(config)
    store = CorpusStore.open(config.store_dir or "")
    shards = list(run.shards.order_by("index"))
    merged = merge_partials([Partial.load(shard_path(shard)) for shard in shards])
    keys = resolve_keys(config, loaded.n_layers, loaded.d_ff)
    results = finalize(
        loaded,
        store,
        merged,
        keys,
        config.top_k,
        value_top_n=config.value_top_n,
        batch_size=config.batch_size,
    )
    stop()
    perturbation: dict[tuple[int, int], dict[str, float | None]] = {}
    if run.params.get("perturb"):
        # §3.2 / Figure 3: remove the first, last or a random token of each of the key's
        # top-50 trigger prefixes and measure the relative change of its coefficient.
        top_n = min(PERTURB_TOP_N, config.keep_k)
        for item in perturb(loaded, store, merged, keys, top_n=top_n, seed=config.seed):
            perturbation[(item.layer, item.index)] = {k: item.mean(k) for k in PERTURB_KINDS}
    tops = None
    if loaded.causal:
        # Each memory's own top token: §4 counts them here, and the composition
        # analysis (mining.composition) reads them from the run's folder.
        tops = memory_tops(loaded)
        part = run_dir(run) / f"{MEMORY_TOPS}.part"
        with open(part, "wb") as f:
            np.savez(f, **tops)  # type: ignore[arg-type]  # numpy's stub types **kwds as bool
        part.replace(run_dir(run) / MEMORY_TOPS)
    agreement = value_agreement(loaded, store, merged, tops)
    stop()
    # The last point at which a cancel wins: study_load locks the run's row and refuses
    # one that is no longer merging; from then on a cancel waits for this transaction,
    # which ends with the run done, and finds nothing to cancel.
    with transaction.atomic():
        study = study_load(
            run=run,
            config=config,
            model=model_info(loaded),
            results=results,
            hist_edges=list(HIST_EDGES),
            perturbation=perturbation,
            value_agreement=agreement,
            sparsity=sparsity(merged),
            definitions=mining_definitions(loaded, config),
        )
        mining_run_hand_over(run=run, study=study)
        MiningRun.objects.filter(pk=run.pk).update(
            status=MiningRun.Status.DONE, finished_at=timezone.now()
        )
        # The held-out scores of whatever the study holds (docs/evidence.md), once loaded.
        scores_queue(study_id=study.pk)
        # The machine's suggestions (docs/evidence.md, "Suggestions"), scored as made.
        suggestions_queue(study_id=study.pk)
        # §5 (docs/composition.md), where the run asked for it: after the two above,
        # which annotators wait for.
        compose_after_mining(run=run, study=study)
    for shard in shards:  # the store stays: perturbation and re-scoring read it later
        shard_path(shard).unlink(missing_ok=True)
    return study


def compose_after_mining(*, run: MiningRun, study: Study) -> None:
    """Queue the composition analysis the run asked for (``compose_prefixes``), in the
    study's load. One it cannot run is recorded as a failed job with the reason, for
    the report page, and the load goes on."""
    from .composition import composition_job_create
    from .models import CompositionJob

    prefixes = int(run.params.get("compose_prefixes") or 0)
    if not prefixes or not study.is_causal:
        return
    try:
        composition_job_create(
            study=study, prefixes=prefixes, seed=study.seed, created_by=run.created_by
        )
    except MiningError as exc:
        CompositionJob.objects.create(
            study=study,
            prefixes=prefixes,
            seed=study.seed,
            created_by=run.created_by,
            status=CompositionJob.Status.FAILED,
            error=str(exc),
            finished_at=timezone.now(),
        )


# --- heartbeat and stale runs -----------------------------------------------------------


def heartbeat_every_s() -> float:
    return min(HEARTBEAT_MAX_EVERY_S, settings.RUN_STALE_AFTER_S / 10)


def stale_check_every_s() -> float:
    return max(1.0, min(STALE_CHECK_MAX_EVERY_S, settings.RUN_STALE_AFTER_S / 5))


def mining_run_heartbeat(*, run_id: int, now: datetime | None = None) -> None:
    """A worker is at work on the run: record it, and forget earlier re-queues."""
    MiningRun.objects.filter(pk=run_id, status__in=WORKING, cancel_requested=False).update(
        heartbeat_at=now or timezone.now(), requeues=0
    )


@dataclasses.dataclass(frozen=True)
class StaleRun:
    """A stale run claimed for a re-queue: what to send again."""

    run_id: int
    status: str  # preparing → prepare_run; mining → mine_shard per shard; merging → merge_run
    shard_ids: tuple[int, ...] = ()


def _last_sign_of_life(run: MiningRun) -> datetime:
    return run.heartbeat_at or run.started_at or run.created_at


def mining_run_claim_stale(*, now: datetime | None = None) -> list[StaleRun]:
    """Runs some worker held whose heartbeat stopped: claim each for a re-queue, or fail it.

    A run is stale once its last heartbeat is older than FFKV_RUN_STALE_AFTER_S times
    (re-queues so far + 1): each re-queue gives the workers one more such window. Past
    FFKV_RUN_STALE_REQUEUES re-queues it fails, with the reason. Claims are conditional
    updates, so that of several processes checking at once one re-queues a run.
    Re-sending is safe: shards resume from their checkpoints, a finished shard returns at
    once, prepare reuses its store, and merge runs only while the run is merging.
    """
    now = now or timezone.now()
    window = timedelta(seconds=settings.RUN_STALE_AFTER_S)
    claimed: list[StaleRun] = []
    for run in MiningRun.objects.filter(status__in=WORKING):
        last = _last_sign_of_life(run)
        if run.cancel_requested:
            # Left "cancelling" (by a version that let a worker overwrite the cancel): it
            # is never sent again, and ends as cancelled once the window has passed.
            if last <= now - window:
                reason = STALE_CANCEL.format(
                    seconds=int((now - last).total_seconds()),
                    stale_after=settings.RUN_STALE_AFTER_S,
                )
                MiningRun.objects.filter(pk=run.pk, status=run.status).update(
                    status=MiningRun.Status.CANCELLED,
                    error=f"{run.error} {reason}".strip(),
                    finished_at=now,
                )
            continue
        if last > now - window * (run.requeues + 1):
            continue
        unchanged = MiningRun.objects.filter(
            pk=run.pk, status=run.status, requeues=run.requeues, heartbeat_at=run.heartbeat_at
        )
        if run.requeues >= settings.RUN_STALE_REQUEUES:
            error = STALE_RUN.format(
                seconds=int((now - last).total_seconds()),
                requeues=run.requeues,
                stale_after=settings.RUN_STALE_AFTER_S,
            )
            unchanged.update(status=MiningRun.Status.FAILED, error=error, finished_at=now)
            continue
        if not unchanged.update(requeues=F("requeues") + 1):
            continue  # a heartbeat or another checker came first
        shard_ids: tuple[int, ...] = ()
        if run.status == MiningRun.Status.MINING:
            pending = run.shards.exclude(status=MiningShard.Status.DONE).order_by("index")
            shard_ids = tuple(pending.values_list("pk", flat=True))
        claimed.append(StaleRun(run_id=run.pk, status=run.status, shard_ids=shard_ids))
    return claimed


def mining_run_fail(*, run: MiningRun, error: str) -> None:
    """Fail a run that is still under way; a run done, failed or cancelled stays so."""
    MiningRun.objects.filter(pk=run.pk, status__in=ACTIVE).update(
        status=MiningRun.Status.FAILED, error=error, finished_at=timezone.now()
    )


def mining_run_cancel(*, run: MiningRun, user: Any = None) -> str | None:
    """Cancel a run that is under way, at once, whatever its state; returns the state it
    was in, or None where it was over already (a run done stays done).

    Every worker's change of the run is conditional on the state it expects, so none
    can undo this: the prepare makes no shards, shards are not claimed and write no
    progress (those under way stop at their next check), the merge loads no study.
    Once the study's load has begun (it locks this row) the cancel waits for it and
    finds the run done. The work folder is kept, as for a failed run.
    """
    with transaction.atomic():
        locked = MiningRun.objects.select_for_update().filter(pk=run.pk).first()
        if locked is None or locked.status not in ACTIVE:
            return None
        MiningRun.objects.filter(pk=run.pk).update(
            cancel_requested=True,
            status=MiningRun.Status.CANCELLED,
            error=CANCELLED.format(user=getattr(user, "username", "an admin")),
            finished_at=timezone.now(),
        )
        return str(locked.status)


def mining_run_discard_files(*, run: MiningRun) -> None:
    shutil.rmtree(run_dir(run), ignore_errors=True)
