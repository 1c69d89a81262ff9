"""The §5 composition analysis of a study (docs/composition.md): its jobs, the slice of the
corpus they read, and where their figures are kept.

A job reads a held-out slice of the study's corpus: one prefix per sentence, from the
sentences that the study's mining did not read (those after its ``max_sentences``), in
corpus order. Where the corpus has fewer such sentences than the slice asks for (a run
that read the whole corpus), the rest is a seeded sample of the mined sentences, and the
stored ``slice`` says how many came from where. A slice larger than the corpus allows
(more prefixes than sentences in all) is refused before anything is written. Each
sentence's prefix ends at a real token drawn uniformly with the job's seed.

The figures go to ``Study.composition`` in one write when the job completes; a job run
twice (a message delivered again) finds itself done and writes nothing more, and the
same job computed again gives the same figures (the slice and the forward are
deterministic), so the study holds one set of figures, the last job's.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from django.db import transaction
from django.utils import timezone

from annotate.models import Study
from mining.core.errors import MiningError

from .jobs import job_run, job_send_on_commit
from .models import CompositionJob, MiningRun
from .services import MEMORY_TOPS, mining_config, model_for, run_dir
from .sources import corpus_roots

if TYPE_CHECKING:
    from mining.core.models import LoadedModel
    from mining.core.store import CorpusStore

DEFAULT_PREFIXES = 4000  # the paper's §5 used 4,000 prefixes of the validation set
MAX_PREFIXES = 50_000
NOT_MINED = (
    "study {name!r} was not mined here (imported, or its mining run is gone): the "
    "composition analysis needs its model and its corpus store"
)
STORE_GONE = (
    "the corpus store of study {name!r} is gone ({path}): the composition analysis reads "
    "its sentences; mine the study again"
)
ENCODER = (
    "study {name!r} mined an encoder: it predicts no next token, so the composition "
    "analysis does not apply (only the sparsity figures do)"
)
TOO_MANY = (
    "a slice of {n} prefixes is larger than the corpus allows: one prefix a sentence, and "
    "the corpus has {held} sentences that mining did not read and {mined} that it did"
)
PREFIXES_RANGE = "the slice must hold between 1 and {max} prefixes (got {n})"
JOB_ACTIVE = "A composition job for study {name!r} is already queued or running."
SAMPLED_NOTE = (
    "the corpus had {held} sentences that mining did not read: the other {mined} prefixes "
    "come from a seeded sample of the mined sentences"
)


def _mining_run(study: Study) -> MiningRun:
    run = MiningRun.objects.filter(study=study).first()
    if run is None:
        raise MiningError(NOT_MINED.format(name=study.name))
    return run


def composition_check(*, study: Study, prefixes: int) -> MiningRun:
    """The mining run the analysis of ``study`` would read; a MiningError saying why
    there is none, or why the request cannot run, before anything is queued."""
    if not 1 <= prefixes <= MAX_PREFIXES:
        raise MiningError(PREFIXES_RANGE.format(max=MAX_PREFIXES, n=prefixes))
    if not study.is_causal:
        raise MiningError(ENCODER.format(name=study.name))
    run = _mining_run(study)
    store = Path(mining_config(run).store_dir or "")
    if not (store / "meta.json").is_file():
        raise MiningError(STORE_GONE.format(name=study.name, path=store))
    known = int(run.params.get("max_sentences") or 0)
    if not known and prefixes > run.sentences_total:
        # The run read the whole corpus: its store is every sentence there is.
        raise MiningError(TOO_MANY.format(n=prefixes, held=0, mined=run.sentences_total))
    return run


@transaction.atomic
def composition_job_create(
    *,
    study: Study,
    prefixes: int = DEFAULT_PREFIXES,
    seed: int = 0,
    created_by: Any = None,
    send: bool = True,
) -> CompositionJob:
    """A queued job, its task sent once the caller's transaction commits (unless not
    ``send``: the caller runs it). Refused (a MiningError, nothing written) where the
    study cannot be analysed or a job of it is still queued or running."""
    composition_check(study=study, prefixes=prefixes)
    Study.objects.select_for_update().filter(pk=study.pk).first()  # one job at a time
    active = (CompositionJob.Status.QUEUED, CompositionJob.Status.RUNNING)
    if CompositionJob.objects.filter(study=study, status__in=active).exists():
        raise MiningError(JOB_ACTIVE.format(name=study.name))
    job = CompositionJob.objects.create(
        study=study, prefixes=prefixes, seed=seed, created_by=created_by
    )
    if send:
        from .tasks import compose_study

        job_send_on_commit(CompositionJob, job.pk, compose_study)
    return job


def _held_out_sentences(run: MiningRun, loaded: LoadedModel, n: int) -> list[str]:
    """Up to ``n`` sentences of the run's corpus after those it mined, in corpus order."""
    from mining.core.corpus import iter_sentences
    from mining.core.pipeline import corpus_unk_token

    config = mining_config(run)
    if config.max_sentences is None:
        return []
    sentences = iter_sentences(
        config.corpus,
        config.sentences,
        max_sentences=config.max_sentences + n,
        unk_token=corpus_unk_token(loaded),
        roots=corpus_roots(),
    )
    return list(itertools.islice(sentences, config.max_sentences, None))


def _prefix_positions(store: CorpusStore, seed: int) -> np.ndarray:
    """One position a sentence, uniform over its real tokens (never padding or a special
    token), drawn with ``seed``; -1 for a sentence without a real token."""
    running = np.cumsum(~store.flat_special())  # real tokens up to each flat index
    total = np.concatenate([[0], running])
    before = total[store.offsets[:-1]]
    counts = total[store.offsets[1:]] - before
    pick = np.floor(np.random.default_rng(seed).random(len(store)) * counts).astype(np.int64)
    # The pick-th real token of each sentence: where the running count first reaches it.
    flat = np.searchsorted(running, before + pick + 1)
    return np.where(counts > 0, flat - store.offsets[:-1], -1)


def composition_slice(
    *, run: MiningRun, loaded: LoadedModel, n: int, seed: int, folder: Path
) -> tuple[CorpusStore, list[tuple[int, int]], dict[str, Any]]:
    """The slice's own store (built in ``folder``), its prefixes and how it was drawn."""
    from mining.core.store import CorpusStore, build_store

    config = mining_config(run)
    mined = CorpusStore.open(config.store_dir or "")
    texts = _held_out_sentences(run, loaded, n)
    held = len(texts)
    need = n - held
    if need > len(mined):
        raise MiningError(TOO_MANY.format(n=n, held=held, mined=len(mined)))
    if need:
        chosen = np.sort(np.random.default_rng(seed).choice(len(mined), need, replace=False))
        texts += [mined.sentence(int(i)) for i in chosen]
    store = build_store(texts, loaded.tokenizer, folder / "store", max_tokens=config.max_tokens)
    positions = _prefix_positions(store, seed)
    usable = np.flatnonzero(positions >= 0)
    prefixes = list(zip(usable.tolist(), positions[usable].tolist(), strict=True))
    if not prefixes:
        raise MiningError("no sentence of the slice has a real token to end a prefix at")
    described = {
        "prefixes": len(prefixes),
        "held_out": held,
        "from_mined": need,
        "seed": seed,
        "note": SAMPLED_NOTE.format(held=held, mined=need) if need else None,
    }
    return store, prefixes, described


def _memory_tops(run: MiningRun) -> dict[str, np.ndarray] | None:
    path = run_dir(run) / MEMORY_TOPS
    if not path.is_file():
        return None
    with np.load(path) as saved:
        return {name: saved[name] for name in saved.files}


def composition_compute(*, study: Study, prefixes: int, seed: int) -> dict[str, Any]:
    """The figures of ``study`` over a slice of ``prefixes`` prefixes, as
    ``Study.composition`` keeps them. Writes nothing to the database."""
    from mining.core.composition import compose

    run = composition_check(study=study, prefixes=prefixes)
    config = mining_config(run)
    loaded = model_for(config)
    with tempfile.TemporaryDirectory(prefix="composition-", dir=run_dir(run)) as tmp:
        store, items, described = composition_slice(
            run=run, loaded=loaded, n=prefixes, seed=seed, folder=Path(tmp)
        )
        figures = compose(loaded, store, items, memory_tops=_memory_tops(run))
        prefix_set = [{"sentence": store.sentence(s), "position": p} for s, p in items]
        del store
    return {**figures, "prefix_set": prefix_set, "slice": described}


def composition_job_run(*, job_id: int) -> None:
    """Run a queued job: its figures go to the study, or its reason to ``error``."""

    def compute(job: CompositionJob) -> dict[str, Any]:
        return composition_compute(study=job.study, prefixes=job.prefixes, seed=job.seed)

    def finish(job: CompositionJob, figures: dict[str, Any]) -> None:
        now = timezone.now()
        with transaction.atomic():
            Study.objects.filter(pk=job.study_id).update(
                composition={**figures, "job": job.pk, "computed_at": now.isoformat()}
            )
            CompositionJob.objects.filter(pk=job.pk).update(
                status=CompositionJob.Status.DONE, error="", finished_at=now
            )

    job_run(CompositionJob, job_id, compute, finish)
