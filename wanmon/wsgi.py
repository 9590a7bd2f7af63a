"""WSGI entry point (gunicorn wanmon.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wanmon.settings")
application = get_wsgi_application()
# Import every view now, when the worker starts, rather than in the first request it serves: an
# agent's first upload after a restart would otherwise wait the better part of a second.
get_resolver().check()  # walks (and so imports) every URL pattern
