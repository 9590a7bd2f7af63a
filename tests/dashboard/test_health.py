"""Grid cell colours follow the documented thresholds, with numbers."""

from datetime import UTC, datetime, timedelta

from wanmon.dashboard import constants as k
from wanmon.dashboard.health import PathObservation, path_health, worst

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def obs(**kwargs) -> PathObservation:
    values = {"src": "CERN", "dst": "FZK", "at": AT, "capacity_bps": 1e9, "latest_time": AT - timedelta(minutes=20)}
    values.update(kwargs)
    return PathObservation(**values)


def test_throughput_share_of_capacity_sets_the_level():
    assert path_health(obs(latest_bps=9.0e8, loss_fraction=0.0)).status == k.OK
    assert path_health(obs(latest_bps=4.99e8)).status == k.WARNING  # below 50 %
    assert path_health(obs(latest_bps=5.0e8)).status == k.OK
    assert path_health(obs(latest_bps=9.9e7)).status == k.CRITICAL  # below 10 %
    health = path_health(obs(latest_bps=3.62e7))
    assert health.status == k.CRITICAL
    assert "36.2 Mb/s = 4 % of 1 Gb/s" in health.reasons[0]


def test_probe_loss_thresholds():
    assert path_health(obs(latest_bps=9e8, loss_fraction=9e-5)).status == k.OK
    assert path_health(obs(latest_bps=9e8, loss_fraction=1e-4)).status == k.WARNING
    assert path_health(obs(latest_bps=9e8, loss_fraction=0.034)).status == k.CRITICAL


def test_findings_raise_the_level_and_info_does_not():
    assert path_health(obs(latest_bps=9e8, finding_severities=("info",))).status == k.OK
    health = path_health(obs(latest_bps=9e8, finding_severities=("warning", "critical")))
    assert health.status == k.CRITICAL
    assert health.reasons[0] == "2 open findings (worst: critical)"


def test_failed_test_is_critical():
    health = path_health(obs(latest_bps=None, latest_error="connection refused"))
    assert health.status == k.CRITICAL
    assert "last test failed: connection refused" in health.reasons


def test_maintenance_wins_and_keeps_the_reasons():
    health = path_health(obs(latest_bps=1e6, maintenance=("GEANT-CHG-0042",)))
    assert health.status == k.MAINTENANCE
    assert health.reasons[0] == "maintenance running: GEANT-CHG-0042"
    assert any("0.1 %" in r or "1 Mb/s" in r for r in health.reasons[1:])


def test_no_data_and_stale():
    assert path_health(obs(latest_time=None)).status == k.NODATA
    stale = path_health(obs(latest_bps=9e8, latest_time=AT - k.STALE_AFTER - timedelta(minutes=1)))
    assert stale.status == k.STALE
    # a critical finding is still shown on a stale cell
    assert path_health(obs(latest_time=AT - timedelta(days=1), finding_severities=("critical",))).status == k.CRITICAL


def test_unknown_capacity_uses_findings_and_loss_only():
    assert path_health(obs(capacity_bps=None, latest_bps=1e6)).status == k.OK
    assert path_health(obs(capacity_bps=None, latest_bps=1e6, loss_fraction=0.05)).status == k.CRITICAL


def test_colour_is_the_legend_colour():
    for status, (colour, _text) in k.STATUS_STYLE.items():
        assert path_health(obs(latest_time=None)).colour == k.STATUS_STYLE[k.NODATA][0]
        assert colour.startswith("#") and len(colour) == 7, status


def test_worst():
    assert worst([]) == k.OK
    assert worst(["info"]) == k.OK
    assert worst(["ok", "warning", "info"]) == k.WARNING
