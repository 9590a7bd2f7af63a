"""The wanmon site agent: collects measurements at a site and pushes them to the centre.

Installed alone on site machines (``pip install 'wanmon[agent]'``): nothing in this package may
import Django, ``wanmon``, Celery or DRF (tests/test_import_boundary.py enforces it).

Modules: :mod:`agents.config` (TOML file), :mod:`agents.scheduler` (runs collectors),
:mod:`agents.clock` (the injectable time of the scheduler and upload loop), :mod:`agents.polls`
(when each collector ran), :mod:`agents.validation` (records checked before spooling),
:mod:`agents.spool` (durable on-disk queue), :mod:`agents.uploader` (HTTPS to
``POST /api/v1/ingest``), :mod:`agents.adapters` (configured tables -> collectors),
:mod:`agents.cli` (``wanmon-agent``). The systemd unit and a sample configuration are in
``deploy/agent/``.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("wanmon")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
