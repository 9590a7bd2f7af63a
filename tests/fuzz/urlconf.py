"""The URLconf's pages (everything outside /api/, whose operations the OpenAPI schema lists) with URLs to call.

``pages()`` lists every URL pattern with its parameters; ``Page.url(values)`` fills them, quoting each value
as one path segment (a hostile value stays in its segment); ``page_sample`` gives values that name objects of
the replayed dashboard scenario.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from django.urls import URLPattern, URLResolver, get_resolver

ROOT = Path(__file__).resolve().parents[2]
# Route <conv:name> and regex (?P<name>...) parameters.
_ROUTE_PARAM = re.compile(r"<(?:(\w+):)?(\w+)>")
_REGEX_PARAM = re.compile(r"\(\?P<(\w+)>(?:[^()]|\([^()]*\))*\)")


@dataclass(frozen=True)
class Page:
    """One URL pattern: its template (``paths/{src}/{dst}/``), its parameters (name -> converter) and name."""

    template: str
    params: dict[str, str]
    name: str | None

    def url(self, values: dict[str, str]) -> str:
        def fill(match):
            raw = str(values[match.group(1)])
            # path converters take several segments (xe-1/0/0): keep their slashes, quote the rest
            return quote(raw, safe="/" if self.params[match.group(1)] == "path" else "")

        return "/" + re.sub(r"\{(\w+)\}", fill, self.template)


def _template(prefix: str, pattern) -> tuple[str, dict[str, str]]:
    text = str(pattern)
    params: dict[str, str] = {}
    if text.startswith("^") or text.endswith("$"):  # a regex pattern
        def named(match):
            params[match.group(1)] = "str"
            return "{" + match.group(1) + "}"

        text = _REGEX_PARAM.sub(named, text.lstrip("^").rstrip("$")).replace("\\.", ".").replace("\\Z", "")
    else:
        def routed(match):
            params[match.group(2)] = match.group(1) or "str"
            return "{" + match.group(2) + "}"

        text = _ROUTE_PARAM.sub(routed, text)
    return prefix + text, params


def _walk(patterns, prefix: str = "", params: dict | None = None):
    for entry in patterns:
        template, own = _template(prefix, entry.pattern)
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, template, {**(params or {}), **own})
        elif isinstance(entry, URLPattern):
            yield Page(template=template, params={**(params or {}), **own}, name=entry.name)


def pages(*, admin: bool = True) -> list[Page]:
    """Every pattern outside /api/ (and /admin/ unless ``admin``), in URLconf order."""
    found = []
    for page in _walk(get_resolver().url_patterns):
        if page.template.startswith("api/") or (not admin and page.template.startswith("admin/")):
            continue
        found.append(page)
    return found


def parameter_names() -> list[str]:
    """The names pages read from a query string or a form: ``GET.get("...")`` and the like in wanmon/, and the
    fields of its Django forms."""
    names: set[str] = set()
    for path in ROOT.joinpath("wanmon").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        names |= set(re.findall(r"""(?:GET|POST|query_params|data)\.get(?:list)?\(\s*["'](\w+)["']""", text))
        names |= set(re.findall(r"""(?:GET|POST)\[\s*["'](\w+)["']\]""", text))
        if path.name == "forms.py":
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                    func = node.value.func
                    if isinstance(func, ast.Attribute) and func.attr.endswith("Field"):
                        names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return sorted(names)


def scenario_samples() -> dict[str, str]:
    """URL parameters naming objects of the replayed CERN <-> RAL scenario (tests/dashboard), by URL name and
    parameter, or by the URL name's app and parameter, or by parameter."""
    from wanmon.alerts.models import Incident, Silence
    from wanmon.diagnosis.models import Finding
    from wanmon.maintenance.models import CarrierNotice, MaintenanceWindow

    def first(model) -> str:
        return str(model.objects.order_by("pk").values_list("pk", flat=True).first() or 1)

    window, finding = first(MaintenanceWindow), first(Finding)
    return {"src": "CERN", "dst": "RAL", "name": "janet-lon", "interface": "xe-4/0/0", "code": "CERN",
            "dashboard-trunk.name": "ral-lag", "token": "no-such-token-0123456789",
            "maintenance.pk": window, "dashboard-finding.pk": finding, "dashboard-finding-acknowledge.pk": finding,
            "incident.pk": first(Incident), "silence.pk": first(Silence),
            "maintenance-carrier-notice-raw.pk": first(CarrierNotice),
            "maintenance-notification-raw.pk": first(CarrierNotice)}


def page_sample(page: Page, samples: dict[str, str]) -> dict[str, str]:
    """Values for ``page``'s parameters from ``samples`` (``1`` for an unknown number, ``x`` for a name)."""
    out = {}
    for param, conv in page.params.items():
        for key in (f"{page.name}.{param}", f"{(page.name or '').split('-')[0]}.{param}", param):
            if key in samples:
                out[param] = samples[key]
                break
        else:
            out[param] = "1" if conv == "int" else "x"
    return out
