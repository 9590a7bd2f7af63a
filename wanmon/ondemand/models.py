"""A test on demand: one job for one site agent, its policy verdict, its lifecycle and the result it brought back."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from wanmon.ondemand.choices import JobKind, JobProtocol, JobStatus, JobVerdict

__all__ = ["Job"]


class Job(models.Model):
    """A test between two sites asked for now (by an operator), run by the agent of ``src``.

    ``status`` goes queued -> running (the agent fetched it) -> done (its result is stored) or failed (the agent did
    not fetch it or did not report in time, or the test itself failed); a request the policy refuses is stored as
    refused, with the rule in ``rule`` and its words in ``reason``. ``reverse`` measures dst -> src from the same
    agent (nuttcp ``-r``). ``budget_bytes`` is what the job counts against its site pair's hourly budget.
    The result is an ordinary measurement row (``result_table`` at ``result_time`` of ``result_batch_id``; its
    ``extra`` holds the ``job_id``); ``result`` keeps the record as the agent uploaded it.
    A diagnosis-driven test (``probe`` set, ``finding`` its finding) also carries what its result says about the
    finding (``verdict``, ``verdict_reason``; wanmon/ondemand/probes.py).
    """

    kind = models.CharField(max_length=20, choices=JobKind.choices)
    src = models.ForeignKey("inventory.Site", on_delete=models.PROTECT, related_name="jobs_out")
    dst = models.ForeignKey("inventory.Site", on_delete=models.PROTECT, related_name="jobs_in")
    agent = models.ForeignKey(
        "inventory.Agent", on_delete=models.SET_NULL, null=True, blank=True, related_name="jobs",
        help_text="the agent of src that runs it",
    )  # fmt: skip
    protocol = models.CharField(max_length=3, choices=JobProtocol.choices, default=JobProtocol.TCP)
    duration_s = models.FloatField(null=True, blank=True)
    rate_bps = models.FloatField(null=True, blank=True)
    streams = models.PositiveSmallIntegerField(null=True, blank=True)
    reverse = models.BooleanField(default=False)
    dst_host = models.CharField(max_length=255, blank=True, help_text="the destination's registered test host")
    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.QUEUED)
    rule = models.CharField(max_length=40, blank=True, help_text="the policy rule that refused it")
    reason = models.TextField(blank=True)
    budget_bytes = models.BigIntegerField(default=0)
    purpose = models.CharField(max_length=200, blank=True, help_text="why it was asked for")
    probe = models.CharField(
        max_length=120, blank=True,
        help_text="a diagnosis-driven test: its key per finding (udp_at_tcp_rate, parallel_streams, tracepath, "
        "reverse_direction, per_address:<path>:<host>); blank for an operator's test",
    )  # fmt: skip
    pin_host = models.BooleanField(default=False, help_text="dst_host wins over the agent's configured host")
    verdict = models.CharField(max_length=12, choices=JobVerdict.choices, blank=True)
    verdict_reason = models.TextField(blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="jobs"
    )
    finding = models.ForeignKey(
        "diagnosis.Finding", on_delete=models.SET_NULL, null=True, blank=True, related_name="jobs"
    )
    incident = models.ForeignKey(
        "alerts.Incident", on_delete=models.SET_NULL, null=True, blank=True, related_name="jobs"
    )
    created_at = models.DateTimeField()
    picked_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    result_table = models.CharField(max_length=64, blank=True)
    result_time = models.DateTimeField(null=True, blank=True)
    result_batch_id = models.UUIDField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=~Q(src=models.F("dst")), name="%(app_label)s_%(class)s_src_ne_dst"),
            models.CheckConstraint(
                condition=Q(duration_s__isnull=True) | Q(duration_s__gt=0), name="%(app_label)s_%(class)s_duration"
            ),
        ]
        indexes = [
            models.Index(fields=["agent", "status"], name="ondemand_job_agent_status"),
            models.Index(fields=["src", "dst", "created_at"], name="ondemand_job_pair_created"),
            models.Index(fields=["finding", "probe"], name="ondemand_job_finding_probe"),
        ]

    def __str__(self) -> str:
        return f"test {self.pk} {self.kind} {self.src_id}->{self.dst_id} {self.status}"

    @property
    def active(self) -> bool:
        """Queued or running: the agent may still bring its result."""
        return self.status in (JobStatus.QUEUED, JobStatus.RUNNING)
