"""Every asset is served by the app itself: plotly.js from the installed plotly package, nothing from a CDN."""

import re
from pathlib import Path

from django.contrib.staticfiles import finders

from wanmon.dashboard.staticfinders import PlotlyPackageFinder, plotly_package_data_dir

ROOT = Path(__file__).resolve().parents[2]


def test_plotly_js_is_found_in_the_python_package():
    found = finders.find("vendor/plotly/plotly.min.js")
    assert found == str(plotly_package_data_dir() / "plotly.min.js")
    assert Path(found).read_text(encoding="utf-8", errors="replace")[:200].find("plotly.js v") > 0
    finder = PlotlyPackageFinder()
    assert finder.check() == []
    assert [(path, storage.prefix) for path, storage in finder.list(None)] == [("plotly.min.js", "vendor/plotly")]
    assert finder.find("vendor/plotly/other.js") is None
    assert finder.find("vendor/plotly/plotly.min.js", find_all=True) == [found]


def test_pages_reference_no_external_asset():
    """Templates, scripts and styles load nothing from another host (no CDN, no web font)."""
    external = re.compile(r"""(?:src|href|url)\s*[=(]\s*["']?(?:https?:)?//""", re.IGNORECASE)
    pages = [f for f in ROOT.joinpath("templates").rglob("*.html") if "email" not in f.relative_to(ROOT).parts]
    files = [*pages, *ROOT.joinpath("static", "js").rglob("*.js"), *ROOT.joinpath("static", "css").rglob("*.css")]
    assert files
    offenders = [str(f.relative_to(ROOT)) for f in files if external.search(f.read_text(encoding="utf-8"))]
    assert offenders == []
