"""No page makes the browser ask another host: every src, href, action, srcset and url() of every page's HTML is
this site's, and no Content-Security-Policy names another origin (NOC networks are often closed, and a third
party's script would run with the logged-in user's rights)."""

import re
from urllib.parse import urlsplit

import pytest

from tests.dashboard.conftest import ral_data as ral_data  # the replayed CERN <-> RAL scenario
from tests.fuzz.urlconf import page_sample, pages, scenario_samples

pytestmark = pytest.mark.django_db

# Attributes that make a browser fetch or navigate, and CSS url(...).
FETCHING = re.compile(r"""\b(?:src|href|action|poster|data|formaction)\s*=\s*["']([^"']*)["']""", re.IGNORECASE)
SRCSET = re.compile(r"""\bsrcset\s*=\s*["']([^"']*)["']""", re.IGNORECASE)
CSS_URL = re.compile(r"""url\(\s*["']?([^"')]+)""", re.IGNORECASE)
# Links people follow on purpose are no request the page makes: mailto:, and documentation the page cites.
ALLOWED_SCHEMES = {"", "mailto", "data"}


def _off_site(html: str) -> list[str]:
    urls = FETCHING.findall(html) + CSS_URL.findall(html)
    urls += [part.split()[0] for srcset in SRCSET.findall(html) for part in srcset.split(",") if part.strip()]
    off = []
    for url in urls:
        parts = urlsplit(url.strip())
        if parts.netloc or parts.scheme not in ALLOWED_SCHEMES:
            off.append(url)
    return off


@pytest.mark.usefixtures("ral_data")
def test_no_page_points_the_browser_at_another_host(admin_client):
    samples = scenario_samples()
    checked, offenders = [], []
    urls = [page.url(page_sample(page, samples)) for page in pages(admin=False)]
    urls += ["/admin/", "/api/docs/", "/api/v1/sites/", "/accounts/login/"]
    for url in urls:
        response = admin_client.get(url)
        policy = response.get("Content-Security-Policy", "")
        if re.search(r"https?:|//", policy):
            offenders.append(f"{url}: policy {policy}")
        if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
            continue
        checked.append(url)
        offenders += [f"{url}: {found}" for found in _off_site(response.content.decode())]
    assert len(checked) >= 25, checked
    assert offenders == []


def test_the_check_sees_an_off_site_asset():
    html = ('<script src="https://cdn.example/x.js"></script><link href="//fonts.example/f.css">'
            '<img srcset="/a.png 1x, https://img.example/b.png 2x"><div style="background: url(http://x.example/i)">'
            '<a href="/paths/">here</a><a href="mailto:noc@example.org">mail</a>')
    assert _off_site(html) == ["https://cdn.example/x.js", "//fonts.example/f.css", "http://x.example/i",
                               "https://img.example/b.png"]
