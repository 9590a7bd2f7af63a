"""Sharing limits: how long a carrier's link lives, how long its secret is."""

#: Random bytes of a share token (URL-safe base64: 43 characters).
SHARE_TOKEN_BYTES = 32
#: First characters of a token kept to recognise it in lists.
SHARE_TOKEN_PREFIX_LEN = 8
#: The lifetime an operator may give a link, in days.
SHARE_DAYS_MIN = 1
SHARE_DAYS_MAX = 90
#: The longest user agent kept per access.
USER_AGENT_MAX_CHARS = 300
#: Accesses listed per link in the API.
ACCESS_LIST_MAX = 100
