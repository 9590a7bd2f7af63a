"""The case memory's tests use the alerting's real SMTP server (aiosmtpd) and its settings."""

from tests.alerts.conftest import smtp  # noqa: F401 - the fixture smtp
from tests.mail import smtp_server_fixture  # noqa: F401 - the fixture smtp_server
