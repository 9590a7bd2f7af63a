"""Whether a carrier notice may act (explain and mute degradations) as soon as it is imported (pure).

Anyone can write an e-mail with a carrier's From address or an .ics naming a carrier's circuits; a
window from such a notice would mute a real outage. So a notice is trusted only through:

- an operator who imports it (upload, API, or the command line on the server): they vouch for it;
- the calendar URL of the carrier's maintenance source (polled hourly): the carrier publishes it;
- the mailbox of the carrier's maintenance source, one only its notices reach (an e-mail there
  must still pass authentication when the MTA reports on it);
- an e-mail whose sender is on a carrier's sender list and, when the receiving MTA adds
  Authentication-Results (RFC 8601), with DKIM, SPF or DMARC passing for the sender's domain. The
  MTA's own header is the topmost one, or the ones whose authserv-id is in
  ``WANMON_MAINTENANCE_AUTHSERV_IDS``; with that setting, or ``WANMON_MAINTENANCE_REQUIRE_EMAIL_AUTH``,
  a message without such a header is not trusted.

Anything else (a sender on no list, failed authentication, an .ics from another mailbox) is held for an
operator's review: its windows are kept and shown, but explain, mute, skip and notify nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Trust", "email_trust", "authentication_results_parse"]

# Around these, RFC 8601 allows white space (CFWS): "spf = pass", "smtp . mailfrom=x".
_JOINERS = re.compile(r"\s*([=/.])\s*")
# Microsoft 365 omits the authserv-id: its header starts with a result ("spf=pass (sender IP is ...) ...").
_RESULT_FIRST = re.compile(r"^[A-Za-z0-9_-]+(?:/\d+)?=")


@dataclass(frozen=True)
class Trust:
    """The verdict on one carrier notice and the reason, as the window's review note says it."""

    trusted: bool
    reason: str


@dataclass(frozen=True)
class AuthResult:
    """One method's result of an Authentication-Results header: dkim=pass header.d=colt.net."""

    method: str
    result: str
    properties: dict[str, str]


def _lex(value: str) -> tuple[str, list[str]]:
    """``value`` without its comments (nested, RFC 5322) and with each quoted string replaced by a marker
    ("\\x00N\\x00", N its index in the list returned), so that ';' '=' and '(' inside quotes are text."""
    out: list[str] = []
    quoted: list[str] = []
    depth = 0
    i = 0
    while i < len(value):
        c = value[i]
        if depth and c == "\\":
            i += 2  # a quoted-pair in a comment: its character is no parenthesis
            continue
        if depth:
            depth += {"(": 1, ")": -1}.get(c, 0)
        elif c == "(":
            depth = 1
            out.append(" ")
        elif c == '"':
            end = i + 1
            text: list[str] = []
            while end < len(value) and value[end] != '"':
                if value[end] == "\\" and end + 1 < len(value):
                    end += 1
                text.append(value[end])
                end += 1
            quoted.append("".join(text))
            out.append(f"\x00{len(quoted) - 1}\x00")
            i = end
        else:
            out.append(c)
        i += 1
    return _JOINERS.sub(r"\1", "".join(out)), quoted


def authentication_results_parse(value: str) -> tuple[str, list[AuthResult]]:
    """(authserv-id, results) of one Authentication-Results header value (RFC 8601; reasons and comments dropped).

    Microsoft 365 writes no authserv-id (``spf=pass (sender IP is 192.0.2.1) smtp.mailfrom=colt.net; dkim=...``):
    its id is "" and its first result counts like the others.
    """
    text, quoted = _lex(value)

    def unquote(word: str) -> str:
        return re.sub(r"\x00(\d+)\x00", lambda m: quoted[int(m.group(1))], word)

    parts = [p.strip() for p in text.split(";")]
    if not parts or _RESULT_FIRST.match(parts[0]):
        authserv_id = ""
    else:
        authserv_id = unquote(parts[0].split()[0]).lower() if parts[0] else ""
        parts = parts[1:]
    results = []
    for part in parts:
        tokens = part.split()
        if not tokens or "=" not in tokens[0]:
            continue  # "none", or no result
        method, _, result = tokens[0].partition("=")
        properties = {}
        for token in tokens[1:]:
            name, eq, prop = token.partition("=")
            if eq and name.lower() != "reason":
                properties[name.lower()] = unquote(prop).strip().lower()
        results.append(AuthResult(method.split("/")[0].lower(), unquote(result).lower(), properties))
    return authserv_id, results


def _domain(value: str) -> str:
    return value.rpartition("@")[2].strip().strip(".").lower()


def _aligned(a: str, b: str) -> bool:
    """Relaxed alignment (DMARC): the same domain, or one a subdomain of the other."""
    return bool(a and b) and (a == b or a.endswith("." + b) or b.endswith("." + a))


def _passes(result: AuthResult, sender_domain: str) -> str | None:
    """'dkim=pass (colt.net)' when the result passes for the sender's domain, else None."""
    if result.result != "pass":
        return None
    keys = {"dkim": ("header.d", "header.i"), "spf": ("smtp.mailfrom", "smtp.helo"), "dmarc": ("header.from",)}
    for key in keys.get(result.method, ()):
        domain = _domain(result.properties.get(key, ""))
        if _aligned(domain, sender_domain):
            return f"{result.method}=pass ({domain})"
    return None


def email_trust(
    *,
    sender: str,
    carrier_code: str | None,
    authentication_results: Sequence[str],
    authserv_ids: Sequence[str] = (),
    require_authentication: bool = False,
    channel: str = "",
) -> Trust:
    """The verdict on an e-mail whose sender is on the list of ``carrier_code`` (None: on no carrier's list).

    ``channel``: how else the e-mail is known to be the carrier's (its source's own mailbox), said in the reason.
    """
    if not carrier_code:
        return Trust(False, f"sender {sender or '(none)'} is on no carrier's sender list")
    ids = {i.strip().lower() for i in authserv_ids if i.strip()}
    parsed = [authentication_results_parse(v) for v in authentication_results]
    ours = [results for serv, results in parsed if serv in ids] if ids else [r for _, r in parsed[:1]]
    listed = channel or f"sender {sender} on {carrier_code}'s list"
    if not ours:
        if ids or require_authentication:
            return Trust(False, f"{listed}, but no Authentication-Results of the receiving MTA")
        return Trust(True, f"{listed} (no DKIM/SPF results to check)")
    sender_domain = _domain(sender)
    for results in ours:
        for result in results:
            passed = _passes(result, sender_domain)
            if passed:
                return Trust(True, f"{listed}, {passed}")
    seen = ", ".join(f"{r.method}={r.result}" for results in ours for r in results) or "none"
    return Trust(False, f"{listed}, but neither DKIM, SPF nor DMARC passed for {sender_domain} ({seen})")
