"""What the apps' server-rendered pages share: an operator's posted form, acted on and answered with a message."""

from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError


def form_errors_text(form: forms.Form) -> str:
    """Every error of a bound form, in one line for a message."""
    return "; ".join(e for errors in form.errors.values() for e in errors)


def form_act(request, form: forms.Form, act: Callable[[dict], str]) -> bool:
    """``act(form.cleaned_data)`` for a valid form, and the message it returns shown as done; otherwise the form's
    errors, or the service's refusal (ValidationError, or ValueError for a state that forbids it), shown as an error.
    True when it acted. Nothing posted goes unanswered: the page redirects, and the message says what happened."""
    if not form.is_valid():
        messages.error(request, form_errors_text(form))
        return False
    try:
        done = act(form.cleaned_data)
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
        return False
    except ValueError as exc:
        messages.error(request, str(exc))
        return False
    messages.success(request, done)
    return True
