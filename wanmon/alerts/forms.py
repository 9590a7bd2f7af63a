"""Forms of the incident pages (operators acknowledge and silence)."""

from django import forms

from wanmon.alerts.choices import SilenceMatcher

DURATIONS = [(3600, "1 hour"), (4 * 3600, "4 hours"), (12 * 3600, "12 hours"), (24 * 3600, "1 day"),
             (3 * 24 * 3600, "3 days"), (7 * 24 * 3600, "7 days")]


class AcknowledgeForm(forms.Form):
    note = forms.CharField(required=False, max_length=2000, widget=forms.TextInput(attrs={"size": 60}))


class SilenceForm(forms.Form):
    """Matchers (at least one), how long, and why."""

    code = forms.CharField(required=False, max_length=40, label="code")
    site = forms.CharField(required=False, max_length=32, label="site")
    path = forms.CharField(required=False, max_length=80, label="path (SRC->DST or A<->B)")
    equipment = forms.CharField(required=False, max_length=100, label="equipment")
    duration_s = forms.TypedChoiceField(choices=DURATIONS, coerce=int, initial=4 * 3600, label="for")
    comment = forms.CharField(max_length=5000, widget=forms.TextInput(attrs={"size": 60}),
                              help_text="why: a ticket, the carrier's reference, ...")

    def matchers(self) -> dict[str, str]:
        return {name: self.cleaned_data[name] for name in SilenceMatcher.values if self.cleaned_data.get(name)}

    def service_arguments(self) -> dict:
        """What ``silences.silence_create`` takes from the form: matchers, comment, duration."""
        return {"matchers": self.matchers(), "comment": self.cleaned_data["comment"],
                "duration_s": self.cleaned_data["duration_s"]}

    def clean(self):
        cleaned = super().clean()
        if not any(cleaned.get(name) for name in SilenceMatcher.values):
            raise forms.ValidationError("give at least one of code, site, path, equipment")
        return cleaned
