"""Constants of the maintenance app (settings that operators tune live in wanmon/settings.py)."""

#: Changes to these fields make a new revision of a window: sites already told about it hear of the change.
MATERIAL_FIELDS = frozenset({"start", "end", "status", "impact", "rrule", "behaviour"})

#: A calendar URL must answer completely within this time, be at most this large, and redirect at most this often.
URL_TIMEOUT_S = 20.0
URL_MAX_BYTES = 5 * 1024 * 1024
URL_MAX_REDIRECTS = 3

#: Feed tokens: 32 random bytes (URL-safe base64), the first characters shown to recognise one.
FEED_TOKEN_BYTES = 32
FEED_TOKEN_PREFIX_LEN = 8

#: Feeds carry windows from this many days ago on (plus everything to come).
FEED_PAST_DAYS = 90

#: "Ended but still degraded": checked for windows that ended less than this long ago ...
ENDED_CHECK_WINDOW_S = 2 * 3600.0
#: ... with path findings still active and seen at most this long before the end.
ENDED_DEGRADED_RECENT_S = 15 * 60.0
