"""Reading an upload's body: size limits before and after gzip, media type and encoding.

Shared by the endpoints agents and archivers push to. Every refusal is a ``BodyError`` with the HTTP
status and a message that says what to change; nothing is decoded here.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from django.http import HttpRequest


@dataclass
class BodyError(Exception):
    """A body refused before decoding: 413 too large, 415 wrong media type or encoding, 400 broken gzip."""

    status: int
    message: str

    def __str__(self) -> str:
        return self.message


def body_read(request: HttpRequest, *, max_body: int) -> bytes:
    """The request's JSON body, gunzipped when ``Content-Encoding: gzip``, at most ``max_body`` bytes either way.

    The declared length is checked before anything is read, the compressed body while reading, and the
    decompressed size while inflating (a zip bomb stops at ``max_body`` + 1 bytes of output).
    """
    length = request.META.get("CONTENT_LENGTH") or ""
    if length.isdigit() and int(length) > max_body:
        raise BodyError(413, f"body of {int(length)} bytes exceeds the limit of {max_body} bytes")
    ctype = (request.META.get("CONTENT_TYPE") or "application/json").split(";")[0].strip().lower()
    if ctype not in ("application/json", ""):
        raise BodyError(415, f"Content-Type must be application/json, not {ctype!r}")
    raw = request.read(max_body + 1)
    if len(raw) > max_body:
        raise BodyError(413, f"body exceeds the limit of {max_body} bytes")
    encoding = (request.META.get("HTTP_CONTENT_ENCODING") or "identity").strip().lower()
    if encoding in ("identity", ""):
        return raw
    if encoding != "gzip":
        raise BodyError(415, f"unsupported Content-Encoding {encoding!r} (use gzip or none)")
    try:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        body = inflater.decompress(raw, max_body + 1)
    except zlib.error as exc:
        raise BodyError(400, f"body is not valid gzip: {exc}") from None
    if len(body) > max_body or inflater.unconsumed_tail:
        raise BodyError(413, f"decompressed body exceeds the limit of {max_body} bytes")
    if not inflater.eof:
        raise BodyError(400, "truncated gzip body")
    return body
