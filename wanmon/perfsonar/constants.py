"""Constants of the perfSONAR app."""

from typing import Final

RUN_NAMESPACE: Final = "6c1d1c0e-5f4b-4d0a-8f5e-7d1b2f6c9a10"
"""uuid5 namespace of the ingest batch id of a run: the same run id always gives the same batch id."""

AGENT_VERSION_PREFIX: Final = "pscheduler"
BATCH_SOURCE: Final = "perfsonar"

PSCONFIG_TOKEN_SALT: Final = "wanmon.perfsonar.psconfig"
ARCHIVE_TOKEN_SALT: Final = "wanmon.perfsonar.archive"
TOKEN_PREFIX_LEN: Final = 8
MAX_TOKEN_LEN: Final = 200

ARCHIVE_PATH: Final = "/api/v1/perfsonar/archive"
ARCHIVE_TTL: Final = "PT2H"
# pScheduler retries a failed archiving with these waits (pscheduler.RetryPolicy); with the 2 h TTL a centre
# outage of up to ~2 h loses nothing, and wanmon answers a retry of a stored run with "duplicate".
ARCHIVE_RETRY_POLICY: Final = (
    {"attempts": 2, "wait": "PT1M"},
    {"attempts": 3, "wait": "PT5M"},
    {"attempts": 6, "wait": "PT15M"},
)

# Tests of the generated templates and their schedules.
THROUGHPUT_DURATION: Final = "PT20S"
THROUGHPUT_REPEAT: Final = "PT6H"
TRACE_REPEAT: Final = "PT1H"
RTT_REPEAT: Final = "PT10M"
MAINTENANCE_LOOKAHEAD_S: Final = 15 * 60
"""A template leaves out the tests of a path under outage maintenance now or within this many seconds
(pSConfig agents fetch templates again periodically, so tests resume once the window is over)."""

ARCHIVE_AGENT_SUFFIX: Final = "-perfsonar"
