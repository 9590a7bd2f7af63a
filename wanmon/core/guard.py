"""The site's one guard against input no page or API can store or compute with: a clear 400 saying where and what.

- ``InputGuardMiddleware``: URL path segments, query-string parameters and HTML form fields: a NUL byte
  (PostgreSQL text cannot hold one: a DataError), and a date outside MIN_YEAR..MAX_YEAR (a range or a lead
  time computed from year 1 or 9999 overflows Python's datetime: an OverflowError).
- ``year_problem``: the same rule for a date or time a page has read itself (written in a form the middleware
  does not see as one, such as 99991231T235959-14:00; or a page called without the middleware).
- ``GuardedJSONParser`` (REST_FRAMEWORK's default parser): JSON nested deeper than MAX_JSON_DEPTH (the
  decoder recursed until a RecursionError), a number no database column holds (beyond a signed 64-bit
  integer, or not finite), NUL bytes and out-of-range dates anywhere in the body, each named by its place
  (``affects[0].label``).

The ingest endpoints decode their own bodies (msgspec) with their own per-record checks; the same rules
for text (``text_problem``) hold for everything else.
"""

from __future__ import annotations

import math
import re

from django.http import HttpResponse, JsonResponse
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser

# Years a time given to wanmon may have: measurements and maintenance are in this era, and the ranges and
# lead times computed from them stay far from Python's limits (years 1 and 9999).
MIN_YEAR = 1900
MAX_YEAR = 2999
# Deeper JSON is no request of this API (its deepest bodies, ingest records and matchers, are 4 levels).
MAX_JSON_DEPTH = 64
# PostgreSQL's bigint, the widest integer column: a number beyond it can be stored nowhere.
INT_MIN, INT_MAX = -(2**63), 2**63 - 1

# A value written as an ISO 8601 date or time (2026-03-01, 2026-03-01T12:00:00Z, +12026-01-01...), or a time in
# the basic format Python reads too (20260301T120000Z; a date alone, 20260301, is no different from a number):
# its year.
_DATE = re.compile(r"\s*(?:([+-]?\d{4,})-\d{1,2}-\d{1,2}(?:$|[T\s_]\d)|(\d{4})\d{4}T\d)")


def text_problem(value: str) -> str | None:
    """Why ``value`` (a path segment, a parameter, a text field) cannot be used, or None when it can."""
    if "\x00" in value:
        return "contains a NUL byte (\\x00), which no text can hold here"
    match = _DATE.match(value)
    if match:
        return year_problem(int(match.group(1) or match.group(2)))
    return None


def year_problem(year: int) -> str | None:
    """Why a date or time in ``year`` cannot be used, or None when it can."""
    if not MIN_YEAR <= year <= MAX_YEAR:
        return f"year {year} is outside the years wanmon accepts ({MIN_YEAR} to {MAX_YEAR})"
    return None


# What ends a line somewhere (CR, LF, VT, FF, the file/group/record separators, NEL, U+2028, U+2029) and the
# other control characters: none belongs in a one-line value (an e-mail header, a log line, a name).
_NOT_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str) -> str:
    """``text`` with every line break and control character made a space (runs of them one space), trimmed: what
    a reference becomes in an e-mail header, a file name or a log line."""
    return re.sub(r" {2,}", " ", _NOT_ONE_LINE.sub(" ", text)).strip()


def one_line_problem(text: str) -> str | None:
    """Why ``text`` is not a one-line value, or None."""
    match = _NOT_ONE_LINE.search(text)
    if match is None:
        return None
    return f"must be one line: holds {match.group()!r} at position {match.start()}"


def number_problem(value: int | float) -> str | None:
    """Why a JSON number cannot be used, or None when it can."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            return f"{str(value)[:30]} is beyond the largest number wanmon stores ({INT_MAX})"
        return None
    if not math.isfinite(value):
        return "a number too large to store (not finite)"
    return None


def _place(parent: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


def json_problems(data, *, max_depth: int = MAX_JSON_DEPTH, limit: int = 20) -> dict[str, list[str]]:
    """Problems of a decoded JSON document by place (``affects[0].label``; ``""`` for the document), at most
    ``limit``. Walked without recursion, so any depth is measured safely."""
    problems: dict[str, list[str]] = {}
    stack: list[tuple[str, object, int]] = [("", data, 1)]
    while stack and len(problems) < limit:
        place, value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > max_depth:
                problems.setdefault(place, []).append(f"nested deeper than {max_depth} levels")
                continue
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, child in items:
                if isinstance(key, str) and (problem := text_problem(key)):
                    problems.setdefault(_place(place, key), []).append(f"the name {problem}")
                stack.append((_place(place, key), child, depth + 1))
            continue
        problem = (text_problem(value) if isinstance(value, str)
                   else number_problem(value) if isinstance(value, int | float) else None)
        if problem:
            problems.setdefault(place, []).append(problem)
    return problems


class GuardedJSONParser(JSONParser):
    """DRF's JSON parser, answering 400 (naming the place) to what ``json_problems`` finds."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_JSON_DEPTH} levels") from None
        problems = json_problems(data)
        if problems:
            raise ValidationError({place or "non_field_errors": messages for place, messages in problems.items()})
        return data


def request_problems(request) -> dict[str, str]:
    """Problems of a request's path segments, query-string parameters and (HTML) form fields, by where."""
    problems: dict[str, str] = {}
    for index, segment in enumerate(request.path.split("/")):
        if problem := text_problem(segment):
            problems[f"path segment {index} ({segment[:40]!r})"] = problem
    sources = [("?", request.GET)]
    # HTML forms only: API bodies go through GuardedJSONParser, and reading a multipart API upload here would
    # consume the stream its view reads.
    if request.method == "POST" and not request.path.startswith("/api/") and request.content_type in (
            "application/x-www-form-urlencoded", "multipart/form-data"):
        sources.append(("", request.POST))
    for prefix, params in sources:
        for name, values in params.lists():
            if problem := text_problem(name):
                problems[f"{prefix}{name[:40]!r}"] = f"the parameter's name {problem}"
            for value in values:
                if problem := text_problem(value):
                    problems[f"{prefix}{name}"] = problem
    return problems


class InputGuardMiddleware:
    """400 for a request whose path, query string or form holds what ``request_problems`` finds, before any
    view or database sees it: JSON ``{name: [message]}`` under /api/ (as DRF's field errors), text elsewhere."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        problems = request_problems(request)
        if not problems:
            return self.get_response(request)
        if request.path.startswith("/api/"):
            return JsonResponse({where.lstrip("?"): [problem] for where, problem in problems.items()}, status=400)
        text = "\n".join(f"{where}: {problem}" for where, problem in problems.items())
        return HttpResponse(f"Bad request:\n{text}\n", status=400, content_type="text/plain; charset=utf-8")

