"""The write of an import (docs/data-format.md, "Import"): a validated file's keys,
prefixes, annotations and patterns into a new study, in one transaction.

``reports.imports`` reads and validates the file line by line; this service owns the
write, so that an import obeys the rules of every other write of annotations: work is
attached to annotators only (an existing account that is not one is refused, and an
unknown username becomes an inactive annotator account, ``user_create_annotator``), and
every imported annotation starts its audit trail with a ``create`` event whose state is
``annotation_state``'s, as a write through the API would leave it. A key's gold
annotation is attached to a curator only (an unknown username becomes an inactive
member of the curator group), and an adopted gold pattern to the imported copy of the
annotator's pattern it came from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection, transaction
from django.utils import timezone

from .db import analyze
from .models import (
    Annotation,
    AnnotationEvent,
    Assignment,
    AssignmentKey,
    Batch,
    GoldAnnotation,
    GoldEvent,
    GoldPattern,
    Key,
    KeyExample,
    KeyFlag,
    Pattern,
    Study,
    TriggerPrefix,
)
from .permissions import ANNOTATOR_GROUP, CURATOR_GROUP
from .selectors.annotations import PatternView
from .selectors.review import GoldPatternView
from .services import ServiceError
from .services.accounts import (
    USERNAME_MIXED_SCRIPTS,
    user_create_annotator,
    username_skeletons,
)
from .services.annotations import annotation_state
from .services.gold import gold_state
from .usernames import username_mixes_scripts, username_normal, username_skeleton

WRITE_CHUNK = 500
IMPORT_BATCH_NAME = "imported"
# annotate.models.TriggerPrefix.next_token_id: -1 is the end of the sentence (and, in an
# import of a file without token ids, any next token); -2 is unknown (a cut sentence,
# whose next_token the export writes as null).
NEXT_TOKEN_ID_NONE = -1
NEXT_TOKEN_UNKNOWN = -2
TRIGGER_TOKEN_ID_NONE = -1  # a file without token ids
# A key's additive fields (docs/data-format.md, "Additive fields") that an import writes
# as the file gives them.
KEY_ADDITIVE = (
    "value_top_token_ids",
    "density",
    "max_coefficient",
    "mean_coefficient",
    "histogram",
    "perturbation",
)

ANNOTATOR_REFUSED = (
    "{name!r} is not an annotator ({why}); an import attaches work to annotators only"
)
WHY_ADMIN = "an admin"
WHY_NO_ROLE = "no annotator role"
CURATOR_REFUSED = (
    "{name!r} is not a curator (no curator role); an import attaches gold annotations to "
    "curators (admins or members of the curator group) only"
)
NAME_NOT_NORMAL = (
    "{name!r} is not written in Unicode's normal form (NFKC reads it as {normal!r}); an "
    "import creates accounts under normal names only"
)
NAME_CONFUSABLE = (
    "{name!r} can be mistaken for the existing account {other!r}; an import does not create "
    "an account that looks like another"
)
NAME_CONFUSABLE_IN_FILE = (
    "{name!r} can be mistaken for {other!r} (line {line}); an import does not create two "
    "accounts that look alike"
)
ASSIGN_NEEDS_LIVE = "Assignments can only be made for a live study (an archived one is read-only)."


class ImportFileError(ServiceError):
    """The file cannot be imported; ``errors`` lists what is wrong, line by line.
    ``code`` names the refusals that an interface words in its own way (a browser's form
    and the command line name the study's name differently): ``study_name_taken``,
    ``not_jsonl``, ``assign_needs_live``; ``import_refused`` for the others. ``name``:
    the study name that was taken."""

    def __init__(self, errors: list[str], *, code: str = "import_refused", name: str = "") -> None:
        super().__init__(errors[0], code=code)
        self.errors = errors
        self.name = name


@dataclass(frozen=True)
class ImportedStudy:
    """The study's header (the file's ``study`` object, and the name it takes). The
    fields after ``d_ff`` are additive (docs/data-format.md, "Additive fields"): a file
    without them gets these defaults, those of a study that was not mined here."""

    name: str
    model: str
    corpus: str
    top_k: int
    seed: int
    n_layers: int
    d_ff: int
    is_causal: bool = True
    vocab_size: int = 0
    show_value_tokens: bool = False
    value_agreement: dict[str, Any] = field(default_factory=dict)
    mining_definitions: dict[str, Any] = field(default_factory=dict)


@dataclass
class ImportResult:
    study: Study
    keys: int = 0
    prefixes: int = 0
    examples: int = 0  # held-out examples and samples (docs/evidence.md)
    annotations: int = 0
    patterns: int = 0
    golds: int = 0
    gold_patterns: int = 0
    flags: int = 0
    assignments: int = 0
    users_created: list[str] = field(default_factory=list)


def _refused_annotators(
    existing: Mapping[str, Any], first_seen: Mapping[str, tuple[int, str]]
) -> list[str]:
    """Errors for the existing accounts that are not annotators: an admin (staff or
    superuser) or an account without the annotator role. An inactive annotator is an
    annotator (an earlier import made it, or it was deactivated): its work comes back to
    it. Each error names the first line and field where the username appears."""
    if not existing:
        return []
    annotators = set(
        get_user_model()
        .objects.filter(
            pk__in=[user.pk for user in existing.values()], groups__name=ANNOTATOR_GROUP
        )
        .values_list("pk", flat=True)
    )
    refused = []
    for name, user in existing.items():
        if user.is_staff or user.is_superuser:
            why = WHY_ADMIN
        elif user.pk not in annotators:
            why = WHY_NO_ROLE
        else:
            continue
        line, where = first_seen[name]
        refused.append(
            (line, f"line {line}: {where}: {ANNOTATOR_REFUSED.format(name=name, why=why)}")
        )
    return [message for _, message in sorted(refused)]


def _refused_curators(
    existing: Mapping[str, Any], first_seen: Mapping[str, tuple[int, str]]
) -> list[str]:
    """Errors for the existing accounts named as a gold annotation's curator that are not
    curators: neither admins nor in the curator group (active or not)."""
    if not existing:
        return []
    curators = set(
        get_user_model()
        .objects.filter(pk__in=[user.pk for user in existing.values()], groups__name=CURATOR_GROUP)
        .values_list("pk", flat=True)
    )
    refused = []
    for name, user in existing.items():
        if user.is_staff or user.pk in curators:
            continue
        line, where = first_seen[name]
        refused.append((line, f"line {line}: {where}: {CURATOR_REFUSED.format(name=name)}"))
    return [message for _, message in sorted(refused)]


def _refused_new_names(new: set[str], first_seen: Mapping[str, tuple[int, str]]) -> list[str]:
    """Errors for the usernames the import would create that a person could take for
    another account's (``annotate.usernames``): not in NFKC, mixing Latin with Cyrillic or
    Greek, or with the skeleton of an existing account or of a name met earlier in the
    file. Refused rather than mapped to the account they look like: work is never
    attached to an account its file did not name exactly."""
    if not new:
        return []
    skeletons = username_skeletons()
    from_file: dict[str, str] = {}
    refused = []
    for name in sorted(new, key=lambda n: (first_seen[n], n)):
        line, where = first_seen[name]
        skeleton = username_skeleton(name)
        if username_normal(name) != name:
            why = NAME_NOT_NORMAL.format(name=name, normal=username_normal(name))
        elif username_mixes_scripts(name):
            why = USERNAME_MIXED_SCRIPTS.format(username=name)
        elif skeleton in skeletons:
            why = NAME_CONFUSABLE.format(name=name, other=skeletons[skeleton])
        elif skeleton in from_file:
            other = from_file[skeleton]
            why = NAME_CONFUSABLE_IN_FILE.format(name=name, other=other, line=first_seen[other][0])
        else:
            from_file[skeleton] = name
            continue
        refused.append(f"line {line}: {where}: {why}")
    return refused


def _suffix(prefix: dict[str, Any]) -> str:
    # Additive (docs/data-format.md, "Additive fields"): where the file has none, the rest
    # of the sentence after the prefix, where the prefix is the sentence's start (always so
    # for causal models).
    if "suffix" in prefix:
        return str(prefix["suffix"])
    sentence, text = prefix["sentence"], prefix["text"]
    return sentence[len(text) :] if sentence.startswith(text) else ""


def _next_token_id(prefix: dict[str, Any]) -> int:
    # Additive; a file without token ids: a null next token (cut sentence) is unknown,
    # any other one "no id" (-1).
    if "next_token_id" in prefix:
        return int(prefix["next_token_id"])
    return NEXT_TOKEN_UNKNOWN if prefix["next_token"] is None else NEXT_TOKEN_ID_NONE


def _example_columns(example: dict[str, Any]) -> dict[str, Any]:
    """The columns every stored example has (a ``TriggerPrefix``, a ``KeyExample``), from
    its validated record; the additive ones the file lacks get the defaults above."""
    return {
        "coefficient": example["coefficient"],
        "text": example["text"],
        "trigger_token": example["trigger_token"],
        "trigger_token_id": example.get("trigger_token_id", TRIGGER_TOKEN_ID_NONE),
        "next_token": example["next_token"],
        "next_token_id": _next_token_id(example),
        "suffix": _suffix(example),
        "sentence": example["sentence"],
        "sentence_index": example["sentence_index"],
        "position": example["position"],
        "trigger_start": example.get("trigger_start"),
        "trigger_end": example.get("trigger_end"),
        "trigger_token_bytes": example.get("trigger_token_bytes", ""),
        "next_token_bytes": example.get("next_token_bytes", ""),
        # docs/evidence.md: [] where the file has no per-token coefficients.
        "tokens": example.get("tokens", []),
        "token_coefficients": example.get("token_coefficients", []),
    }


# A record's lists of stored examples beyond the top-k (docs/evidence.md) and the
# ``KeyExample`` kind of their entries (a sample's own ``kind``: band or random).
EXAMPLE_LISTS = {
    "heldout": KeyExample.Kind.HELDOUT,
    "heldout_random": KeyExample.Kind.HELDOUT_RANDOM,
    "samples": None,
}


@dataclass
class _Target:
    study: Study
    batch: Batch
    users: dict[str, Any]
    # None: no assignments (an archived study, or a live one without them)
    assignments: dict[str, Assignment] | None
    actor: Any
    result: ImportResult


def _keep_times(objs: list[Any], times: list[dict[str, Any]], model: type[Any]) -> None:
    """Give back the file's ``created_at`` / ``updated_at`` (and ``submitted_at``) that
    ``bulk_create`` replaced with the time of the import (auto_now_add, auto_now), for
    the rows whose line carries them: one ``UPDATE ... WHERE id`` per row, sent with
    ``executemany`` (one round trip per batch on psycopg 3; linear, where
    ``bulk_update``'s CASE over a batch costs rows × batch)."""
    by_fields: dict[tuple[str, ...], list[tuple[Any, dict[str, Any]]]] = {}
    for obj, given in zip(objs, times, strict=True):
        if given:
            by_fields.setdefault(tuple(sorted(given)), []).append((obj.pk, given))
    quote = connection.ops.quote_name
    for names, rows in by_fields.items():
        fields = [model._meta.get_field(name) for name in names]
        sets = ", ".join(f"{quote(f.column)} = %s" for f in fields)
        sql = f"UPDATE {quote(model._meta.db_table)} SET {sets} WHERE {quote('id')} = %s"
        with connection.cursor() as cursor:
            cursor.executemany(
                sql,
                [
                    [*(f.get_db_prep_value(given[f.name], connection) for f in fields), pk]
                    for pk, given in rows
                ],
            )
    for obj, given in zip(objs, times, strict=True):
        for name, value in given.items():
            setattr(obj, name, value)


_ANNOTATION_TIMES = ("created_at", "updated_at", "submitted_at")
_PATTERN_TIMES = ("created_at", "updated_at")


def _write_chunk(target: _Target, records: list[dict[str, Any]]) -> None:
    keys = Key.objects.bulk_create(
        [
            Key(
                study=target.study,
                layer=r["key"]["layer"],
                index=r["key"]["index"],
                value_top_tokens=r["key"]["value_top_tokens"],
                # Additive fields: the model's defaults where the file has none.
                **{name: r["key"][name] for name in KEY_ADDITIVE if name in r["key"]},
            )
            for r in records
        ]
    )
    prefix_objs = [
        TriggerPrefix(key=key, rank=p["rank"], **_example_columns(p))
        for key, r in zip(keys, records, strict=True)
        for p in r["prefixes"]
    ]
    TriggerPrefix.objects.bulk_create(prefix_objs)
    _write_examples(target, keys, records)
    prefix_id = {(p.key_id, p.rank): p.pk for p in prefix_objs}
    Batch.keys.through.objects.bulk_create(
        [Batch.keys.through(batch_id=target.batch.pk, key_id=key.pk) for key in keys]
    )

    now = timezone.now()
    ann_objs: list[Annotation] = []
    ann_patterns: list[list[dict[str, Any]]] = []
    for key, r in zip(keys, records, strict=True):
        for a in r["annotations"]:
            submitted = a["status"] == Annotation.Status.SUBMITTED
            ann_objs.append(
                Annotation(
                    key=key,
                    annotator=target.users[a["annotator"]],
                    status=a["status"],
                    note=a.get("note", ""),
                    version=a.get("version", 1),
                    submitted_at=a.get("submitted_at", now if submitted else None),
                    active_seconds=a.get("active_seconds", 0.0),
                    guideline_version=a.get("guideline_version"),
                    is_check=a.get("check", False),
                )
            )
            ann_patterns.append(a["patterns"])
    Annotation.objects.bulk_create(ann_objs)
    _keep_times(
        ann_objs,
        [
            {name: a[name] for name in _ANNOTATION_TIMES if name in a}
            for r in records
            for a in r["annotations"]
        ],
        Annotation,
    )
    if target.assignments is not None:
        # The batch's assignment of each annotator with an annotation here; a curator or
        # a gold pattern's source annotator without annotations of their own gets none.
        for username in sorted({ann.annotator.get_username() for ann in ann_objs}):
            if username not in target.assignments:
                target.assignments[username] = Assignment.objects.create(
                    batch=target.batch, annotator=target.users[username]
                )
        AssignmentKey.objects.bulk_create(
            [
                AssignmentKey(
                    assignment=target.assignments[ann.annotator.get_username()],
                    key_id=ann.key_id,
                    # A check annotation's key comes back as the check key it was.
                    is_check=ann.is_check,
                )
                for ann in ann_objs
            ]
        )
    pattern_objs = [
        Pattern(
            annotation=ann,
            description=p["description"],
            kind=p["kind"],
            order=order,
            # docs/evidence.md: an accepted suggestion keeps its source; the suggestion
            # itself is no part of the file, so ``suggestion`` stays empty.
            source=p.get("source", Pattern.Source.WRITTEN),
            rule=p.get("rule"),
            scores=p.get("scores", {}),
        )
        for ann, patterns in zip(ann_objs, ann_patterns, strict=True)
        for order, p in enumerate(patterns)
    ]
    Pattern.objects.bulk_create(pattern_objs)
    _keep_times(
        pattern_objs,
        [
            {name: p[name] for name in _PATTERN_TIMES if name in p}
            for patterns in ann_patterns
            for p in patterns
        ],
        Pattern,
    )
    through = Pattern.prefixes.through
    specs = [p for patterns in ann_patterns for p in patterns]
    through.objects.bulk_create(
        [
            through(pattern_id=obj.pk, triggerprefix_id=prefix_id[(obj.annotation.key_id, rank)])
            for obj, spec in zip(pattern_objs, specs, strict=True)
            for rank in spec["prefix_ranks"]
        ],
        batch_size=5000,
    )
    # The audit trail starts with the import: one "create" event per annotation whose
    # state after is the imported one, in annotation_state's shape (as the API leaves it).
    views: dict[int, list[PatternView]] = {ann.pk: [] for ann in ann_objs}
    for obj, spec in zip(pattern_objs, specs, strict=True):
        views[obj.annotation.pk].append(
            PatternView(
                id=obj.pk,
                description=obj.description,
                kind=obj.kind,
                prefix_ranks=list(spec["prefix_ranks"]),
                order=obj.order,
                client_id=obj.client_id,
                source=obj.source,
                rule=obj.rule,
                scores=obj.scores,
            )
        )
    AnnotationEvent.objects.bulk_create(
        [
            AnnotationEvent(
                annotation=ann,
                actor=target.actor,
                action=AnnotationEvent.Action.CREATE,
                before=None,
                after=annotation_state(annotation=ann, patterns=views[ann.pk]),
            )
            for ann in ann_objs
        ]
    )
    by_annotation: dict[int, list[Pattern]] = {ann.pk: [] for ann in ann_objs}
    for obj in pattern_objs:
        by_annotation[obj.annotation.pk].append(obj)
    _write_golds(
        target,
        keys,
        records,
        prefix_id,
        {(ann.key_id, ann.annotator.get_username()): by_annotation[ann.pk] for ann in ann_objs},
        now,
    )
    _write_flags(target, keys, records, now)
    result = target.result
    result.keys += len(keys)
    result.prefixes += len(prefix_objs)
    result.annotations += len(ann_objs)
    result.patterns += len(pattern_objs)


def _write_examples(target: _Target, keys: list[Key], records: list[dict[str, Any]]) -> None:
    """The chunk's held-out examples and samples as ``KeyExample`` rows, in one bulk
    write: ``order`` from 1 within (key, kind) in the records' order (held-out ones by
    rank, samples by band then as the file lists them), ``rank`` for a held-out one,
    ``band`` and its bounds for a band sample."""
    objs: list[KeyExample] = []
    for key, r in zip(keys, records, strict=True):
        order: dict[str, int] = {}
        for name, fixed_kind in EXAMPLE_LISTS.items():
            for example in r.get(name, []):
                kind = fixed_kind or example["kind"]
                order[kind] = order.get(kind, 0) + 1
                objs.append(
                    KeyExample(
                        key=key,
                        kind=kind,
                        order=order[kind],
                        rank=example.get("rank"),
                        band=example.get("band"),
                        band_low=example.get("band_low"),
                        band_high=example.get("band_high"),
                        **_example_columns(example),
                    )
                )
    KeyExample.objects.bulk_create(objs, batch_size=5000)
    target.result.examples += len(objs)


def _write_flags(target: _Target, keys: list[Key], records: list[dict[str, Any]], now: Any) -> None:
    """The chunk's key flags (checked by the import as ``key_flag_checked`` checks a
    flag), with the file's ``created_at`` (else the time of the import) as both times."""
    flag_objs = [
        KeyFlag(key=key, annotator=target.users[f["annotator"]], reason=f["reason"], note=f["note"])
        for key, r in zip(keys, records, strict=True)
        for f in r.get("flags", [])
    ]
    if not flag_objs:
        return
    KeyFlag.objects.bulk_create(flag_objs)
    _keep_times(
        flag_objs,
        [
            {"created_at": f.get("created_at", now), "updated_at": f.get("created_at", now)}
            for r in records
            for f in r.get("flags", [])
        ],
        KeyFlag,
    )
    target.result.flags += len(flag_objs)


def _write_golds(
    target: _Target,
    keys: list[Key],
    records: list[dict[str, Any]],
    prefix_id: dict[tuple[int, int], int],
    patterns_of: dict[tuple[int, str], list[Pattern]],
    now: Any,
) -> None:
    """The chunk's gold annotations and their patterns; an adopted pattern's
    ``source_pattern`` (a place in its annotator's patterns of the key) becomes that
    imported pattern."""
    gold_objs: list[GoldAnnotation] = []
    specs: list[dict[str, Any]] = []
    for key, r in zip(keys, records, strict=True):
        g = r.get("gold")
        if g is None:
            continue
        submitted = g["status"] == GoldAnnotation.Status.SUBMITTED
        gold_objs.append(
            GoldAnnotation(
                key=key,
                status=g["status"],
                note=g.get("note", ""),
                version=g.get("version", 1),
                is_check=g.get("is_check", False),
                curator=None if g["annotator"] is None else target.users[g["annotator"]],
                submitted_at=g.get("submitted_at", now if submitted else None),
            )
        )
        specs.append(g)
    if not gold_objs:
        return
    GoldAnnotation.objects.bulk_create(gold_objs)
    _keep_times(
        gold_objs,
        [{name: g[name] for name in _ANNOTATION_TIMES if name in g} for g in specs],
        GoldAnnotation,
    )
    pattern_objs: list[GoldPattern] = []
    pattern_specs: list[dict[str, Any]] = []
    for gold, g in zip(gold_objs, specs, strict=True):
        for order, p in enumerate(g["patterns"]):
            by, place = p["source_annotator"], p["source_pattern"]
            pattern_objs.append(
                GoldPattern(
                    gold=gold,
                    description=p["description"],
                    kind=p["kind"],
                    order=order,
                    source=p["source"],
                    source_annotator=None if by is None else target.users[by],
                    source_pattern=(
                        None if place is None else patterns_of[(gold.key_id, by)][place]
                    ),
                    rule=p.get("rule"),
                    scores=p.get("scores", {}),
                )
            )
            pattern_specs.append(p)
    GoldPattern.objects.bulk_create(pattern_objs)
    _keep_times(
        pattern_objs,
        [{name: p[name] for name in _PATTERN_TIMES if name in p} for p in pattern_specs],
        GoldPattern,
    )
    through = GoldPattern.prefixes.through
    through.objects.bulk_create(
        [
            through(goldpattern_id=obj.pk, triggerprefix_id=prefix_id[(obj.gold.key_id, rank)])
            for obj, spec in zip(pattern_objs, pattern_specs, strict=True)
            for rank in spec["prefix_ranks"]
        ],
        batch_size=5000,
    )
    # The gold's audit trail starts with the import too: one "create" event per gold whose
    # state after is the imported one, in gold_state's shape (as the review API leaves it).
    gold_views: dict[int, list[PatternView]] = {gold.pk: [] for gold in gold_objs}
    for obj, spec in zip(pattern_objs, pattern_specs, strict=True):
        gold_views[obj.gold.pk].append(
            GoldPatternView(
                id=obj.pk,
                description=obj.description,
                kind=obj.kind,
                prefix_ranks=list(spec["prefix_ranks"]),
                order=obj.order,
                client_id=obj.client_id,
                source=obj.source,
                source_annotator=spec["source_annotator"],
                source_pattern_id=obj.source_pattern_id,
            )
        )
    GoldEvent.objects.bulk_create(
        [
            GoldEvent(
                gold=gold,
                actor=target.actor,
                action=GoldEvent.Action.CREATE,
                before=None,
                after=gold_state(gold=gold, patterns=gold_views[gold.pk]),
            )
            for gold in gold_objs
        ]
    )
    target.result.golds += len(gold_objs)
    target.result.gold_patterns += len(pattern_objs)


@transaction.atomic
def study_create_imported(
    *,
    header: ImportedStudy,
    annotators: Mapping[str, tuple[int, str]],
    records: Iterable[dict[str, Any]],
    curators: Mapping[str, tuple[int, str]] | None = None,
    created_by: Any = None,
    live: bool = False,
    assign: bool = False,
) -> ImportResult:
    """A new study from validated records (``reports.imports``' shape: one per key, with
    its prefixes by rank and its annotations, each with its annotator's username, status,
    patterns as prefix ranks, and the additive note, version and times where the file
    has them). ``annotators``: every username of the records, with the line and field
    where it first appears, for the errors. The imported keys form one batch,
    ``imported``.

    By default the study is archived (read-only: no annotator sees it or writes to it;
    its reports and exports read it as any other). ``live`` makes it a study like a
    mined one; ``assign`` (only with ``live``) also gives the batch to each annotator for
    the keys they annotated, so that their work is in their queue again (and only to
    them: a curator named by a gold annotation, or an annotator named only as a gold
    pattern's source, gets no assignment).

    ``curators``: the usernames of the gold annotations' curators, as ``annotators``. An
    existing one must be a curator (an admin or in the curator group, active or not); an
    unknown one becomes an inactive member of the curator group without a password.
    A gold pattern's source annotator is in ``annotators``.

    Raises ``ImportFileError`` and writes nothing when a username names an account that
    is not an annotator; ``records`` may raise it too (the rollback covers what was
    written before)."""
    User = get_user_model()
    curators = curators or {}
    names = sorted(set(annotators) | set(curators))
    existing = {u.get_username(): u for u in User.objects.filter(username__in=names)}
    if assign and not live:
        raise ImportFileError([ASSIGN_NEEDS_LIVE], code="assign_needs_live")
    refused = _refused_annotators(
        {n: u for n, u in existing.items() if n in annotators}, annotators
    ) + _refused_curators({n: u for n, u in existing.items() if n in curators}, curators)
    first_seen = {
        name: min(where for where in (annotators.get(name), curators.get(name)) if where)
        for name in names
    }
    refused += _refused_new_names(set(names) - set(existing), first_seen)
    if refused:
        raise ImportFileError(refused)
    author = created_by if getattr(created_by, "pk", None) else None
    study = Study.objects.create(
        name=header.name,
        model_name=header.model,
        corpus=header.corpus,
        top_k=header.top_k,
        seed=header.seed,
        n_layers=header.n_layers,
        d_ff=header.d_ff,
        is_causal=header.is_causal,
        vocab_size=header.vocab_size,
        show_value_tokens=header.show_value_tokens,
        value_agreement=header.value_agreement,
        mining_definitions=header.mining_definitions,
        archived=not live,
        created_by=author,
    )
    result = ImportResult(study=study)
    users: dict[str, Any] = dict(existing)
    for username in sorted(set(annotators) - set(existing)):
        users[username] = user_create_annotator(username=username, password=None, is_active=False)
        result.users_created.append(username)
    curator_group = None
    for username in sorted(set(curators) - set(existing)):
        if username not in users:
            users[username] = User.objects.create(username=username, is_active=False)
            users[username].set_unusable_password()
            users[username].save(update_fields=["password"])
            result.users_created.append(username)
        if curator_group is None:
            curator_group, _ = Group.objects.get_or_create(name=CURATOR_GROUP)
        users[username].groups.add(curator_group)
    result.users_created.sort()
    batch = Batch.objects.create(study=study, name=IMPORT_BATCH_NAME, created_by=author)
    target = _Target(
        study=study,
        batch=batch,
        users=users,
        # Made as the annotations are written: only annotators with work on the keys.
        assignments={} if assign else None,
        actor=author,
        result=result,
    )
    chunk: list[dict[str, Any]] = []
    for record in records:
        chunk.append(record)
        if len(chunk) >= WRITE_CHUNK:
            _write_chunk(target, chunk)
            chunk = []
    if chunk:
        _write_chunk(target, chunk)
    result.assignments = len(target.assignments or {})
    analyze(
        Key,
        TriggerPrefix,
        KeyExample,
        Annotation,
        Pattern,
        Pattern.prefixes.through,
        GoldAnnotation,
        GoldPattern,
        GoldPattern.prefixes.through,
    )
    return result
