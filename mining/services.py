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
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotate.models import Study
from mining.core.config import MineConfig
from mining.core.errors import MiningError

from .loader import STUDY_EXISTS, study_load
from .models import MiningRun, MiningShard
from .sources import check_model, check_sources, corpus_roots, model_roots

# The views import this module: the engine (torch, numba) is imported inside the
# functions that run on the workers, never by a web process.
if TYPE_CHECKING:
    from mining.core.models import LoadedModel

STUDY_NAME_REQUIRED = "A study name is required."
RUN_ACTIVE = "A mining run for study {name!r} is already under way."
CANCELLED = "Cancelled by {user}."
PERTURB_TOP_N = 50  # the paper's §3.2 uses each key's top-50 trigger prefixes
PROGRESS_EVERY_S = 1.0  # how often a shard writes its progress row
CANCEL_CHECK_EVERY_S = 2.0
HEARTBEAT_MAX_EVERY_S = 30.0
STALE_CHECK_MAX_EVERY_S = 60.0
STALE_RUN = (
    "no worker heartbeat for {seconds} s: its work was queued again {requeues} times "
    "without a worker taking it up (FFKV_RUN_STALE_AFTER_S={stale_after})"
)
# The states in which some worker holds the run; a queued run waits for a free worker
# (its prepare message sits in the broker), which is not a stale run.
WORKING = (MiningRun.Status.PREPARING, MiningRun.Status.MINING, MiningRun.Status.MERGING)

_CONFIG_FIELDS = {f.name for f in dataclasses.fields(MineConfig)}
Progress = Callable[[int, int], None]


def run_dir(run: MiningRun) -> Path:
    # Named by the run's random work id, never its primary key: a fresh database over an
    # old data folder gives out the same keys again (DESIGN §3.3).
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
    created_by: Any = None,
) -> MiningRun:
    """Record a run after the checks that need no model (the rest come in prepare)."""
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
    return MiningRun.objects.create(study_name=study_name, params=params, created_by=created_by)


def mining_run_prepare(*, run: MiningRun) -> list[MiningShard]:
    """Load the model, check the keys, tokenize the corpus into the run's store, cut shards.

    Rerunnable: a store already built is reused, shard rows are created once. The work
    folder gets its manifest here; a folder that is not this run's is refused.
    """
    from mining.core import CorpusStore, build_corpus_store, resolve_keys, shard_ranges

    now = timezone.now()
    MiningRun.objects.filter(pk=run.pk).update(
        status=MiningRun.Status.PREPARING, started_at=now, heartbeat_at=now, requeues=0
    )
    config = mining_config(run)
    loaded = model_for(config)
    resolve_keys(config, loaded.n_layers, loaded.d_ff)  # bad keys fail before any work
    loaded.check_coefficient(config.coefficient)  # and "pre" on a gated family
    _claim_run_dir(run)
    store_path = Path(config.store_dir or "")
    if (store_path / "meta.json").is_file():
        store = CorpusStore.open(store_path)
    else:
        store = build_corpus_store(config, loaded, str(store_path), corpus_roots())
    ranges = shard_ranges(len(store), int(run.params.get("n_shards", 1)), config)
    with transaction.atomic():
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
    return list(run.shards.order_by("index"))


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
    """
    from mining.core import CorpusStore, mine_range

    run = shard.run
    if run.status != MiningRun.Status.MINING:
        return False  # cancelled or failed meanwhile, or already merged
    check_run_dir(run)
    config = mining_config(run)
    loaded = model_for(config)
    store = CorpusStore.open(config.store_dir or "")
    MiningShard.objects.filter(pk=shard.pk).update(
        status=MiningShard.Status.RUNNING,
        attempts=shard.attempts + 1,
        worker=(worker or this_worker())[:300],
    )
    mining_run_heartbeat(run_id=run.pk)
    started = time.monotonic()

    def write_progress(sentences: int, tokens: int) -> None:
        elapsed = max(time.monotonic() - started, 1e-6)
        MiningShard.objects.filter(pk=shard.pk).update(
            sentences_done=sentences, tokens_done=tokens, tokens_per_second=tokens / elapsed
        )

    throttled_write = _throttled(PROGRESS_EVERY_S, write_progress)
    # A sign of life per group of batches, not per batch: one more UPDATE every few s.
    throttled_beat = _throttled(heartbeat_every_s(), lambda: mining_run_heartbeat(run_id=run.pk))

    def on_progress(sentences: int, tokens: int) -> None:
        throttled_write(sentences, tokens)
        throttled_beat()
        if progress is not None:
            progress(sentences, tokens)

    def cancelled() -> bool:
        return MiningRun.objects.filter(pk=run.pk, cancel_requested=True).exists()

    partial = mine_range(
        loaded,
        store,
        config,
        shard.start,
        shard.end,
        checkpoint_path=shard_path(shard),
        progress=on_progress,
        should_stop=_throttled(CANCEL_CHECK_EVERY_S, cancelled),
    )
    with transaction.atomic():
        MiningShard.objects.filter(pk=shard.pk).update(
            status=MiningShard.Status.DONE,
            sentences_done=shard.end - shard.start,
            tokens_done=int(partial.meta["tokens_done"]),
        )
        locked = MiningRun.objects.select_for_update().get(pk=run.pk)
        pending = locked.shards.exclude(status=MiningShard.Status.DONE).exists()
        if pending or locked.status != MiningRun.Status.MINING:
            if locked.status == MiningRun.Status.MINING:
                mining_run_heartbeat(run_id=run.pk)
            return False
        locked.status = MiningRun.Status.MERGING
        locked.heartbeat_at = locked.mining_finished_at = timezone.now()
        locked.requeues = 0
        locked.save(update_fields=["status", "heartbeat_at", "mining_finished_at", "requeues"])
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
    from mining.core.value_agreement import value_agreement

    run.refresh_from_db()
    if run.study_id is not None:
        return Study.objects.get(pk=run.study_id)
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
    perturbation: dict[tuple[int, int], dict[str, float | None]] = {}
    if run.params.get("perturb"):
        # §3.2 / Figure 3: remove the first, last or a random token of each of the key's
        # top-50 trigger prefixes and measure the relative change of its coefficient.
        top_n = min(PERTURB_TOP_N, config.keep_k)
        for item in perturb(loaded, store, merged, keys, top_n=top_n, seed=config.seed):
            perturbation[(item.layer, item.index)] = {k: item.mean(k) for k in PERTURB_KINDS}
    study = study_load(
        run=run,
        config=config,
        model=model_info(loaded),
        results=results,
        hist_edges=list(HIST_EDGES),
        perturbation=perturbation,
        value_agreement=value_agreement(loaded, store, merged),
        definitions=mining_definitions(loaded, config),
    )
    MiningRun.objects.filter(pk=run.pk).update(
        status=MiningRun.Status.DONE, finished_at=timezone.now()
    )
    for shard in shards:  # the store stays: perturbation and re-scoring read it later
        shard_path(shard).unlink(missing_ok=True)
    return study


# --- heartbeat and stale runs -----------------------------------------------------------


def heartbeat_every_s() -> float:
    return min(HEARTBEAT_MAX_EVERY_S, settings.RUN_STALE_AFTER_S / 10)


def stale_check_every_s() -> float:
    return max(1.0, min(STALE_CHECK_MAX_EVERY_S, settings.RUN_STALE_AFTER_S / 5))


def mining_run_heartbeat(*, run_id: int, now: datetime | None = None) -> None:
    """A worker is at work on the run: record it, and forget earlier re-queues."""
    MiningRun.objects.filter(pk=run_id, status__in=WORKING).update(
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
    for run in MiningRun.objects.filter(status__in=WORKING, cancel_requested=False):
        last = _last_sign_of_life(run)
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
    MiningRun.objects.filter(pk=run.pk).exclude(status=MiningRun.Status.DONE).update(
        status=MiningRun.Status.FAILED, error=error, finished_at=timezone.now()
    )


def mining_run_cancel(*, run: MiningRun, user: Any = None) -> None:
    """Ask the shards to stop at their next check; a run not yet mining stops at once."""
    MiningRun.objects.filter(pk=run.pk).update(cancel_requested=True)
    MiningRun.objects.filter(
        pk=run.pk,
        status__in=[MiningRun.Status.QUEUED, MiningRun.Status.PREPARING, MiningRun.Status.MINING],
    ).update(
        status=MiningRun.Status.CANCELLED,
        error=CANCELLED.format(user=getattr(user, "username", "an admin")),
        finished_at=timezone.now(),
    )


def mining_run_discard_files(*, run: MiningRun) -> None:
    shutil.rmtree(run_dir(run), ignore_errors=True)
