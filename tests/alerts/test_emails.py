"""Subject lines, times and actions of the alert e-mails (pure: no database, no SMTP)."""

from datetime import UTC, datetime, timedelta

from wanmon.alerts.emails import actions_merged, incident_subject, onset_text, when_text

PREFIX = "[wanmon CRITICAL] SHARED_EQUIPMENT_SUSPECT "


def subject(title: str) -> str:
    return incident_subject(severity="critical", code="SHARED_EQUIPMENT_SUSPECT", title=title, kind="firing")


def test_a_subject_line_of_up_to_220_characters_is_kept_whole():
    # the incident's subject column is 200 characters; the e-mail's subject line is not bound by it
    title = "geant-fra: " + "x" * (220 - len(PREFIX) - 11)
    assert subject(title) == PREFIX + title and len(subject(title)) == 220


def test_a_longer_subject_line_is_cut_at_220_characters_with_an_ellipsis():
    line = subject("geant-fra: " + "x" * 300)
    assert len(line) == 220 and line.endswith("x…") and line.startswith(PREFIX + "geant-fra: x")


NOW = datetime(2026, 11, 29, 1, 16, tzinfo=UTC)


def test_times_are_utc_with_the_date_only_on_another_day():
    assert when_text(NOW.replace(hour=0, minute=5), NOW) == "00:05 UTC"
    assert when_text(NOW - timedelta(hours=2), NOW) == "28 Nov 23:16 UTC"
    assert when_text(datetime(2025, 12, 31, 23, 0, tzinfo=UTC), NOW) == "31 Dec 2025 23:00 UTC"


def test_the_onset_says_since_when_and_for_how_long():
    onset = NOW - timedelta(hours=12, minutes=6)
    assert onset_text(onset=onset, now=NOW) == "since 28 Nov 13:10 UTC (12.1 h), ongoing as of 01:16 UTC"
    assert onset_text(onset=onset, now=NOW, resolved_at=NOW) == "28 Nov 13:10 UTC - 01:16 UTC (12.1 h)"
    assert onset_text(onset=None, now=NOW) == ""


def test_per_path_variants_of_one_advice_become_one_and_expired_maintenance_advice_is_dropped():
    actions = [
        "Ask the operator of geant-fra to check its ports on FZK->CERN.",
        "Ask the operator of geant-fra to check its ports on CNAF->CERN.",
        "None while SURF-CHG-0117 runs: its work explains the loss.",
        "Ask the operator of geant-fra to check its ports on FZK->CERN.",
        "Raise the TCP buffers of fzk-dt01.",
    ]
    assert actions_merged(actions, ended_references=["SURF-CHG-0117"]) == [
        "Ask the operator of geant-fra to check its ports on FZK->CERN. (also CNAF->CERN)",
        "Raise the TCP buffers of fzk-dt01.",
    ]
    assert len(actions_merged(actions)) == 3
