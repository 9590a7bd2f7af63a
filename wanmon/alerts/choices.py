"""Choice sets of incidents, silences and notifications."""

from wanmon.core.choices import ACTIVE_LIFECYCLE, Lifecycle, text_choices

# An incident goes open -> acknowledged -> resolved as its findings do.
IncidentStatus = Lifecycle
ACTIVE_INCIDENT_STATUSES = ACTIVE_LIFECYCLE


IncidentKind = text_choices("IncidentKind", {
    "element": "Root-cause element (equipment, interface, trunk)",
    "maintenance": "Maintenance window",
    "site": "Many paths of one site",
    "pair": "Both directions of a site pair",
    "single": "A finding of its own",
}, doc="What gathers the findings of an incident (its group key says which element, site, pair or window).")


MemberRole = text_choices("MemberRole", {
    "root": "Root cause",
    "symptom": "Symptom",
    "related": "Related / corroborating",
})


IncidentEventKind = text_choices("IncidentEventKind", {
    "opened": "Opened",
    "changed": "Findings changed",
    "muted": "Muted",
    "unmuted": "Unmuted",
    "notified": "Notified",
    "acknowledged": "Acknowledged",
    "cleared": "Evidence cleared (resolve hold)",
    "recurred": "Recurred during the resolve hold",
    "reopened": "Reopened: a finding came back soon after the resolution",
    "resolved": "Resolved",
    "merged": "Merged into another incident",
})


NotificationKind = text_choices("NotificationKind", {
    "firing": "First notice / problem persists after a mute",
    "update": "New findings or higher severity",
    "repeat": "Still open (repeat interval)",
    "resolved": "Resolved",
    "returned": "Returned after the resolved notice",
    "silence_reminder": "Silence about to expire",
})


NotificationStatus = text_choices("NotificationStatus", {
    "pending": "Pending",
    "sent": "Sent",
    "failed": "Failed (will be retried)",
    "abandoned": "Abandoned after the last retry",
})


SilenceMatcher = text_choices("SilenceMatcher", {
    "code": "Finding code",
    "site": "Site code (path end, host site)",
    "path": "Path direction SRC->DST",
    "equipment": "Equipment (finding subject or incident root)",
}, doc="Names a silence may match on (all given must match).")
