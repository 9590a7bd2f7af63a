"""Forms of the maintenance pages: manual entry of a window, comments, uploads. Validation only; writes are services."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django import forms

from wanmon.inventory.models import Carrier, Site
from wanmon.maintenance.choices import Behaviour, Impact, Status
from wanmon.maintenance.services import AffectSpec

COMMON_ZONES = (
    "UTC", "Europe/Zurich", "Europe/Amsterdam", "Europe/Berlin", "Europe/London", "Europe/Paris", "Europe/Rome",
    "Europe/Madrid", "Europe/Stockholm", "America/New_York", "America/Chicago", "America/Toronto",
    "America/Vancouver", "Asia/Taipei",
)


def affects_parse(text: str) -> list[AffectSpec]:
    """One affected object per line: ``label`` or ``label = impact`` (blank lines and # comments ignored)."""
    specs = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        label, sep, impact = line.rpartition("=") if "=" in line else (line, "", "")
        specs.append(AffectSpec(label=label.strip(), impact=impact.strip().lower() if sep else ""))
    return specs


def affects_format(window) -> str:
    return "\n".join(f"{a.label} = {a.impact}" if a.impact else a.label for a in window.affects.all())


class WindowForm(forms.Form):
    """A window entered or changed by hand; times are read in the zone the work was announced in."""

    reference = forms.CharField(max_length=200, help_text="The carrier's maintenance id (or your own).")
    carrier = forms.ModelChoiceField(Carrier.objects.order_by("code"), required=False, to_field_name="code",
                                     empty_label="(none)")
    summary = forms.CharField(max_length=500, required=False)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)
    source_tz = forms.CharField(
        label="Time zone of the times below", initial="UTC", max_length=64,
        widget=forms.TextInput(attrs={"list": "zones"}),
    )
    start = forms.DateTimeField(widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"))
    end = forms.DateTimeField(widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"))
    status = forms.ChoiceField(choices=Status.choices, initial=Status.CONFIRMED)
    impact = forms.ChoiceField(choices=Impact.choices, initial=Impact.OUTAGE,
                               help_text="Unknown work counts as an outage.")
    behaviour = forms.ChoiceField(choices=Behaviour.choices, initial=Behaviour.MUTE)
    rrule = forms.CharField(label="Repeats (RRULE)", max_length=500, required=False,
                            help_text="Optional RFC 5545 rule applied to the UTC start, e.g. FREQ=WEEKLY;COUNT=4.")
    affects = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}), required=False,
        help_text="One per line: equipment, equipment:interface, a trunk, circuit:CID, site:CODE or path:SRC->DST; "
        "optionally '= impact' (e.g. 'geant-par:xe-1/0/0 = degraded').",
    )

    def clean_source_tz(self) -> str:
        name = self.cleaned_data["source_tz"].strip() or "UTC"
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            raise forms.ValidationError(f"unknown time zone {name!r} (an IANA name such as Europe/Zurich)") from None
        return name

    def clean(self):
        data = super().clean()
        if "source_tz" in data:
            # The widget gives wall-clock times; they are in the announced zone, whatever the user's zone is.
            for name in ("start", "end"):
                raw = self.data.get(name)
                if raw and name in data:
                    try:
                        naive = datetime.fromisoformat(raw)
                    except ValueError:
                        continue
                    data[name] = naive.replace(tzinfo=ZoneInfo(data["source_tz"])) if naive.tzinfo is None else naive
        if data.get("start") and data.get("end") and data["end"] <= data["start"]:
            self.add_error("end", "must be after start")
        data["affects_specs"] = affects_parse(data.get("affects") or "")
        return data

    def service_arguments(self) -> dict:
        d = self.cleaned_data
        return {
            "reference": d["reference"],
            "carrier": d["carrier"],
            "summary": d["summary"],
            "description": d["description"],
            "source_tz": d["source_tz"],
            "start": d["start"],
            "end": d["end"],
            "status": d["status"],
            "impact": d["impact"],
            "behaviour": d["behaviour"],
            "rrule": d["rrule"],
            "affects": d["affects_specs"],
        }


class CommentForm(forms.Form):
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), max_length=5000, label="Comment")


class UploadForm(forms.Form):
    file = forms.FileField(label="Carrier notice file (.ics or .eml)")
    carrier = forms.ModelChoiceField(Carrier.objects.order_by("code"), required=False, to_field_name="code",
                                     empty_label="(from the notice)")
    parser = forms.CharField(required=False, max_length=50,
                             help_text="'bcop' or a circuit-maintenance-parser provider such as 'zayo' (optional)")


class FeedTokenForm(forms.Form):
    name = forms.CharField(max_length=200, initial="my calendar")
    site = forms.ModelChoiceField(Site.objects.order_by("code"), required=False, to_field_name="code",
                                  empty_label="(any)")
    carrier = forms.ModelChoiceField(Carrier.objects.order_by("code"), required=False, to_field_name="code",
                                     empty_label="(any)")

    def clean(self):
        data = super().clean()
        if data.get("site") and data.get("carrier"):
            raise forms.ValidationError("limit a token to a site or to a carrier, not both")
        return data
