"""The domain: studies, keys, trigger prefixes, batches, assignments, annotations.

Layers are stored numbered from 1, as in the paper and in every interface
(docs/data-format.md, "JSONL v1");
ranks of trigger prefixes from 1.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models.functions import Length
from django.db.models.lookups import LessThanOrEqual
from django.utils import timezone

from .labels import KIND_SEMANTIC, KIND_SHALLOW, KIND_SHALLOW_SEMANTIC, KINDS
from .limits import MAX_DESCRIPTION, MAX_NOTE

# Ceilings on the free text that annotators write (docs/reliability.md, "Headers and
# limits"): the API answers 400 above
# them, the services refuse them, and a check constraint keeps them in the database.
NOTE_MAX_LENGTH = MAX_NOTE
PATTERN_DESCRIPTION_MAX_LENGTH = MAX_DESCRIPTION


class Study(models.Model):
    """One model + corpus + sampled keys + their top-k trigger prefixes."""

    name = models.CharField(max_length=200, unique=True)
    model_name = models.CharField(max_length=500, help_text="Hugging Face id, path or builtin:")
    corpus = models.CharField(max_length=500)
    top_k = models.PositiveIntegerField(default=25)
    seed = models.IntegerField(default=0)
    n_layers = models.PositiveIntegerField(default=0)
    d_ff = models.PositiveIntegerField(default=0)
    is_causal = models.BooleanField(default=True)
    vocab_size = models.PositiveIntegerField(
        default=0, help_text="|V| of the output embedding: the §4 random baseline is 1/|V|."
    )
    # Off by default: the value's top tokens can bias annotators.
    show_value_tokens = models.BooleanField(default=False)
    # §4 over every key of every layer, counted in the mining pass (the paper's authors
    # computed it over all keys, not the sampled ones): per-layer match counts, see
    # ``mining.core.value_agreement``. Empty for encoders and for imported studies.
    value_agreement = models.JSONField(default=dict, blank=True)
    # §5 of the paper (docs/composition.md): the composition figures of the last
    # composition job that completed ({} before any), and the sparsity figures counted in
    # the mining pass ({} for imported studies).
    composition = models.JSONField(default=dict, blank=True)
    sparsity = models.JSONField(default=dict, blank=True)
    # What the mining run ranked and how (family, module hooked, before or after the
    # activation, checkpoint notes): shown in the report's definitions.
    mining_definitions = models.JSONField(default=dict, blank=True)
    # Read-only: its keys and annotations are kept for the reports and exports, but no
    # annotator sees them or can write to them, and no batch or assignment can be added.
    # An import makes one unless asked to make a live study (docs/data-format.md, "Import").
    archived = models.BooleanField(default=False)
    # Share of the regular keys given to an annotator that each bring one check key (a
    # gold key marked as a check) into their assignment, drawn deterministically per
    # annotator when keys are given (``annotate.services.check_keys``). 0: none.
    check_rate = models.FloatField(default=0.0)
    # Evidence beyond the top-k (docs/evidence.md). Suggestions: the machine's proposed
    # patterns are offered to annotators (off for a blind replication). Scores: an
    # annotator sees the held-out scores of their own patterns (off by default: a pattern
    # written after seeing its score is no longer a blind test).
    suggestions_enabled = models.BooleanField(default=True)
    show_scores = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "studies"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(check_rate__gte=0.0, check_rate__lte=1.0),
                name="study_check_rate_is_a_share",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class StudyJob(models.Model):
    """What every job a worker runs on a study records (an export, the composition
    analysis, a causal probe): its status, why it failed, who asked, and when it was asked,
    started and ended. Each job adds its foreign key to the study, under its own related
    name, and what it computes."""

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]


class Key(models.Model):
    """A sampled FFN key (row ``index`` of layer ``layer``'s key matrix) with its stats."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="keys")
    layer = models.PositiveIntegerField(help_text="Numbered from 1.")
    index = models.PositiveIntegerField()
    density = models.FloatField(default=0.0, help_text="Share of real positions with m > 0.")
    max_coefficient = models.FloatField(default=0.0)
    mean_coefficient = models.FloatField(default=0.0)
    histogram = models.JSONField(default=dict, blank=True)
    # [[token, probability], ...]: top tokens of softmax(v_i · E) (docs/science.md, "Keys,
    # values and the memory coefficient").
    value_top_tokens = models.JSONField(default=list, blank=True)
    value_top_token_ids = models.JSONField(default=list, blank=True)
    # §3.2 / Figure 3: mean relative change of m_i when the first / last / a random token
    # of the key's top trigger prefixes is removed ({"first": float, ...}); empty when
    # the run did not measure it.
    perturbation = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["study", "layer", "index"]
        constraints = [
            models.UniqueConstraint(fields=["study", "layer", "index"], name="key_unique_in_study"),
            models.CheckConstraint(condition=models.Q(layer__gte=1), name="key_layer_from_one"),
        ]

    def __str__(self) -> str:
        return f"L{self.layer}:{self.index}"


class TriggerPrefix(models.Model):
    """One of a key's top-k trigger examples (docs/science.md, "Trigger examples and prefixes")."""

    key = models.ForeignKey(Key, on_delete=models.CASCADE, related_name="prefixes")
    rank = models.PositiveIntegerField(help_text="From 1.")
    coefficient = models.FloatField()
    text = models.TextField(help_text="The prefix: tokens 0..t of the sentence.")
    trigger_token = models.CharField(max_length=200)
    trigger_token_id = models.IntegerField()
    # Null, not "": unknown is the v1 contract's null, and "" can be a decoded token.
    next_token = models.CharField(  # noqa: DJ001
        max_length=200, null=True, blank=True, help_text="Null where the sentence was cut."
    )
    next_token_id = models.IntegerField(
        help_text="-1 at the end of the sentence, -2 where the sentence was cut (unknown)."
    )
    suffix = models.TextField(blank=True, help_text="The rest of the sentence after the prefix.")
    sentence = models.TextField()
    sentence_index = models.PositiveIntegerField()
    position = models.PositiveIntegerField()
    # Null where unknown (an import of a file without them, a prefix mined before spans
    # were kept): the workspace then matches the decoded token against the text's end.
    trigger_start = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Where the trigger token starts in the text, in characters (as written).",
    )
    trigger_end = models.PositiveIntegerField(
        null=True, blank=True, help_text="Where the trigger token ends (exclusive)."
    )
    # A byte-level token that is part of a multi-byte character decodes alone to U+FFFD:
    # its raw bytes (hex) are kept so that the screen can show them. "" where the decoded
    # token is all there is, or where the bytes are unknown (mined before they were
    # kept, an import without them).
    trigger_token_bytes = models.CharField(
        max_length=200,
        blank=True,
        default="",
        help_text="The trigger token's raw bytes in hex where it decodes to U+FFFD alone.",
    )
    next_token_bytes = models.CharField(
        max_length=200,
        blank=True,
        default="",
        help_text="The next token's raw bytes in hex where it decodes to U+FFFD alone.",
    )
    # docs/evidence.md, "Per-token coefficients": the token strings of the prefix (a causal
    # model) or of the whole sentence (an encoder), decoded one by one, and the key's
    # coefficient at each. Empty where unknown (an import without them).
    tokens = models.JSONField(default=list, blank=True)
    token_coefficients = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["key", "rank"]
        verbose_name_plural = "trigger prefixes"
        constraints = [
            models.UniqueConstraint(fields=["key", "rank"], name="prefix_rank_unique_in_key"),
            models.CheckConstraint(condition=models.Q(rank__gte=1), name="prefix_rank_from_one"),
            models.CheckConstraint(
                condition=models.Q(trigger_start__isnull=True, trigger_end__isnull=True)
                | models.Q(trigger_start__lt=models.F("trigger_end")),
                name="prefix_trigger_span_both_or_none",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key} #{self.rank}"


class KeyExample(models.Model):
    """A stored example of a key other than its visible top-k (docs/evidence.md).

    ``heldout`` (ranks top_k+1 .. 2·top_k) and ``heldout_random`` (uniform negatives) are
    never in an annotator's response; ``band`` and ``random`` samples are shown folded
    under the top-k. Shaped like a ``TriggerPrefix``; its own table, so that no query of
    the visible prefixes can return one by mistake.
    """

    class Kind(models.TextChoices):
        HELDOUT = "heldout", "heldout"
        HELDOUT_RANDOM = "heldout_random", "heldout_random"
        BAND = "band", "band"
        RANDOM = "random", "random"

    VISIBLE_KINDS = (Kind.BAND, Kind.RANDOM)
    HELD_OUT_KINDS = (Kind.HELDOUT, Kind.HELDOUT_RANDOM)

    key = models.ForeignKey(Key, on_delete=models.CASCADE, related_name="examples")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # The order within (key, kind), from 1: heldout by rank, band by band then draw, the
    # random ones by draw.
    order = models.PositiveIntegerField()
    rank = models.PositiveIntegerField(null=True, blank=True, help_text="heldout only.")
    band = models.PositiveSmallIntegerField(null=True, blank=True, help_text="1 = lowest.")
    band_low = models.FloatField(null=True, blank=True)
    band_high = models.FloatField(null=True, blank=True)
    coefficient = models.FloatField()
    text = models.TextField()
    trigger_token = models.CharField(max_length=200)
    trigger_token_id = models.IntegerField()
    next_token = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001
    next_token_id = models.IntegerField()
    suffix = models.TextField(blank=True)
    sentence = models.TextField()
    sentence_index = models.PositiveIntegerField()
    position = models.PositiveIntegerField()
    trigger_start = models.PositiveIntegerField(null=True, blank=True)
    trigger_end = models.PositiveIntegerField(null=True, blank=True)
    trigger_token_bytes = models.CharField(max_length=200, blank=True, default="")
    next_token_bytes = models.CharField(max_length=200, blank=True, default="")
    tokens = models.JSONField(default=list, blank=True)
    token_coefficients = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["key", "kind", "order"]
        constraints = [
            models.UniqueConstraint(
                fields=["key", "kind", "order"], name="key_example_order_unique"
            ),
            models.UniqueConstraint(
                fields=["key", "kind", "sentence_index"], name="key_example_sentence_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(kind__in=["heldout", "heldout_random", "band", "random"]),
                name="key_example_kind_known",
            ),
            models.CheckConstraint(
                condition=models.Q(kind="band", band__gte=1, band_low__isnull=False)
                | (~models.Q(kind="band") & models.Q(band__isnull=True)),
                name="key_example_band_only_for_band",
            ),
            models.CheckConstraint(
                condition=models.Q(kind="heldout", rank__gte=1)
                | (~models.Q(kind="heldout") & models.Q(rank__isnull=True)),
                name="key_example_rank_only_for_heldout",
            ),
        ]
        indexes = [models.Index(fields=["key", "kind"], name="key_example_by_kind")]

    def __str__(self) -> str:
        return f"{self.key} {self.kind} #{self.order}"


class Batch(models.Model):
    """A named set of keys of a study, handed out to annotators through assignments."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="batches")
    name = models.CharField(max_length=200)
    keys = models.ManyToManyField(Key, related_name="batches")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "name"]
        verbose_name_plural = "batches"
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="batch_name_unique_in_study"),
        ]

    def __str__(self) -> str:
        return f"{self.study} / {self.name}"


class Assignment(models.Model):
    """A batch given to one annotator: the keys of the batch that this annotator labels.

    An assignment names its keys (a subset of the batch's keys) rather than meaning "the
    whole batch", so that an overlap N smaller than the number of annotators M can split
    a batch (each key seen by exactly N of the M), and so that deactivating an annotator
    can hand their unfinished keys, and only those, to someone else.
    """

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    keys = models.ManyToManyField(Key, through="AssignmentKey", related_name="assignments")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["batch", "annotator"], name="assignment_unique_per_annotator"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.batch} → {self.annotator}"


class AssignmentKey(models.Model):
    """One key of an assignment: a key of the assignment's batch (services check), or a
    check key drawn for the annotator when keys were given (``annotate.services.check_keys``)."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="+")
    key = models.ForeignKey(Key, on_delete=models.CASCADE, related_name="+")
    # A check key: listed, counted and served to the annotator like any key of the
    # assignment, and never marked as a check in anything they read; left out of the
    # batch's figures (``annotate.selectors.batches``).
    is_check = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assignment", "key"], name="assignment_key_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.assignment_id}:{self.key_id}"


class Annotation(models.Model):
    """One annotator's work on one key: patterns (with their prefixes), a note, a status."""

    class Status(models.TextChoices):
        DRAFT = "draft", "draft"
        SUBMITTED = "submitted", "submitted"

    key = models.ForeignKey(Key, on_delete=models.CASCADE, related_name="annotations")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotations"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    note = models.TextField(blank=True, max_length=NOTE_MAX_LENGTH)
    # Optimistic concurrency: every save names the version it read; a stale one is refused.
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    # Seconds the annotator was active on this key (tab visible, input within the last
    # 60 s), measured by the workspace and sent with the autosave; the server keeps the
    # largest total it has been sent, so that a retried write cannot count twice.
    active_seconds = models.FloatField(default=0.0)
    # The study's guideline version in force when the annotation was last written; null
    # where the study has no guidelines (or for an import without the field).
    guideline_version = models.PositiveIntegerField(null=True, blank=True)
    # Made on a check key of the annotator's assignment (``annotate.services.check_keys``):
    # it measures the annotator against gold and is left out of the pooled reports and
    # the batch's figures.
    is_check = models.BooleanField(default=False)

    class Meta:
        ordering = ["key", "annotator"]
        constraints = [
            models.UniqueConstraint(fields=["key", "annotator"], name="annotation_unique_per_key"),
            models.CheckConstraint(
                condition=models.Q(LessThanOrEqual(Length("note"), NOTE_MAX_LENGTH)),
                name="annotation_note_max_length",
            ),
            models.CheckConstraint(
                condition=models.Q(active_seconds__gte=0.0),
                name="annotation_active_seconds_positive",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key} by {self.annotator}"


class Pattern(models.Model):
    """A recurring pattern that an annotator sees in at least 3 of a key's trigger prefixes.

    The 3-prefix rule and "all prefixes of the annotation's own key" are enforced by the
    services (``annotate.services.patterns.pattern_create``), not here: a many-to-many cannot be
    checked by a row constraint.
    """

    class Kind(models.TextChoices):
        SHALLOW = KIND_SHALLOW, KIND_SHALLOW
        SEMANTIC = KIND_SEMANTIC, KIND_SEMANTIC
        SHALLOW_SEMANTIC = KIND_SHALLOW_SEMANTIC, KIND_SHALLOW_SEMANTIC

    class Source(models.TextChoices):
        WRITTEN = "written", "written"
        SUGGESTION = "suggestion", "suggestion"

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="patterns")
    description = models.TextField(max_length=PATTERN_DESCRIPTION_MAX_LENGTH)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    prefixes = models.ManyToManyField(TriggerPrefix, related_name="patterns")
    order = models.PositiveIntegerField(default=0)
    # Set by the client on create so that a retried POST finds the pattern it made.
    client_id = models.UUIDField(null=True, blank=True)
    # "written", or "suggestion" for one accepted from the machine's suggestions: kept
    # through edits (docs/evidence.md, "Suggestions").
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.WRITTEN)
    suggestion = models.ForeignKey(
        "Suggestion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A shallow pattern's rule, null or {"type": "token"|"ngram"|"suffix", "value": str},
    # and its held-out scores ({} until scored; docs/evidence.md, "Scores").
    rule = models.JSONField(null=True, blank=True)
    scores = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["annotation", "order", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["annotation", "client_id"], name="pattern_client_id_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(kind__in=list(KINDS)),
                name="pattern_kind_known",
            ),
            models.CheckConstraint(
                condition=models.Q(source__in=["written", "suggestion"]),
                name="pattern_source_known",
            ),
            models.CheckConstraint(
                condition=models.Q(
                    LessThanOrEqual(Length("description"), PATTERN_DESCRIPTION_MAX_LENGTH)
                ),
                name="pattern_description_max_length",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.annotation}: {self.description[:40]}"


class AuditEvent(models.Model):
    """What every audit record holds: who made the change, when, and the state before and
    after it. ``AnnotationEvent`` and ``GoldEvent`` add what the change was made to and
    their actions."""

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(default=timezone.now)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["at", "id"]


class AnnotationEvent(AuditEvent):
    """The audit trail: who changed an annotation, when, and its state before and after.

    ``before``/``after`` hold the annotation's state (note, status, version, patterns with
    their prefix ranks) as written by ``annotate.services.annotations.annotation_state``.
    """

    class Action(models.TextChoices):
        CREATE = "create", "create"
        SAVE = "save", "save"
        PATTERN_CREATE = "pattern_create", "pattern create"
        PATTERN_UPDATE = "pattern_update", "pattern update"
        PATTERN_DELETE = "pattern_delete", "pattern delete"
        SUBMIT = "submit", "submit"
        REOPEN = "reopen", "reopen"
        REASSIGN = "reassign", "reassign"

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="events")
    action = models.CharField(max_length=20, choices=Action.choices)

    class Meta(AuditEvent.Meta):
        indexes = [models.Index(fields=["annotation", "at"], name="annotation_event_by_time")]

    def __str__(self) -> str:
        return f"{self.action} on {self.annotation_id} by {self.actor_id}"


class GoldAnnotation(models.Model):
    """The curated annotation of a key: built by a curator from the annotators' patterns.

    Annotators never see it (docs/reliability.md, "What is guaranteed": blindness). Its
    patterns follow the same rules as an annotator's (3-prefix rule, prefixes of the key);
    the labels are derived from them.
    """

    class Status(models.TextChoices):
        DRAFT = "draft", "draft"
        SUBMITTED = "submitted", "submitted"

    key = models.OneToOneField(Key, on_delete=models.CASCADE, related_name="gold")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    note = models.TextField(blank=True, max_length=NOTE_MAX_LENGTH)
    version = models.PositiveIntegerField(default=1)
    # A check key: given unannounced, among their keys, to annotators who have not seen
    # it (``annotate.services.check_keys``).
    is_check = models.BooleanField(default=False)
    curator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who last wrote it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["key"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(LessThanOrEqual(Length("note"), NOTE_MAX_LENGTH)),
                name="gold_note_max_length",
            ),
        ]

    def __str__(self) -> str:
        return f"gold of {self.key}"


class GoldPattern(models.Model):
    """A pattern of a gold annotation; an adopted one remembers where it came from."""

    class Source(models.TextChoices):
        WRITTEN = "written", "written"
        ADOPTED = "adopted", "adopted"

    gold = models.ForeignKey(GoldAnnotation, on_delete=models.CASCADE, related_name="patterns")
    description = models.TextField(max_length=PATTERN_DESCRIPTION_MAX_LENGTH)
    kind = models.CharField(max_length=16, choices=Pattern.Kind.choices)
    prefixes = models.ManyToManyField(TriggerPrefix, related_name="gold_patterns")
    order = models.PositiveIntegerField(default=0)
    client_id = models.UUIDField(null=True, blank=True)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.WRITTEN)
    # For an adopted pattern: the annotator's pattern it copies (null once that is deleted)
    # and the annotator, kept even then.
    source_pattern = models.ForeignKey(
        Pattern, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    source_annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    rule = models.JSONField(null=True, blank=True)  # as Pattern.rule
    scores = models.JSONField(default=dict, blank=True)  # as Pattern.scores
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["gold", "order", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["gold", "client_id"], name="gold_pattern_client_id_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(kind__in=list(KINDS)),
                name="gold_pattern_kind_known",
            ),
            models.CheckConstraint(
                condition=models.Q(source__in=["written", "adopted"]),
                name="gold_pattern_source_known",
            ),
            models.CheckConstraint(
                condition=models.Q(
                    LessThanOrEqual(Length("description"), PATTERN_DESCRIPTION_MAX_LENGTH)
                ),
                name="gold_pattern_description_max_length",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.gold}: {self.description[:40]}"


class GoldEvent(AuditEvent):
    """The gold's audit trail, as ``AnnotationEvent`` is an annotator's: who changed a key's
    gold annotation, when, and its state before and after.

    ``before``/``after`` hold the gold's state (curator, status, note, check-key mark,
    version, patterns with their prefix ranks and sources) as written by
    ``annotate.services.gold.gold_state``; ``source``, for an adoption only, the
    annotator's annotation (id, annotator, version) and pattern (id) it came from: kept
    as they were, whatever becomes of the annotation later.
    """

    class Action(models.TextChoices):
        CREATE = "create", "create"
        SAVE = "save", "save"
        PATTERN_CREATE = "pattern_create", "pattern create"
        ADOPT = "adopt", "adopt"
        PATTERN_UPDATE = "pattern_update", "pattern update"
        PATTERN_DELETE = "pattern_delete", "pattern delete"
        SUBMIT = "submit", "submit"
        REOPEN = "reopen", "reopen"

    gold = models.ForeignKey(GoldAnnotation, on_delete=models.CASCADE, related_name="events")
    action = models.CharField(max_length=20, choices=Action.choices)
    source = models.JSONField(null=True, blank=True)

    class Meta(AuditEvent.Meta):
        indexes = [models.Index(fields=["gold", "at"], name="gold_event_by_time")]

    def __str__(self) -> str:
        return f"{self.action} on gold {self.gold_id} by {self.actor_id}"


class CheckServing(models.Model):
    """A check key given to an annotator (as a key of ``assignment``): at most once per
    annotator and key, and kept when the assignment's row goes (a hand-over), so that the
    same check is never given to them twice."""

    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="check_servings"
    )
    key = models.ForeignKey(Key, on_delete=models.CASCADE, related_name="check_servings")
    # The assignment it was given in.
    assignment = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The regular key given in the same grant whose slot drew it (``annotate.services.check_keys``);
    # null for checks served before they were drawn at grant time.
    drawn_by = models.ForeignKey(
        Key, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    served_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["served_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["annotator", "key"], name="check_served_once"),
        ]

    def __str__(self) -> str:
        return f"check {self.key} → {self.annotator}"


GUIDELINE_MAX_LENGTH = 100_000


class Guideline(models.Model):
    """One version of a study's annotation guidelines, in Markdown (rendered without HTML)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="guidelines")
    version = models.PositiveIntegerField(help_text="From 1; each edit makes a new version.")
    text = models.TextField(max_length=GUIDELINE_MAX_LENGTH)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["study", "version"], name="guideline_version_unique"),
            models.CheckConstraint(
                condition=models.Q(version__gte=1), name="guideline_version_from_one"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.study} guidelines v{self.version}"


class GuidelineAcknowledgement(models.Model):
    """An annotator has read a version of a study's guidelines."""

    guideline = models.ForeignKey(
        Guideline, on_delete=models.CASCADE, related_name="acknowledgements"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="guideline_acknowledgements",
    )
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["guideline", "user"], name="guideline_read_once"),
        ]

    def __str__(self) -> str:
        return f"{self.user} read {self.guideline}"


class KeyFlag(models.Model):
    """An annotator's flag on a key (one per annotator and key), shown to curators."""

    class Reason(models.TextChoices):
        UNCLEAR = "unclear", "unclear"
        TOKENIZATION = "tokenization", "tokenization problem"
        OFFENSIVE = "offensive", "offensive content"
        OTHER = "other", "other"

    key = models.ForeignKey(Key, on_delete=models.CASCADE, related_name="flags")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="key_flags"
    )
    reason = models.CharField(max_length=16, choices=Reason.choices)
    note = models.TextField(blank=True, max_length=NOTE_MAX_LENGTH)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["key", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["key", "annotator"], name="key_flag_one_per_annotator"),
            models.CheckConstraint(
                condition=models.Q(reason__in=["unclear", "tokenization", "offensive", "other"]),
                name="key_flag_reason_known",
            ),
            models.CheckConstraint(
                condition=models.Q(LessThanOrEqual(Length("note"), NOTE_MAX_LENGTH)),
                name="key_flag_note_max_length",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.reason} on {self.key} by {self.annotator}"


class Suggestion(models.Model):
    """A pattern the machine proposes for a key (docs/evidence.md, "Suggestions").

    ``rule``: a shared trigger token, final n-gram or suffix covering at least 3 of the
    top-k; ``cluster``: a group of at least 3 prefixes whose MiniLM embeddings cluster (no
    description: its centroid stands for it when it is scored); ``llm``: one description
    per key from an OpenAI-compatible endpoint, hidden from an annotator until they submit.
    """

    class Method(models.TextChoices):
        RULE = "rule", "rule"
        CLUSTER = "cluster", "cluster"
        LLM = "llm", "llm"

    key = models.ForeignKey(Key, on_delete=models.CASCADE, related_name="suggestions")
    method = models.CharField(max_length=8, choices=Method.choices)
    order = models.PositiveIntegerField(default=0)
    description = models.TextField(blank=True, max_length=PATTERN_DESCRIPTION_MAX_LENGTH)
    kind = models.CharField(max_length=16, choices=Pattern.Kind.choices)
    rule = models.JSONField(null=True, blank=True)
    prefixes = models.ManyToManyField(TriggerPrefix, related_name="suggestions")
    scores = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["key", "method", "order"]
        constraints = [
            models.UniqueConstraint(
                fields=["key", "method", "order"], name="suggestion_order_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(method__in=["rule", "cluster", "llm"]),
                name="suggestion_method_known",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key} {self.method} #{self.order}"


class SuggestionDecision(models.Model):
    """One annotator's answer to a suggestion: accepted (it became ``pattern``) or
    dismissed. Seen by that annotator and by curators, never by another annotator."""

    class Decision(models.TextChoices):
        ACCEPTED = "accepted", "accepted"
        DISMISSED = "dismissed", "dismissed"

    suggestion = models.ForeignKey(Suggestion, on_delete=models.CASCADE, related_name="decisions")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    decision = models.CharField(max_length=10, choices=Decision.choices)
    pattern = models.ForeignKey(
        Pattern, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["suggestion", "annotator"]
        constraints = [
            models.UniqueConstraint(
                fields=["suggestion", "annotator"], name="suggestion_decision_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(decision__in=["accepted", "dismissed"]),
                name="suggestion_decision_known",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.decision} {self.suggestion_id} by {self.annotator_id}"
