"""Maintenance windows announced by carriers, and the inventory objects each one touches."""

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from wanmon.maintenance.choices import Impact, Status


class MaintenanceWindow(models.Model):
    """A scheduled intervention: when, by whom, its status and its default impact (UTC times)."""

    reference = models.CharField(max_length=200, help_text="the carrier's maintenance id")
    carrier = models.ForeignKey(
        "inventory.Carrier", on_delete=models.PROTECT, null=True, blank=True, related_name="maintenance_windows"
    )
    summary = models.CharField(max_length=500, blank=True)
    start = models.DateTimeField()
    end = models.DateTimeField()
    source_tz = models.CharField(max_length=64, default="UTC")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.CONFIRMED)
    impact = models.CharField(max_length=20, choices=Impact.choices, default=Impact.OUTAGE)
    uid = models.CharField("iCalendar UID", max_length=255, blank=True)
    sequence = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["start", "reference"]
        constraints = [
            models.CheckConstraint(
                condition=Q(end__gt=models.F("start")), name="%(app_label)s_%(class)s_end_after_start"
            ),
            models.UniqueConstraint(
                fields=["carrier", "reference"], name="%(app_label)s_%(class)s_unique_carrier_reference"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.reference} {self.start:%Y-%m-%d %H:%M}Z"

    def clean(self) -> None:
        if self.start and self.end and self.end <= self.start:
            raise ValidationError({"end": "must be after start"})


class MaintenanceAffect(models.Model):
    """One inventory object a window touches, with its own impact (defaults to the window's)."""

    window = models.ForeignKey(MaintenanceWindow, on_delete=models.CASCADE, related_name="affects")
    equipment = models.ForeignKey(
        "inventory.Equipment", on_delete=models.CASCADE, null=True, blank=True, related_name="maintenance_affects"
    )
    interface = models.ForeignKey(
        "inventory.Interface", on_delete=models.CASCADE, null=True, blank=True, related_name="maintenance_affects"
    )
    trunk = models.ForeignKey(
        "inventory.Trunk", on_delete=models.CASCADE, null=True, blank=True, related_name="maintenance_affects"
    )
    circuit = models.ForeignKey(
        "inventory.Circuit", on_delete=models.CASCADE, null=True, blank=True, related_name="maintenance_affects"
    )
    site = models.ForeignKey(
        "inventory.Site", on_delete=models.CASCADE, null=True, blank=True, related_name="maintenance_affects"
    )
    impact = models.CharField(max_length=20, choices=Impact.choices, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(equipment__isnull=False)
                | Q(interface__isnull=False)
                | Q(trunk__isnull=False)
                | Q(circuit__isnull=False)
                | Q(site__isnull=False),
                name="%(app_label)s_%(class)s_targets_something",
            )
        ]

    def __str__(self) -> str:
        return f"{self.window.reference} -> {self.label}"

    @property
    def label(self) -> str:
        """The affected object as the topology document names it."""
        if self.interface_id:
            return f"{self.interface.equipment.name}:{self.interface.name}"
        if self.equipment_id:
            return self.equipment.name
        if self.trunk_id:
            return self.trunk.name
        if self.circuit_id:
            return f"circuit:{self.circuit.cid}"
        return f"site:{self.site.code}"

    @property
    def effective_impact(self) -> str:
        return self.impact or self.window.impact
