"""Serve plotly.js from the installed Python ``plotly`` package as ``vendor/plotly/plotly.min.js``.

The browser never fetches it from a CDN (closed NOC networks) and the repository does not carry a
3.5 MB copy: this finder exposes the package's own file to ``{% static %}``, to WhiteNoise (which
serves finders' files in development and tests) and to ``collectstatic`` (production), so the
served version is always the one of the installed plotly package.
"""

from __future__ import annotations

from pathlib import Path

from django.contrib.staticfiles.finders import BaseFinder
from django.core.checks import Error
from django.core.files.storage import FileSystemStorage

PREFIX = "vendor/plotly"
FILENAME = "plotly.min.js"


def plotly_package_data_dir() -> Path:
    import plotly

    return Path(plotly.__file__).resolve().parent / "package_data"


class PlotlyPackageFinder(BaseFinder):
    """Finds ``vendor/plotly/plotly.min.js`` in the plotly package's ``package_data`` directory."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.directory = plotly_package_data_dir()
        self.storage = FileSystemStorage(location=str(self.directory))
        self.storage.prefix = PREFIX

    def check(self, **kwargs):
        if not (self.directory / FILENAME).is_file():
            return [Error(f"plotly.js not found at {self.directory / FILENAME}; is the plotly package installed?",
                          id="dashboard.E001")]
        return []

    def find(self, path, find_all=False, **kwargs):
        # Django 5.2 renamed ``all`` to ``find_all``; accept both.
        find_all = kwargs.get("all", find_all)
        if path == f"{PREFIX}/{FILENAME}" and (self.directory / FILENAME).is_file():
            match = str(self.directory / FILENAME)
            return [match] if find_all else match
        return [] if find_all else None

    def list(self, ignore_patterns):
        if (self.directory / FILENAME).is_file():
            yield FILENAME, self.storage
