"""Inventory models: the topology every diagnosis and notification is reasoned over."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models import Q

from wanmon.core.models import site_or_carrier_constraint
from wanmon.core.units import bps_from_mbps
from wanmon.inventory.choices import AgentScope, CarrierKind, CircuitStatus, ContactRole, EquipmentRole, HostRole

code_validator = RegexValidator(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$", "letters, digits, '_', '.', '-' (max 32)")
name_validator = RegexValidator(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$", "letters, digits, '_', '.', '-' (max 100)")


class Carrier(models.Model):
    """A network operator whose equipment or circuits carry site-to-site paths (NREN, backbone, transatlantic)."""

    code = models.CharField(max_length=32, unique=True, validators=[code_validator])
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=CarrierKind.choices, default=CarrierKind.OTHER)
    noc_email = models.EmailField(blank=True)
    notes = models.TextField(blank=True)

    class Meta:
        ordering = ["code"]

    def __str__(self) -> str:
        return self.code


class Site(models.Model):
    """A participating site (Tier-0/1/2 centre) with its location and the people to e-mail."""

    code = models.CharField(max_length=32, unique=True, validators=[code_validator])
    name = models.CharField(max_length=200)
    tier = models.PositiveSmallIntegerField(null=True, blank=True, validators=[MaxValueValidator(3)])
    # The overview groups hundreds of sites by region and tier (e.g. "Europe", "North America").
    region = models.CharField(max_length=64, blank=True)
    lat = models.FloatField(null=True, blank=True, validators=[MinValueValidator(-90), MaxValueValidator(90)])
    lon = models.FloatField(null=True, blank=True, validators=[MinValueValidator(-180), MaxValueValidator(180)])
    notes = models.TextField(blank=True)

    class Meta:
        ordering = ["code"]
        constraints = [
            models.CheckConstraint(
                condition=Q(lat__isnull=True) | Q(lat__gte=-90, lat__lte=90), name="%(app_label)s_%(class)s_lat_range"
            ),
            models.CheckConstraint(
                condition=Q(lon__isnull=True) | Q(lon__gte=-180, lon__lte=180),
                name="%(app_label)s_%(class)s_lon_range",
            ),
        ]

    def __str__(self) -> str:
        return self.code


class SiteContact(models.Model):
    """Who at a site gets e-mail about what (alerts, maintenance notices, ...)."""

    site = models.ForeignKey(Site, on_delete=models.CASCADE, related_name="contacts")
    name = models.CharField(max_length=200, blank=True)
    email = models.EmailField()
    role = models.CharField(max_length=20, choices=ContactRole.choices, default=ContactRole.NOC)

    class Meta:
        ordering = ["site__code", "role", "email"]
        constraints = [
            models.UniqueConstraint(
                fields=["site", "email", "role"], name="%(app_label)s_%(class)s_unique_site_email_role"
            )
        ]

    def __str__(self) -> str:
        return f"{self.site.code} {self.role} <{self.email}>"


class Host(models.Model):
    """A transfer or test host at a site (nuttcp/owamp endpoint)."""

    site = models.ForeignKey(Site, on_delete=models.CASCADE, related_name="hosts")
    name = models.CharField(max_length=100, validators=[name_validator])
    address = models.GenericIPAddressField(null=True, blank=True)
    role = models.CharField(max_length=20, choices=HostRole.choices, default=HostRole.TEST)

    class Meta:
        ordering = ["site__code", "name"]
        constraints = [
            models.UniqueConstraint(fields=["site", "name"], name="%(app_label)s_%(class)s_unique_site_name")
        ]

    def __str__(self) -> str:
        return f"{self.site.code}/{self.name}"


class Equipment(models.Model):
    """A router, switch or transport box, owned by a site or by a carrier, with its known limits and quirks."""

    name = models.CharField(max_length=100, unique=True, validators=[name_validator])
    site = models.ForeignKey(Site, on_delete=models.PROTECT, null=True, blank=True, related_name="equipment")
    carrier = models.ForeignKey(Carrier, on_delete=models.PROTECT, null=True, blank=True, related_name="equipment")
    vendor = models.CharField(max_length=100, blank=True)
    model = models.CharField(max_length=100, blank=True)
    os_version = models.CharField(max_length=100, blank=True)
    role = models.CharField(max_length=20, choices=EquipmentRole.choices, default=EquipmentRole.ROUTER)
    location = models.CharField(max_length=200, blank=True)
    # The seed note asks for oversubscription to be known: a 10 Gb/s port on a 4 Gb/s line card is a trap.
    backplane_capacity_mbps = models.PositiveBigIntegerField(null=True, blank=True)
    linecard_capacity_mbps = models.PositiveBigIntegerField(null=True, blank=True)
    # Vendor quirks that change the diagnosis (e.g. equipment known to reorder packets).
    known_reordering = models.BooleanField(default=False)
    quirks = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "equipment"
        constraints = [site_or_carrier_constraint()]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.site_id and self.carrier_id:
            raise ValidationError("equipment belongs to a site or to a carrier, not both")

    @property
    def owner_code(self) -> str:
        return self.site.code if self.site_id else (self.carrier.code if self.carrier_id else "")


class Interface(models.Model):
    """A port of a piece of equipment (SNMP ifIndex, speed, MTU, line card)."""

    equipment = models.ForeignKey(Equipment, on_delete=models.CASCADE, related_name="interfaces")
    name = models.CharField(max_length=128)  # as long as the wire schema allows
    if_index = models.PositiveIntegerField(null=True, blank=True)
    speed_mbps = models.PositiveBigIntegerField(null=True, blank=True)
    mtu = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(68), MaxValueValidator(65535)]
    )
    blade = models.CharField(max_length=50, blank=True)
    description = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["equipment__name", "name"]
        constraints = [
            models.UniqueConstraint(fields=["equipment", "name"], name="%(app_label)s_%(class)s_unique_equipment_name"),
            models.UniqueConstraint(
                fields=["equipment", "if_index"],
                condition=Q(if_index__isnull=False),
                name="%(app_label)s_%(class)s_unique_equipment_ifindex",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.equipment.name}:{self.name}"

    @property
    def speed_bps(self) -> float | None:
        return bps_from_mbps(self.speed_mbps)


class Circuit(models.Model):
    """A carrier circuit between two interfaces (A and Z end), with the carrier's circuit id."""

    carrier = models.ForeignKey(Carrier, on_delete=models.PROTECT, related_name="circuits")
    cid = models.CharField("circuit id", max_length=100)
    capacity_mbps = models.PositiveBigIntegerField(null=True, blank=True)
    a_interface = models.ForeignKey(
        Interface, on_delete=models.SET_NULL, null=True, blank=True, related_name="circuits_a"
    )
    z_interface = models.ForeignKey(
        Interface, on_delete=models.SET_NULL, null=True, blank=True, related_name="circuits_z"
    )
    status = models.CharField(max_length=20, choices=CircuitStatus.choices, default=CircuitStatus.ACTIVE)
    description = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["carrier__code", "cid"]
        constraints = [models.UniqueConstraint(fields=["carrier", "cid"], name="%(app_label)s_%(class)s_unique_cid")]

    def __str__(self) -> str:
        return f"{self.carrier.code} {self.cid}"


class Trunk(models.Model):
    """A bundle (LAG) of member interfaces that share load by hashing flows."""

    name = models.CharField(max_length=100, unique=True, validators=[name_validator])
    members = models.ManyToManyField(Interface, related_name="trunks", blank=True)
    description = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Path(models.Model):
    """One direction of a site pair, as a version: the ordered hops valid from ``valid_from`` until ``valid_to``.

    A route change closes the current version and opens a new one, so that any past measurement
    can be explained with the hops that were in force at its time.
    """

    src = models.ForeignKey(Site, on_delete=models.PROTECT, related_name="paths_out")
    dst = models.ForeignKey(Site, on_delete=models.PROTECT, related_name="paths_in")
    capacity_mbps = models.PositiveBigIntegerField(null=True, blank=True)
    # Nominal round-trip time of this route: lets window/BDP advice be given before any test reported an RTT.
    # A correction of the estimate is not a route change, so it is updated in place (no new version).
    rtt_ms = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0)])
    valid_from = models.DateTimeField()
    valid_to = models.DateTimeField(null=True, blank=True)
    note = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["src__code", "dst__code", "valid_from"]
        constraints = [
            models.CheckConstraint(condition=~Q(src=models.F("dst")), name="%(app_label)s_%(class)s_src_ne_dst"),
            models.CheckConstraint(
                condition=Q(valid_to__isnull=True) | Q(valid_to__gt=models.F("valid_from")),
                name="%(app_label)s_%(class)s_valid_interval",
            ),
            models.UniqueConstraint(
                fields=["src", "dst"], condition=Q(valid_to__isnull=True), name="%(app_label)s_%(class)s_unique_current"
            ),
        ]
        indexes = [models.Index(fields=["src", "dst", "valid_from"], name="inventory_path_lookup")]

    def __str__(self) -> str:
        return f"{self.src.code}->{self.dst.code}"

    @property
    def capacity_bps(self) -> float | None:
        return bps_from_mbps(self.capacity_mbps)


class PathHop(models.Model):
    """One hop of a path version: a piece of equipment, optionally the interface the path leaves it by."""

    path = models.ForeignKey(Path, on_delete=models.CASCADE, related_name="hops")
    position = models.PositiveSmallIntegerField()
    equipment = models.ForeignKey(Equipment, on_delete=models.PROTECT, related_name="path_hops")
    interface = models.ForeignKey(Interface, on_delete=models.PROTECT, null=True, blank=True, related_name="path_hops")

    class Meta:
        ordering = ["path", "position"]
        constraints = [
            models.UniqueConstraint(fields=["path", "position"], name="%(app_label)s_%(class)s_unique_position")
        ]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        """The hop as the topology document writes it: ``equipment`` or ``equipment:interface``."""
        return f"{self.equipment.name}:{self.interface.name}" if self.interface_id else self.equipment.name


class Agent(models.Model):
    """A site agent allowed to push measurements; only the SHA-256 of its token is stored.

    ``scope`` says where its token is accepted: a site agent's everywhere agents upload, the archive agent of a
    pSConfig template (whose token anyone fetching the template reads) on the perfSONAR archive only.
    """

    site = models.ForeignKey(Site, on_delete=models.PROTECT, related_name="agents")
    name = models.CharField(max_length=100, unique=True, validators=[name_validator])
    scope = models.CharField(max_length=20, choices=AgentScope.choices, default=AgentScope.AGENT)
    token_hash = models.CharField(max_length=64, unique=True)
    token_prefix = models.CharField(max_length=12, help_text="first characters of the token, to recognise it")
    equipment = models.ManyToManyField(Equipment, related_name="agents", blank=True, help_text="may poll via SNMP")
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_seen_at = models.DateTimeField(null=True, blank=True)
    jobs_polled_at = models.DateTimeField(
        null=True, blank=True, help_text="last asked for tests on demand (its [jobs] are enabled)"
    )
    version = models.CharField(max_length=50, blank=True)

    class Meta:
        ordering = ["site__code", "name"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
