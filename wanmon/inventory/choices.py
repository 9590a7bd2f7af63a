"""Choice sets of the inventory models."""

from wanmon.core.choices import text_choices

CarrierKind = text_choices("CarrierKind", {
    "nren": "National research network",
    "backbone": "Backbone",
    "transatlantic": "Transatlantic / intercontinental",
    "other": "Other",
})


ContactRole = text_choices("ContactRole", {
    "noc": "Network operations (alerts)",
    "network": "Network engineering",
    "transfer": "Data transfer service",
    "maintenance": "Maintenance notices",
    "management": "Management",
})


HostRole = text_choices("HostRole", {
    "transfer": "Transfer host",
    "test": "Test host (nuttcp/owamp)",
    "agent": "Agent host",
    "other": "Other",
})


EquipmentRole = text_choices("EquipmentRole", {
    "router": "Router",
    "switch": "Switch",
    "transport": "Optical / SDH transport",
    "firewall": "Firewall",
    "host": "Host",
    "other": "Other",
})


CircuitStatus = text_choices("CircuitStatus", {
    "planned": "Planned",
    "active": "Active",
    "maintenance": "In maintenance",
    "decommissioned": "Decommissioned",
})
