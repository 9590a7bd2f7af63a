"""Bearer secrets (agent, calendar feed, pSConfig, archive and personal API tokens) are stored only as their hash."""

from __future__ import annotations

import hashlib

TOKEN_PREFIX_LEN = 8
"""How many first characters of a token are stored, to recognise it in lists."""


def token_hash(token: str) -> str:
    """SHA-256 hex of a token: tokens carry 256 random bits, so a fast hash is enough (no stretching)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
