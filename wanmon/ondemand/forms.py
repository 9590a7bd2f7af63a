"""The "Test now" form of the finding, incident and path pages."""

from __future__ import annotations

from django import forms

from wanmon.ondemand.choices import JobKind, JobProtocol


class TestNowForm(forms.Form):
    """A test between the two sites of ``pair`` ('SRC->DST', one of the page's paths)."""

    __test__ = False  # not a pytest test class

    pair = forms.CharField(max_length=80, widget=forms.Select)
    kind = forms.ChoiceField(choices=JobKind.choices, initial=JobKind.THROUGHPUT)
    protocol = forms.ChoiceField(choices=JobProtocol.choices, initial=JobProtocol.TCP, required=False)
    duration_s = forms.FloatField(min_value=0.1, max_value=86400, required=False, initial=10, label="seconds")
    rate_mbps = forms.FloatField(min_value=0.001, max_value=1e7, required=False, label="rate Mb/s")
    streams = forms.IntegerField(min_value=1, max_value=128, required=False)
    reverse = forms.BooleanField(required=False, label="reverse (dst -> src)")
    finding = forms.IntegerField(required=False, widget=forms.HiddenInput, min_value=1)
    incident = forms.IntegerField(required=False, widget=forms.HiddenInput, min_value=1)
    next = forms.CharField(required=False, widget=forms.HiddenInput, max_length=2000)

    def __init__(self, *args, pairs: list[str] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["pair"].widget.choices = [(p, p) for p in pairs or []]

    def clean_pair(self) -> tuple[str, str]:
        src, sep, dst = self.cleaned_data["pair"].partition("->")
        if not sep or not src or not dst:
            raise forms.ValidationError("choose a path SRC->DST")
        return src, dst
