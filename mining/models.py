"""Mining runs and their shards. Results land in annotate's tables (Study, Key, ...)."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models

from annotate.models import Study, StudyJob


def new_work_id() -> str:
    return secrets.token_hex(16)


class MiningRun(models.Model):
    """One mining job: a model over a corpus, cut into shards, merged, loaded as a study."""

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        PREPARING = "preparing", "preparing"
        MINING = "mining", "mining"
        MERGING = "merging", "merging"
        DONE = "done", "done"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    # Names the run's work folder: random, so that a fresh database over an old data
    # folder never meets a folder of an older run with the same primary key.
    work_id = models.CharField(max_length=32, unique=True, editable=False, default=new_work_id)
    study_name = models.CharField(max_length=200)
    study = models.OneToOneField(
        Study, null=True, blank=True, on_delete=models.SET_NULL, related_name="mining_run"
    )
    # JSON-only parameters (the CLI's flags): model, corpus, sentences, top_k, seed, ...
    params = models.JSONField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    sentences_total = models.BigIntegerField(default=0)
    tokens_total = models.BigIntegerField(default=0)
    sentences_truncated = models.BigIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Who works on the study once it is loaded: in the load's own transaction, one batch
    # of all its keys (named ``assign_batch``) is given whole to each of them who is still
    # an active annotator, and ``guidelines``, if any, become version 1 of the study's
    # guidelines, by ``created_by``. They may follow the run's progress meanwhile.
    assign_to = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="+")
    assign_batch = models.CharField(max_length=200, blank=True)
    guidelines = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The mining phase alone (the shards), without preparing (model load, tokenizing the
    # corpus) nor merging and loading: its tokens / seconds is the run's final tokens/s.
    mining_started_at = models.DateTimeField(null=True, blank=True)
    mining_finished_at = models.DateTimeField(null=True, blank=True)
    # A worker's sign of life while it prepares, mines or merges this run; a run whose
    # heartbeat is older than FFKV_RUN_STALE_AFTER_S has its work queued again
    # (services.mining_run_requeue_stale), and fails after a few such re-queues.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    requeues = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "heartbeat_at"], name="run_status_heartbeat")]

    def __str__(self) -> str:
        return f"mining run {self.pk} ({self.study_name})"

    @property
    def finished(self) -> bool:
        return self.status in {self.Status.DONE, self.Status.FAILED, self.Status.CANCELLED}


class MiningShard(models.Model):
    """A sentence-index range [start, end) of a run, mined by one task."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        RUNNING = "running", "running"
        DONE = "done", "done"

    run = models.ForeignKey(MiningRun, on_delete=models.CASCADE, related_name="shards")
    index = models.PositiveIntegerField()
    start = models.BigIntegerField()
    end = models.BigIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    sentences_done = models.BigIntegerField(default=0)
    tokens_done = models.BigIntegerField(default=0)
    tokens_total = models.BigIntegerField(default=0)
    tokens_per_second = models.FloatField(default=0.0)
    attempts = models.PositiveIntegerField(default=0)
    # Who mined it last: "hostname pid" of the worker process (or of `manage.py mine`).
    worker = models.CharField(max_length=300, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [
            models.UniqueConstraint(fields=["run", "index"], name="shard_index_unique_in_run"),
        ]

    def __str__(self) -> str:
        return f"shard {self.index} of run {self.run_id}"


class CompositionJob(StudyJob):
    """One run of the §5 composition analysis on a study (docs/composition.md), a task on
    queue ``gpu``. Its figures go to ``Study.composition`` when it completes; a job that
    fails leaves the study's figures as they were and keeps the reason in ``error``."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="composition_jobs")
    prefixes = models.PositiveIntegerField(help_text="How many prefixes the slice holds.")
    seed = models.IntegerField(default=0)

    class Meta(StudyJob.Meta):
        constraints = [
            models.CheckConstraint(
                condition=models.Q(prefixes__gte=1), name="composition_prefixes"
            ),
        ]

    def __str__(self) -> str:
        return f"composition job {self.pk} of study {self.study_id} ({self.status})"


class CausalJob(StudyJob):
    """One causal probe of a study (docs/causal.md): an ablation against a random-key
    control, a double dissociation, a causal trace or an attribution, a task on queue
    ``gpu``. ``params`` holds what was asked with every key group resolved to its keys;
    ``result`` the probe's figures once done (``mining.core.causal``'s JSON)."""

    class Kind(models.TextChoices):
        ABLATION = "ablation", "ablation"
        DISSOCIATION = "dissociation", "dissociation"
        TRACING = "tracing", "tracing"
        ATTRIBUTION = "attribution", "attribution"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="causal_jobs")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    params = models.JSONField()
    result = models.JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        return f"{self.kind} job {self.pk} of study {self.study_id} ({self.status})"
