"""Subject lines of the alert e-mails (pure: no database, no SMTP)."""

from wanmon.alerts.emails import incident_subject

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

