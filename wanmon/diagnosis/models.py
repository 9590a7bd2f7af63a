"""Stored findings of the diagnosis and their history."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from wanmon.core.models import TrailEvent
from wanmon.diagnosis.choices import Code, EventKind, FindingStatus, Severity


class Finding(models.Model):
    """A diagnosis result with a lifecycle (open -> acknowledged -> resolved).

    One active finding per code and subject: a new evaluation that finds the same thing updates it
    (window end, numbers, explanation) instead of creating a duplicate. Closing is damped: an active finding
    that an evaluation does not report counts the miss (``absent_evaluations``) and stays active until
    FINDING_CLOSE_ABSENT_EVALUATIONS misses in a row spanning FINDING_CLOSE_ABSENT_S since ``last_seen_at``;
    only then is it resolved. A recurrence within FINDING_REOPEN_WITHIN_S of the resolution reopens the same
    finding; a later one opens a new finding.
    """

    code = models.CharField(max_length=40, choices=Code.choices)
    severity = models.CharField(max_length=10, choices=Severity.choices)
    status = models.CharField(max_length=20, choices=FindingStatus.choices, default=FindingStatus.OPEN)
    subject = models.JSONField(help_text="{src, dst} | {equipment[, interface]} | {trunk} | {site[, host]}")
    subject_key = models.CharField(max_length=400, help_text="canonical subject, for deduplication")
    rank = models.PositiveSmallIntegerField(null=True, blank=True)
    start = models.DateTimeField(help_text="start of the evidence window")
    onset = models.DateTimeField(
        null=True,
        blank=True,
        help_text="start of the episode: its first bad observation, kept as the window slides (null: not known)",
    )
    end = models.DateTimeField(help_text="end of the evidence window")
    summary = models.TextField(blank=True)
    explanation = models.TextField(blank=True)
    evidence = models.JSONField(default=dict, blank=True)
    actions = models.JSONField(default=list, blank=True)
    explained_by = models.JSONField(default=list, blank=True, help_text="e.g. maintenance references")
    first_seen_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="acknowledged_findings"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    tested = models.JSONField(
        default=list, blank=True,
        help_text="diagnosis-driven tests: [{probe, job, status, verdict, reason, line, figures, queued_at, "
        "verdict_at, after_finding_s}], one per test key (wanmon/ondemand/probes.py)",
    )  # fmt: skip
    absent_evaluations = models.PositiveIntegerField(
        default=0, help_text="consecutive evaluations that did not report it (resolved after a few)"
    )

    class Meta:
        ordering = ["-last_seen_at", "code"]
        constraints = [
            models.UniqueConstraint(
                fields=["code", "subject_key"],
                condition=~Q(status=FindingStatus.RESOLVED),
                name="%(app_label)s_%(class)s_unique_active",
            )
        ]
        indexes = [
            models.Index(fields=["status", "code"], name="diagnosis_finding_status_code"),
            models.Index(
                fields=["subject_key", "code", "resolved_at"],
                condition=Q(status=FindingStatus.RESOLVED),
                name="diagnosis_finding_resolved_key",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.code} {self.subject_key} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status != FindingStatus.RESOLVED


class FindingEvent(TrailEvent):
    """History of a finding: opened, updated, acknowledged, resolved, reopened (who and when)."""

    finding = models.ForeignKey(Finding, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=20, choices=EventKind.choices)

    def __str__(self) -> str:
        return f"{self.finding_id} {self.kind} {self.time:%Y-%m-%dT%H:%MZ}"


class DiagnosisCycle(models.Model):
    """One periodic evaluation (every minute): the paths it planned, split into shards that Celery workers take.

    ``closed_at`` is set by the shard that completes the cycle (every planned path evaluated); only a closed
    cycle resolves element findings nobody saw in it (a cycle with a lost shard resolves nothing).
    """

    at = models.DateTimeField(unique=True, help_text="the evaluation's 'now'")
    planned = models.PositiveIntegerField(default=0, help_text="path directions planned")
    shards = models.PositiveIntegerField(default=0)
    evaluated = models.PositiveIntegerField(default=0, help_text="path directions evaluated so far")
    elements_done = models.BooleanField(default=False, help_text="the elements shard has run")
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-at"]

    def __str__(self) -> str:
        return f"cycle {self.at:%Y-%m-%dT%H:%M:%SZ} ({self.evaluated}/{self.planned})"


class PathEvaluation(models.Model):
    """The latest cycle that evaluated a path direction: claimed by a shard in the transaction that stores its
    findings, so that a path is evaluated at most once per cycle whatever the number of workers or redeliveries,
    and a shard lost with its worker leaves its paths unclaimed (evaluated again by the next cycle)."""

    path = models.OneToOneField("inventory.Path", on_delete=models.CASCADE, primary_key=True, related_name="+")
    cycle = models.ForeignKey(DiagnosisCycle, on_delete=models.SET_NULL, null=True, related_name="+")
    cycle_at = models.DateTimeField(help_text="the 'now' of the last evaluation")
    evaluations = models.PositiveBigIntegerField(default=0, help_text="evaluations since the path was created")
    worker = models.CharField(max_length=200, blank=True, help_text="the Celery worker of the last evaluation")
    evidence_until = models.DateTimeField(
        null=True,
        blank=True,
        help_text="the newest test of the path the last evaluation saw: a later one is new evidence",
    )

    def __str__(self) -> str:
        return f"path {self.path_id} at {self.cycle_at:%Y-%m-%dT%H:%M:%SZ}"


class ShardCorrelation(models.Model):
    """What one shard of a cycle hands to the cycle's correlation stage (``wanmon.diagnosis.correlation_stage``):
    the verdicts of the path directions it evaluated, compact (their hops, their degradation episodes, when each
    kind of measurement saw them), written in the shard's transaction and read once when the cycle closes, which
    deletes them. ``degraded`` (the directions with an episode, and the shard's load-rise suspects) is read every
    cycle; ``healthy`` (the others) only when degraded directions of two site pairs overlap in time."""

    cycle = models.ForeignKey(DiagnosisCycle, on_delete=models.CASCADE, related_name="+")
    degraded = models.JSONField(default=dict, help_text="directions with an episode; corroboration, load suspects")
    healthy = models.JSONField(default=list, help_text="directions without an episode, with their hops")

    def __str__(self) -> str:
        return f"shard correlation of cycle {self.cycle_id}"
