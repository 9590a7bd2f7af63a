"""Limits and defaults of the measurement store (each overridable in settings, see wanmon/settings.py)."""

"""Records decoded per step of a streamed upload: PostgreSQL stores one chunk while the next is decoded."""
# Per-agent request rate: an agent uploads every minute or so; a burst after an outage drains its spool.
INGEST_RATE_LIMIT = "600/min"

SNMP_COUNTERS = (
    "hc_in_octets",
    "hc_out_octets",
    "hc_in_ucast_pkts",
    "hc_out_ucast_pkts",
    "in_octets",
    "out_octets",
    "in_errors",
    "out_errors",
    "in_discards",
    "out_discards",
)

# Rollup levels of interface rates: name -> (bucket width, the table that holds it)
ROLLUP_LEVELS = {
    "5m": ("5 minutes", "measurements_interfacerate_5m"),
    "1h": ("1 hour", "measurements_interfacerate_1h"),
    "1d": ("1 day", "measurements_interfacerate_1d"),
}
# How often the ingest's follow-up recomputes each level's open bucket (seconds; 0: with every batch). The current
# day's bucket of 20 000 interfaces is up to 28.8 M rates: recomputed with every one-minute batch it alone would
# take a core by the end of the day (an hour's bucket, at most 60 rates an interface, is cheap). The daily level is
# recomputed when an interface's new rates enter another hour than its watermark's (the hours before are then in
# the bucket), when a recompute reaches back before the watermark (late or replayed samples), and by the catch-up
# once an interface that went silent has left its hour: the current day's bucket lags its rates by under an hour.
ROLLUP_CADENCE_S = {"5m": 0, "1h": 0, "1d": 3600}

# Default retention per table (days); None keeps forever. Overridden by settings.WANMON_RETENTION_DAYS.
RETENTION_DAYS = {
    "measurements_snmpsample": 30,
    "measurements_interfacerate": 90,
    "measurements_interfacerate_5m": 400,
    "measurements_interfacerate_1h": 1100,
    "measurements_interfacerate_1d": None,
    "measurements_throughputtest": None,
    "measurements_owamptest": 1100,
    "measurements_traceroute": 1100,
    "measurements_hosttcp": 1100,
}

