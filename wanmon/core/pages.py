"""What the apps' server-rendered pages share: an operator's posted form, acted on and answered with a message, and
the way back to the page it was posted from."""

from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.contrib import messages
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.http import HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme


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


def form_add_refusal(form: forms.Form, exc: ValidationError) -> None:
    """A service's refusal of a valid form's data shown on the form: on the fields the form has, the rest on the
    form as a whole, each naming what it is about (a service checks more than a form asks: the silence's
    ``matchers`` are the form's code, site, path and equipment; Django's ``add_error`` takes other names for a
    programming error, a 500)."""
    if not hasattr(exc, "error_dict"):
        form.add_error(None, exc)
        return
    for name, errors in exc.message_dict.items():
        if name in form.fields:
            form.add_error(name, errors)
        else:
            form.add_error(None, errors if name == NON_FIELD_ERRORS else [f"{name}: {error}" for error in errors])


def next_url(request, fallback: str) -> str:
    """The page a form asks to go back to (``next``, posted or in the query), when it is a path of this site;
    ``fallback`` otherwise. A path only: a bare word would be taken for a view name by ``redirect`` (a 500), and
    another host for an open redirect."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target.startswith("/") and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return target
    return fallback


def next_redirect(request, fallback: str) -> HttpResponseRedirect:
    """A redirect to ``next_url(request, fallback)``."""
    return HttpResponseRedirect(next_url(request, fallback))
