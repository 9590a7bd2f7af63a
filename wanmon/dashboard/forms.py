"""Forms of the dashboard: the data explorer, preferences and the acknowledge note."""

from __future__ import annotations

from zoneinfo import available_timezones

from django import forms

from wanmon.dashboard import constants as k
from wanmon.measurements.selectors import AGGREGATES, INTERFACE_METRICS, TEST_METRICS

BUCKETS = [("", "auto (from the range)"), ("1m", "1 min"), ("5m", "5 min"), ("1h", "1 hour"), ("1d", "1 day")]
GROUPS = [("", "default"), ("interface", "interface"), ("equipment", "equipment"), ("path", "path (src, dst)"),
          ("src", "source site"), ("dst", "destination site"), ("all", "all together")]
RANGE_CHOICES = [(key, key) for key in k.RANGES]
COMMON_ZONES = ("UTC", "Europe/Zurich", "Europe/Berlin", "Europe/Paris", "Europe/Rome", "Europe/London",
                "Europe/Amsterdam", "Europe/Madrid", "Europe/Stockholm", "America/Chicago", "America/New_York",
                "America/Vancouver", "Asia/Taipei")


class ExplorerForm(forms.Form):
    """The query API (GET /api/v1/query) as a form; field names are the API's parameter names."""

    metric = forms.ChoiceField(choices=[
        ("Interface counters", [(m, m) for m in INTERFACE_METRICS]),
        ("Tests", [(m, m) for m in TEST_METRICS]),
    ], initial="throughput_bps")
    range = forms.CharField(required=False, initial=k.DEFAULT_RANGE, max_length=12,
                            help_text="a span: 6h, 2d, 90min, 2w, 1y (or give start)",
                            widget=forms.TextInput(attrs={"size": 6, "list": "explore-ranges"}))
    start = forms.CharField(required=False, max_length=40, help_text="ISO time; empty: end minus the range",
                            widget=forms.TextInput(attrs={"placeholder": "end − range", "size": 20}))
    end = forms.CharField(required=False, max_length=40, help_text="ISO time; empty: now",
                          widget=forms.TextInput(attrs={"placeholder": "now", "size": 20}))
    bucket = forms.ChoiceField(choices=BUCKETS, required=False)
    # Optional: a link that names only a metric and a range (from an incident, an e-mail) shows the average.
    aggregate = forms.ChoiceField(choices=[(a, a) for a in sorted(AGGREGATES)], initial="avg", required=False)
    group_by = forms.ChoiceField(choices=GROUPS, required=False)
    site = forms.CharField(required=False, widget=forms.TextInput(attrs={"size": 8}))
    src = forms.CharField(required=False, widget=forms.TextInput(attrs={"size": 8}))
    dst = forms.CharField(required=False, widget=forms.TextInput(attrs={"size": 8}))
    carrier = forms.CharField(required=False, widget=forms.TextInput(attrs={"size": 8}))
    equipment = forms.CharField(required=False, widget=forms.TextInput(attrs={"size": 12}))
    interface = forms.CharField(required=False, help_text="equipment:interface or a name",
                                widget=forms.TextInput(attrs={"size": 14}))
    protocol = forms.ChoiceField(choices=[("", "any"), ("tcp", "tcp"), ("udp", "udp")], required=False)

    FILTERS = ("site", "src", "dst", "carrier", "equipment", "interface", "protocol")

    def clean_aggregate(self) -> str:
        return self.cleaned_data.get("aggregate") or "avg"

    def bucket_seconds(self) -> int | None:
        value = self.cleaned_data.get("bucket") or ""
        if not value:
            return None
        units = {"m": 60, "h": 3600, "d": 86400}
        return int(value[:-1]) * units[value[-1]]


class PreferenceForm(forms.Form):
    time_zone = forms.ChoiceField(label="Show times in")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        others = sorted(z for z in available_timezones() if z not in COMMON_ZONES and "/" in z)
        self.fields["time_zone"].choices = [
            ("Common", [(z, z) for z in COMMON_ZONES]),
            ("All zones", [(z, z) for z in others]),
        ]


class AcknowledgeForm(forms.Form):
    note = forms.CharField(required=False, max_length=2000,
                           widget=forms.TextInput(attrs={"placeholder": "note (optional): who looks at it, ticket",
                                                         "size": 40}))
