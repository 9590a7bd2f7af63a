"""Choice sets of the case memory."""

from wanmon.core.choices import text_choices

ResponsibleKind = text_choices(
    "ResponsibleKind",
    {
        "site": "Site (code)",
        "carrier": "Carrier (code)",
        "equipment": "Equipment (name)",
        "host": "Host (name)",
    },
    doc="Who or what was responsible for the problem, as ``KIND:NAME`` in the resolve input.",
)
