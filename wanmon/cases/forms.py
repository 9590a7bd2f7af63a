"""Forms of the incident page's case memory (operators resolve with a cause, add notes and hypotheses)."""

from django import forms

from wanmon.cases.constants import CAUSE_MAX_CHARS, CONFIRM_BY_MAX_CHARS, NOTE_MAX_CHARS, TICKET_MAX_CHARS


class ResolveForm(forms.Form):
    cause = forms.CharField(
        max_length=CAUSE_MAX_CHARS,
        widget=forms.TextInput(attrs={"size": 60}),
        help_text="what caused it: dirty patch at geant-gva",
    )
    fix = forms.CharField(
        max_length=CAUSE_MAX_CHARS,
        widget=forms.TextInput(attrs={"size": 60}),
        help_text="what fixed it: cleaned by GEANT",
    )
    ticket = forms.CharField(required=False, max_length=TICKET_MAX_CHARS)
    responsible = forms.CharField(
        required=False, max_length=200, help_text="site:CODE, carrier:CODE, equipment:NAME or host:NAME"
    )


class NoteForm(forms.Form):
    text = forms.CharField(max_length=NOTE_MAX_CHARS, widget=forms.Textarea(attrs={"rows": 2, "cols": 70}))
    is_hypothesis = forms.BooleanField(required=False, label="hypothesis")
    confirm_by = forms.CharField(
        required=False, max_length=CONFIRM_BY_MAX_CHARS, label="confirmed by (finding code or test)"
    )
