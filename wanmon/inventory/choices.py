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


AgentScope = text_choices("AgentScope", {
    "agent": "Site agent: measurement batches and perfSONAR runs",
    "archive": "perfSONAR runs only (a pSConfig template's archive)",
}, doc="What an agent's token may upload: the token in a pSConfig template is read by whoever fetches it.")


CircuitStatus = text_choices("CircuitStatus", {
    "planned": "Planned",
    "active": "Active",
    "maintenance": "In maintenance",
    "decommissioned": "Decommissioned",
})
