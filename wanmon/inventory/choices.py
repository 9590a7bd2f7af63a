"""Choice sets of the inventory models."""

from django.db import models


class CarrierKind(models.TextChoices):
    NREN = "nren", "National research network"
    BACKBONE = "backbone", "Backbone"
    TRANSATLANTIC = "transatlantic", "Transatlantic / intercontinental"
    OTHER = "other", "Other"


class ContactRole(models.TextChoices):
    NOC = "noc", "Network operations (alerts)"
    NETWORK = "network", "Network engineering"
    TRANSFER = "transfer", "Data transfer service"
    MAINTENANCE = "maintenance", "Maintenance notices"
    MANAGEMENT = "management", "Management"


class HostRole(models.TextChoices):
    TRANSFER = "transfer", "Transfer host"
    TEST = "test", "Test host (nuttcp/owamp)"
    AGENT = "agent", "Agent host"
    OTHER = "other", "Other"


class EquipmentRole(models.TextChoices):
    ROUTER = "router", "Router"
    SWITCH = "switch", "Switch"
    TRANSPORT = "transport", "Optical / SDH transport"
    FIREWALL = "firewall", "Firewall"
    HOST = "host", "Host"
    OTHER = "other", "Other"


class CircuitStatus(models.TextChoices):
    PLANNED = "planned", "Planned"
    ACTIVE = "active", "Active"
    MAINTENANCE = "maintenance", "In maintenance"
    DECOMMISSIONED = "decommissioned", "Decommissioned"
