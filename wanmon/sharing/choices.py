"""Choices of the sharing app."""

from wanmon.core.choices import text_choices

ShareOrigin = text_choices("ShareOrigin", {
    "api": "Created by an operator",
    "email": "Created for the carrier's copy of an alert e-mail",
}, doc="Who made a share link.")

ShareFormat = text_choices("ShareFormat", {
    "html": "The page",
    "txt": "Plain text",
}, doc="The form an access asked for.")
