"""Constants of the inventory app."""

from datetime import UTC, datetime

# The first version of a path imported without an explicit time is taken to have always been in force:
# the operator describes the network as it is (and was), so past measurements can still be explained.
PATH_HISTORY_START = datetime(1970, 1, 1, tzinfo=UTC)

# Agent tokens: secrets.token_urlsafe(AGENT_TOKEN_BYTES) gives 43 characters (256 bits of randomness);
# the first AGENT_TOKEN_PREFIX_LEN characters are kept in clear so that people can recognise a token.
AGENT_TOKEN_BYTES = 32
AGENT_TOKEN_PREFIX_LEN = 8
# Longer strings are rejected before hashing (a token is 43 characters; this bounds the work per request).
AGENT_TOKEN_MAX_LEN = 200

# In topology documents, a hop or a trunk member is "equipment" or "equipment:interface".
# Equipment names cannot contain ':' (see models.name_validator), so the first ':' separates the two.
LABEL_SEPARATOR = ":"
