"""Causal probes of a study (docs/causal.md) as jobs: what they read from the study (its
keys, their trigger prefixes, its corpus store, its annotations and gold) and where their
figures are kept. The computations are ``mining.core.causal``'s.

A job's parameters are checked, and its key groups resolved to their keys, when it is
created: a request that cannot run (an empty key group, a key outside the model, a study
without its model here) is refused before anything is queued. What needs the model (a
prompt longer than its context, an answer of several tokens, a subject not in the prompt)
is checked by the job before any forward: it fails with that reason and stores nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotate.models import Annotation, GoldAnnotation, Key, Pattern, Study, TriggerPrefix
from mining.core.errors import MiningError

from .jobs import job_run, job_send_on_commit
from .models import CausalJob, MiningRun
from .services import mining_config, model_for

if TYPE_CHECKING:
    from mining.core.models import LoadedModel
    from mining.core.store import CorpusStore

KINDS = tuple(CausalJob.Kind.values)
LABEL_SOURCES = ("annotations", "gold")
MAX_KEYS = 10_000  # keys in a group
MAX_TEXT_EXAMPLES = 5_000  # (prefix, next token) pairs of an uploaded text
DEFAULT_RANDOM_PREFIXES = 500
NOT_MINED = (
    "study {name!r} was not mined here (imported, or its mining run is gone): a causal "
    "probe needs its model"
)
STORE_GONE = "the corpus store of study {name!r} is gone: {what} reads its sentences"
ENCODER = (
    "study {name!r} mined an encoder: it predicts no next token, so no causal probe of "
    "ffkv applies to it"
)
EMPTY_GROUP = "{what} is empty: {why}"
KEY_OUTSIDE = (
    "{what}: key {layer}:{index} is not in the model (layers 1–{n_layers}, indices 0–{last})"
)
NO_OWN_PREFIXES = "{what}: none of its keys has trigger prefixes in this study (only mined keys do)"


# -- key groups -------------------------------------------------------------------------


def _label_keys(study: Study, group: dict[str, Any]) -> list[tuple[int, int]]:
    """The study's keys carrying a pattern of one of ``group["kinds"]``: in submitted
    annotations (all annotators', or ``annotator``'s), check annotations left out as the
    reports leave them out; or in submitted gold. Optionally only in ``layers``."""
    kinds = list(group["kinds"])
    keys = Key.objects.filter(study=study)
    if group.get("layers"):
        keys = keys.filter(layer__in=group["layers"])
    if group["source"] == "gold":
        golds = GoldAnnotation.objects.filter(
            status=GoldAnnotation.Status.SUBMITTED, patterns__kind__in=kinds
        )
        keys = keys.filter(gold__in=golds)
    else:
        annotations = Annotation.objects.filter(
            status=Annotation.Status.SUBMITTED, is_check=False, key__study=study
        )
        if group.get("annotator"):
            annotations = annotations.filter(annotator__username=group["annotator"])
        labelled = Pattern.objects.filter(annotation__in=annotations, kind__in=kinds)
        keys = keys.filter(annotations__patterns__in=labelled)
    return sorted(set(keys.values_list("layer", "index")))


def resolve_group(study: Study, group: dict[str, Any], what: str) -> list[list[int]]:
    """A key group as [layer (from 1), index] pairs, checked against the study's model."""
    if group["by"] == "keys":
        keys = sorted({(int(layer), int(index)) for layer, index in group["keys"]})
        why = "give at least one key"
    else:
        keys = _label_keys(study, group)
        who = f"{group['annotator']}'s" if group.get("annotator") else "the"
        source = "submitted gold" if group["source"] == "gold" else f"{who} submitted annotations"
        where = f" in layers {', '.join(map(str, group['layers']))}" if group.get("layers") else ""
        why = f"no key carries a {' or '.join(group['kinds'])} pattern in {source}{where}"
    if not keys:
        raise MiningError(EMPTY_GROUP.format(what=what, why=why))
    if len(keys) > MAX_KEYS:
        raise MiningError(f"{what} has {len(keys)} keys: at most {MAX_KEYS}")
    for layer, index in keys:
        if not (1 <= layer <= study.n_layers and 0 <= index < study.d_ff):
            raise MiningError(
                KEY_OUTSIDE.format(
                    what=what,
                    layer=layer,
                    index=index,
                    n_layers=study.n_layers,
                    last=study.d_ff - 1,
                )
            )
    return [[layer, index] for layer, index in keys]


# -- creating a job ---------------------------------------------------------------------


def _mining_run(study: Study) -> MiningRun:
    if not study.is_causal:
        raise MiningError(ENCODER.format(name=study.name))
    run = MiningRun.objects.filter(study=study).first()
    if run is None:
        raise MiningError(NOT_MINED.format(name=study.name))
    return run


def _store_path(run: MiningRun) -> Path:
    return Path(mining_config(run).store_dir or "")


@transaction.atomic
def causal_job_create(
    *, study: Study, kind: str, params: dict[str, Any], created_by: Any = None, send: bool = True
) -> CausalJob:
    """A queued job with its key groups resolved; its task is sent once the caller's
    transaction commits (unless not ``send``: the caller runs it). ``params`` are checked
    for their shape by the caller (the API's serializer, the command's parser)."""
    if kind not in KINDS:
        raise MiningError(f"unknown probe {kind!r}: one of {', '.join(KINDS)}")
    run = _mining_run(study)
    params = dict(params)
    if kind == CausalJob.Kind.ABLATION:
        params["group"] = {
            **params["group"],
            "resolved": resolve_group(study, params["group"], "the key group"),
        }
    elif kind == CausalJob.Kind.DISSOCIATION:
        for name in ("a", "b"):
            group = params[f"group_{name}"]
            what = f"group {name.upper()}"
            params[f"group_{name}"] = {**group, "resolved": resolve_group(study, group, what)}
    reads_store = kind == CausalJob.Kind.ABLATION or any(
        params.get(name, {}).get("by") == "own" for name in ("set_p", "set_q")
    )
    if reads_store and not (_store_path(run) / "meta.json").is_file():
        raise MiningError(STORE_GONE.format(name=study.name, what=f"the {kind}"))
    job = CausalJob.objects.create(study=study, kind=kind, params=params, created_by=created_by)
    if send:
        from .tasks import causal_probe

        job_send_on_commit(CausalJob, job.pk, causal_probe)
    return job


# -- prefix sets ------------------------------------------------------------------------


def _zero_based(keys: Sequence[Sequence[int]]) -> list[tuple[int, int]]:
    return [(int(layer) - 1, int(index)) for layer, index in keys]


def own_examples(
    study: Study, store: CorpusStore, keys: Sequence[Sequence[int]], *, tag: bool
) -> list[tuple[Any, ...]]:
    """The keys' own trigger prefixes (their top-k in this study), each as (prefix ids,
    the token after it[, its key, 0-based]); prefixes whose next token is the end of the
    sentence or unknown are left out (no token to score)."""
    wanted = Q()
    for layer, index in keys:
        wanted |= Q(key__layer=layer, key__index=index)
    rows = np.array(
        list(
            TriggerPrefix.objects.filter(wanted, key__study=study).values_list(
                "key__layer", "key__index", "sentence_index", "position"
            )
        ),
        dtype=np.int64,
    ).reshape(-1, 4)
    nxt = store.next_token_ids(rows[:, 2], rows[:, 3])
    rows, nxt = rows[nxt >= 0], nxt[nxt >= 0]
    return [
        (store.tokens(int(s))[: int(p) + 1], int(t), (int(layer) - 1, int(index)))[
            : 3 if tag else 2
        ]
        for (layer, index, s, p), t in zip(rows.tolist(), nxt.tolist(), strict=True)
    ]


def random_examples(store: CorpusStore, n: int, seed: int) -> list[tuple[Any, int]]:
    """``n`` prefixes drawn uniformly (with ``seed``) from the positions of the store that
    are real tokens followed by a real token, each with that next token."""
    special = store.flat_special()
    nxt = np.r_[special[1:], True]
    # the token after each position is in the same sentence and real
    ends = np.zeros(special.size, dtype=bool)
    ends[store.offsets[1:] - 1] = True
    usable = np.flatnonzero(~special & ~nxt & ~ends)
    if usable.size == 0:
        raise MiningError("the corpus store has no prefix followed by a real token")
    chosen = np.sort(np.random.default_rng(seed).choice(usable, min(n, usable.size), replace=False))
    sentences = np.searchsorted(store.offsets, chosen, side="right") - 1
    positions = chosen - store.offsets[sentences]
    targets = store.token_ids_at(sentences, positions + 1)
    return [
        (store.tokens(int(s))[: int(p) + 1], int(t))
        for s, p, t in zip(sentences.tolist(), positions.tolist(), targets.tolist(), strict=True)
    ]


def text_examples(loaded: LoadedModel, text: str, what: str) -> list[tuple[Any, int]]:
    """Every (prefix, next token) pair inside each non-empty line of ``text``, tokenized
    as the model reads a sentence (its special tokens marking none of the targets)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        raise MiningError(f"{what} is empty: give one sentence a line")
    tok = loaded.tokenizer
    special = set(tok.all_special_ids)
    out: list[tuple[Any, int]] = []
    for ids in tok(lines, add_special_tokens=True)["input_ids"]:
        ids = np.asarray(ids, dtype=np.int64)
        real = np.array([i not in special for i in ids.tolist()], dtype=bool)
        for t in np.flatnonzero(real[1:]):  # t + 1 is a real token: the target
            out.append((ids[: t + 1], int(ids[t + 1])))
    if not out:
        raise MiningError(f"{what} has no pair of consecutive tokens to score")
    if len(out) > MAX_TEXT_EXAMPLES:
        raise MiningError(f"{what} gives {len(out)} prefixes: at most {MAX_TEXT_EXAMPLES}")
    return out


# -- running a job ----------------------------------------------------------------------


def _prefix_set(
    spec: dict[str, Any],
    study: Study,
    store: CorpusStore | None,
    loaded: LoadedModel,
    what: str,
    groups: dict[str, list[list[int]]],
) -> list[tuple[Any, ...]]:
    if spec["by"] == "text":
        return text_examples(loaded, spec["text"], what)
    assert store is not None
    examples = own_examples(study, store, groups[spec["group"]], tag=False)
    if not examples:
        raise MiningError(NO_OWN_PREFIXES.format(what=what))
    return examples


def causal_compute(job: CausalJob) -> dict[str, Any]:
    """The job's figures (``mining.core.causal``), with the study's key ids of every key
    they name (``key_ids``, "layer:index" → id: the links to the keys' pages)."""
    from mining.core import causal
    from mining.core.store import CorpusStore

    study, params = job.study, job.params
    run = _mining_run(study)
    loaded = model_for(mining_config(run))
    store = (
        CorpusStore.open(_store_path(run)) if (_store_path(run) / "meta.json").is_file() else None
    )
    seed, scale = int(params.get("seed", 0)), float(params.get("scale", 0.0))
    if job.kind == CausalJob.Kind.ABLATION:
        if store is None:
            raise MiningError(STORE_GONE.format(name=study.name, what="the ablation"))
        keys = params["group"]["resolved"]
        own = own_examples(study, store, keys, tag=True)
        sets: dict[str, Any] = {
            "random": random_examples(store, int(params["random_prefixes"]), seed)
        }
        if own:
            sets = {"own": own, **sets}
        result = causal.ablation(loaded, sets, _zero_based(keys), scale=scale, seed=seed)
    elif job.kind == CausalJob.Kind.DISSOCIATION:
        groups = {name: params[f"group_{name}"]["resolved"] for name in ("a", "b")}
        set_p = _prefix_set(params["set_p"], study, store, loaded, "prefix set P", groups)
        set_q = _prefix_set(params["set_q"], study, store, loaded, "prefix set Q", groups)
        result = causal.dissociation(
            loaded,
            _zero_based(groups["a"]),
            _zero_based(groups["b"]),
            set_p,
            set_q,
            scale=scale,
            seed=seed,
        )
    elif job.kind == CausalJob.Kind.TRACING:
        result = causal.trace(
            loaded,
            params["prompt"],
            params["subject"],
            params["answer"],
            noise=float(params.get("noise", causal.TRACE_NOISE)),
            samples=int(params.get("samples", causal.TRACE_SAMPLES)),
            window=int(params.get("window", causal.TRACE_WINDOW)),
            seed=seed,
        )
    else:
        layers = params.get("layers")
        result = causal.attribute(
            loaded,
            params["prompts"],
            params["answer"],
            steps=int(params.get("steps", causal.IG_STEPS)),
            threshold=float(params.get("threshold", causal.IG_THRESHOLD)),
            share=float(params.get("share", causal.IG_SHARE)),
            seed=seed,
            layers=[layer - 1 for layer in layers] if layers else None,
        )
    result["key_ids"] = key_ids(study, result)
    return result


# Fields of a result that hold pairs of ints that are no keys.
NOT_KEYS = frozenset({"subject_span", "layers", "tokens", "effects", "n"})


def _pairs(value: Any, found: set[tuple[int, int]]) -> None:
    """Every key anywhere in ``value``: a [layer, index] pair of ints, or an object with
    int ``layer`` and ``index``."""
    if isinstance(value, dict):
        layer, index = value.get("layer"), value.get("index")
        if type(layer) is int and type(index) is int:
            found.add((layer, index))
        for name, item in value.items():
            if name not in NOT_KEYS:
                _pairs(item, found)
    elif isinstance(value, list):
        if len(value) == 2 and all(type(v) is int for v in value):
            found.add((value[0], value[1]))
        else:
            for item in value:
                _pairs(item, found)


def key_ids(study: Study, result: dict[str, Any]) -> dict[str, int]:
    """ "layer:index" → the study's key id, for the keys a result names that were mined
    (sampled) in the study: the links from a figure to the keys' pages."""
    named: set[tuple[int, int]] = set()
    _pairs(result, named)
    if not named:
        return {}
    rows = Key.objects.filter(
        study=study,
        layer__in={layer for layer, _ in named},
        index__in={index for _, index in named},
    ).values_list("pk", "layer", "index")
    return {f"{layer}:{index}": pk for pk, layer, index in rows if (layer, index) in named}


def causal_job_run(*, job_id: int) -> None:
    """Run a queued job: its figures go to ``result``, or its reason to ``error``."""

    def finish(job: CausalJob, result: dict[str, Any]) -> None:
        CausalJob.objects.filter(pk=job.pk).update(
            status=CausalJob.Status.DONE, result=result, error="", finished_at=timezone.now()
        )

    job_run(CausalJob, job_id, causal_compute, finish)
