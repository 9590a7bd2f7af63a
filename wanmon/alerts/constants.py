"""Constants of the alerting pipeline: which findings are root causes, which are their symptoms."""

from wanmon.diagnosis import codes
from wanmon.diagnosis.constants import FINDING_REOPEN_WITHIN_S

# Element findings that can gather the path findings crossing the element, strongest first.
ROOT_CAUSE_CODES = (
    codes.SHARED_EQUIPMENT_SUSPECT,
    codes.INTERFACE_ERRORS,
    codes.LINK_CONGESTION,
    codes.TRUNK_IMBALANCE,
)

# Path findings that a bad element on the path can cause (and so are symptoms of it). Window limits,
# host-side periodic loss and clock problems are about the end hosts, not the elements in between.
SYMPTOM_CODES = frozenset(
    {
        codes.LOSS_LIMITED,
        codes.ASYMMETRIC_PATH,
        codes.TCP_ONLY_DEGRADATION,
        codes.PATH_DOWN,
        codes.UNEXPLAINED_DEGRADATION,
        codes.DELAY_LEVEL_SHIFT,
        codes.ROUTE_CHANGE,
        codes.MTU_MISMATCH,
        codes.REORDERING,
    }
)

# Site/host findings -> the path findings of the site's pairs they explain: host buffers cap the TCP window; a
# receiving host that drops packets periodically (monitoring reading /proc/net/tcp) makes the path lose periodically;
# an unsynchronised clock makes the one-way delays of every path of the site untrustworthy.
HOST_CAUSES = {
    codes.HOST_TCP_TUNING: codes.WINDOW_LIMITED,
    codes.PERIODIC_LOSS: codes.PERIODIC_LOSS,
    codes.CLOCK_UNSYNC: codes.CLOCK_UNSYNC,
}

# Findings that say nothing about throughput: an incident made of these only has paths "affected", not "degraded".
NOT_DEGRADING = frozenset(
    {codes.CLOCK_UNSYNC, codes.COUNTER_DISCONTINUITY, codes.ROUTE_CHANGE, codes.DELAY_LEVEL_SHIFT,
     codes.MAINTENANCE_EXPLAINED, codes.MEASUREMENT_GAP}
)

# How many carrier circuits an e-mail names for the suspect link (a port rarely ends more than one or two).
CIRCUITS_NAMED_MAX = 4

# How many paths listed in a subject line before "+N more".
TITLE_MAX_PATHS = 4
# An e-mail's subject line is cut to this (the sent-log keeps up to 300); not the incident's subject column below.
MAIL_SUBJECT_MAX_CHARS = 220

# Sending: retries of one Celery task (exponential backoff), then the beat's redispatch takes over
# until a notification has been tried this many times.
SEND_TASK_MAX_RETRIES = 6
#: The Celery name of the task that sends one notification: services enqueue it by name (the tasks import them).
SEND_TASK_NAME = "wanmon.alerts.tasks.alerts_send_notification_task"
SEND_MAX_ATTEMPTS = 12
SEND_BUSY_RETRY_S = 15

# pg_advisory lock key: one alerts_process at a time across all workers ("wanmon-alerts" as an int).
PROCESS_LOCK_KEY = 0x77616E6D6F6E_01

# Lengths of an incident's subject and title (the Incident model's columns): a finding's summary has no
# bound (a counter reset listed at every poll of a day), so a headline built from it is cut to fit.
SUBJECT_MAX_CHARS = 200
TITLE_MAX_CHARS = 500

# Flap damping of incidents that came back (policy.resolve_hold_s). An incident reopened because its findings returned
# after its resolution has shown that its evidence can vanish for a while: its next resolution waits
# REOPENED_RESOLVE_HOLD_S instead of ALERTS_RESOLVE_HOLD_S (never less), doubled at each further reopen, up to
# REOPENED_RESOLVE_HOLD_MAX_S. Each resolved notice may be followed by a "returned" one, so this bounds the pairs.
#: Half an hour: one throughput test at the usual 30-minute cadence must pass without the problem (on top of the
#: diagnosis's own 10 min, FINDING_CLOSE_ABSENT_S) before a problem that came back once is called resolved again.
REOPENED_RESOLVE_HOLD_S = 1800.0
#: The reopen window: findings absent for longer come back as a new problem (a new incident, a first notice), so a
#: longer hold would only delay a true "resolved". After two reopens the hold is this cap: at most two "returned"
#: e-mails per incident.
REOPENED_RESOLVE_HOLD_MAX_S = FINDING_REOPEN_WITHIN_S

# --- the incident page (wanmon/alerts/page.py) ---------------------------------------------------------------------

#: Actions listed first on the page; the rest are folded. Three is what one person starts with before the next look.
INCIDENT_FIRST_ACTIONS = 3
#: Site pairs charted on the page (both directions each: six path directions); the others are linked. Each pair is
#: a dozen queries of test results, fetched after the page: a site incident of twenty paths stays quick.
INCIDENT_CHART_MAX_PAIRS = 3
#: Charts and explorer links start this long before the onset: the healthy hours the change is seen against.
INCIDENT_VIEW_BEFORE_ONSET_S = 6 * 3600
#: ... and end this long after the latest evidence (or the resolution), never after now.
INCIDENT_VIEW_AFTER_END_S = 3600
#: Maintenance listed on the page: in force from the view's start until this long after now (as the e-mails look
#: ahead: work announced for tomorrow on the element is worth knowing about today).
INCIDENT_MAINTENANCE_AHEAD_S = 48 * 3600
