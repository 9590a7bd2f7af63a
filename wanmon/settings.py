"""Django settings for wanmon, read from the environment (README.md, Configuration).

Every service is found through an environment variable with a local default
that matches the embedded stack started by ``scripts/demo`` under ``var/``.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    """Read a boolean flag: 1/true/yes/on (any case) are true."""
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


def cache_key_prefix(database: dict) -> str:
    """The prefix of every cache key of the deployment whose database is ``database`` (a DATABASES entry).

    Cache entries are facts about one database (a path's baseline is keyed by its id, a rate limit by a user's
    id): two databases on one Redis (staging beside production, a replay database beside the live one) must not
    read each other's. WANMON_CACHE_PREFIX names the deployment explicitly (e.g. when its database moves)."""
    explicit = os.environ.get("WANMON_CACHE_PREFIX", "").strip()
    if explicit:
        return explicit
    return f"wanmon@{database.get('HOST') or ''}:{database.get('PORT') or ''}/{database.get('NAME') or ''}"


# The local defaults point at the private services of scripts/demo (see scripts/lib.sh).
DEFAULT_DATABASE_URL = f"postgres://postgres@127.0.0.1:{env_int('WANMON_PG_PORT', 54329)}/wanmon"
DEFAULT_REDIS_URL = f"redis://127.0.0.1:{env_int('WANMON_REDIS_PORT', 63799)}/0"

DEBUG = env_bool("WANMON_DEBUG", False)
# WANMON_DEMO=1: the local embedded stack of scripts/demo, scripts/test, scripts/manage and scripts/bench
# (exported by scripts/lib.sh). Only there, or with DEBUG, may the published development key stand in for
# WANMON_SECRET_KEY: anyone knowing the key can forge sessions and signed tokens. Production (docker-compose,
# which passes an empty value when .env lacks it) refuses to start without a key of its own.
WANMON_DEMO = env_bool("WANMON_DEMO", False)
DEVELOPMENT_SECRET_KEY = "wanmon-insecure-local-development-key-change-me"
SECRET_KEY = os.environ.get("WANMON_SECRET_KEY", "").strip()
# deploy/env.example's placeholder (CHANGE-ME) and short keys are as good as published ones.
if not (DEBUG or WANMON_DEMO) and (
    SECRET_KEY == DEVELOPMENT_SECRET_KEY or SECRET_KEY.upper().startswith("CHANGE") or len(SECRET_KEY) < 32
):
    raise ImproperlyConfigured(
        "WANMON_SECRET_KEY is not set, empty, shorter than 32 characters, deploy/env.example's placeholder or the "
        "published development key: set it to a long random value "
        "(python3 -c 'import secrets; print(secrets.token_urlsafe(50))'); only WANMON_DEBUG=1 or the local demo "
        "stack (WANMON_DEMO=1) run without one"
    )
SECRET_KEY = SECRET_KEY or DEVELOPMENT_SECRET_KEY
ALLOWED_HOSTS = [
    h.strip() for h in os.environ.get("WANMON_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h.strip()
]
CSRF_TRUSTED_ORIGINS = [
    o.strip() for o in os.environ.get("WANMON_CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
]
WANMON_BASE_URL = os.environ.get("WANMON_BASE_URL", "http://127.0.0.1:8000").rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "axes",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    # Swagger UI's files for /api/docs/ from the installed package, served by the app (no CDN).
    "drf_spectacular_sidecar",
    "wanmon.core.apps.CoreConfig",
    "wanmon.inventory.apps.InventoryConfig",
    "wanmon.measurements.apps.MeasurementsConfig",
    "wanmon.maintenance.apps.MaintenanceConfig",
    "wanmon.diagnosis.apps.DiagnosisConfig",
    "wanmon.dashboard.apps.DashboardConfig",
    "wanmon.alerts.apps.AlertsConfig",
    "wanmon.ondemand.apps.OndemandConfig",
    "wanmon.sharing.apps.SharingConfig",
    "wanmon.cases.apps.CasesConfig",
    "wanmon.perfsonar.apps.PerfsonarConfig",
    "wanmon.demo.apps.DemoConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "wanmon.core.middleware.ContentSecurityPolicyMiddleware",
    # Before sessions and views: a NUL byte or an impossible date in the URL or a form is a 400 (wanmon/core/guard.py).
    "wanmon.core.guard.InputGuardMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # After authentication: shows times in the user's time zone (UTC unless chosen).
    "wanmon.dashboard.middleware.UserTimeZoneMiddleware",
    # GET/HEAD pages and APIs read from the replica when DATABASE_REPLICA_URL is set (wanmon/core/dbrouter.py).
    "wanmon.core.dbrouter.ReplicaReadsMiddleware",
    # Per-statement limit of reads, on the primary and the replica alike (wanmon/core/middleware.py).
    "wanmon.core.middleware.StatementTimeoutMiddleware",
    # Last, as django-axes requires: turns a lockout into its 429 answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "wanmon.urls"
WSGI_APPLICATION = "wanmon.wsgi.application"
ASGI_APPLICATION = "wanmon.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "wanmon.dashboard.context_processors.navigation",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", DEFAULT_DATABASE_URL),
        conn_max_age=env_int("WANMON_DB_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
# A PostgreSQL streaming replica for the read side (dashboard pages, query API): wanmon/core/dbrouter.py.
if os.environ.get("DATABASE_REPLICA_URL"):
    DATABASES["replica"] = dj_database_url.parse(
        os.environ["DATABASE_REPLICA_URL"], conn_max_age=env_int("WANMON_DB_CONN_MAX_AGE", 60), conn_health_checks=True
    )
DATABASE_ROUTERS = ["wanmon.core.dbrouter.ReplicaRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", DEFAULT_REDIS_URL)
# Socket timeouts on every Redis client (cache, broker, results): a Redis that is blackholed (no RST, no answer)
# must cost an ingest thread seconds, not hang it; ingest works without Redis (the rate limit counts in the process,
# wanmon/core/throttling.py, and the catch-up computes the rates of what could not be queued).
REDIS_CONNECT_TIMEOUT_S = float(os.environ.get("WANMON_REDIS_CONNECT_TIMEOUT_S", "2"))
REDIS_SOCKET_TIMEOUT_S = float(os.environ.get("WANMON_REDIS_SOCKET_TIMEOUT_S", "5"))
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": cache_key_prefix(DATABASES["default"]),
        "OPTIONS": {"socket_connect_timeout": REDIS_CONNECT_TIMEOUT_S, "socket_timeout": REDIS_SOCKET_TIMEOUT_S},
    }
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Password guessing (wanmon/core/auth.py): django-axes counts failed logins on the login page, the admin and API
# Basic auth, per account and per client address, and past the limit on either refuses before any password hash.
AUTHENTICATION_BACKENDS = ["wanmon.core.auth.LockoutBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_ENABLED = env_bool("WANMON_LOGIN_LOCKOUT", True)
AXES_FAILURE_LIMIT = env_int("WANMON_LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("WANMON_LOGIN_COOLOFF_MIN", 15))
# Two separate counts, either of which locks: the account's failures from anywhere (guessing one password from many
# addresses) and the address's failures on any account (one guesser trying many accounts).
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
# A successful login forgets only that account's own failures from that address (wanmon.core.auth.LockoutHandler):
# axes' own reset would also forget every other account's failures from the address, and logging in to one's own
# account between guesses at a colleague's password would never lock.
AXES_RESET_ON_SUCCESS = True
AXES_HANDLER = "wanmon.core.auth.LockoutHandler"
AXES_LOCKOUT_CALLABLE = "wanmon.core.auth.lockout_response"
AXES_CLIENT_IP_CALLABLE = "wanmon.core.auth.client_ip"
AXES_VERBOSE = False

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("WANMON_STATIC_ROOT", BASE_DIR / "var" / "staticfiles"))
# Every asset is served by the app itself (closed NOC networks): WhiteNoise serves static/
# directly in tests and development, and the collected, compressed files in production.
WHITENOISE_USE_FINDERS = True
# plotly.js is served from the installed Python plotly package (no CDN, no copy in the repository).
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "wanmon.dashboard.staticfinders.PlotlyPackageFinder",
]
# Collected files (collectstatic: production, the image, scripts/demo) get content-hashed names, gzip copies and a
# year's cache (plotly.js: 4.8 MB, 1.47 MB gzipped, fetched once a version). Without a collected manifest (tests,
# a checkout that never ran collectstatic) the names stay plain and WhiteNoise serves the finders' files, cached
# 60 s. WANMON_STATIC_MANIFEST=true/false forces the choice (true for collectstatic itself: the image, the demo).
_STATIC_MANIFEST = os.environ.get("WANMON_STATIC_MANIFEST", "").strip().lower()
STATIC_MANIFEST = (STATIC_ROOT / "staticfiles.json").is_file() if _STATIC_MANIFEST in ("", "auto") else (
    _STATIC_MANIFEST in ("1", "true", "yes", "on"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage" if STATIC_MANIFEST
                    else "whitenoise.storage.CompressedStaticFilesStorage"},
}

# --- e-mail (alerts, maintenance notices) ---
EMAIL_BACKEND = os.environ.get("WANMON_EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
# With WANMON_EMAIL_BACKEND=django.core.mail.backends.filebased.EmailBackend (the demo's default when no
# EMAIL_HOST is given) every message is written under this directory instead of being sent.
EMAIL_FILE_PATH = os.environ.get("WANMON_EMAIL_FILE_PATH", str(BASE_DIR / "var" / "mail"))
EMAIL_HOST = os.environ.get("EMAIL_HOST", "127.0.0.1")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 20)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "wanmon@localhost")

# --- REST API ---
# The API authenticates the browser session and personal tokens (`Authorization: Token <key>`, created with
# `manage.py drf_create_token USER`, stored as a hash, valid WANMON_API_TOKEN_DAYS days); HTTP Basic sends a password
# with every request and costs a PBKDF2 hash each time, so it is off unless WANMON_API_BASIC_AUTH is set. Agents use
# their own bearer tokens (ingest).
WANMON_API_BASIC_AUTH = env_bool("WANMON_API_BASIC_AUTH", False)
WANMON_API_TOKEN_DAYS = env_int("WANMON_API_TOKEN_DAYS", 90)
# Requests per logged-in user (or token) and per anonymous address; 429 with Retry-After beyond.
WANMON_API_USER_RATE = os.environ.get("WANMON_API_USER_RATE", "1200/min")
WANMON_API_ANON_RATE = os.environ.get("WANMON_API_ANON_RATE", "120/min")
# ?limit= above this is cut to it; a value that is no page at all (negative, huge, not a number) is a 400.
WANMON_API_MAX_LIMIT = env_int("WANMON_API_MAX_LIMIT", 1000)
# Per statement limit of a read request's database queries (wanmon/core/middleware.py); 0 turns it off.
WANMON_WEB_STATEMENT_TIMEOUT_MS = env_int("WANMON_WEB_STATEMENT_TIMEOUT_MS", 30_000)
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "wanmon.core.auth.ApiTokenAuthentication",
        "wanmon.core.auth.OptionalBasicAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_THROTTLE_CLASSES": ["wanmon.core.throttling.UserRateThrottle", "wanmon.core.throttling.AnonRateThrottle"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    # JSON bodies: too deep, numbers no column holds, NUL bytes and impossible dates are a 400 naming the place.
    "DEFAULT_PARSER_CLASSES": [
        "wanmon.core.guard.GuardedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "wanmon.core.pagination.CappedLimitOffsetPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "wanmon API",
    "DESCRIPTION": "Multi-site WAN monitoring: inventory, agent ingest, measurements, findings.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Contact fields are left out for viewers (wanmon.core.api.ContactFieldsMixin): not required in the schema.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "wanmon.core.schema.contact_fields_optional",
    ],
    # /api/docs/ loads Swagger UI from our static files (drf-spectacular-sidecar), never from a CDN: third-party
    # code would run with the logged-in user's rights, and closed NOC networks would see a blank page.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # No validator badge: Swagger UI would send the schema's URL to validator.swagger.io.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    # Several models have a `role` with different choices: name each enum after its choice set.
    "ENUM_NAME_OVERRIDES": {
        "ContactRoleEnum": "wanmon.inventory.choices.ContactRole",
        "HostRoleEnum": "wanmon.inventory.choices.HostRole",
        "EquipmentRoleEnum": "wanmon.inventory.choices.EquipmentRole",
        # Tests on demand: their kind and status are choice sets of their own.
        "JobKindEnum": "wanmon.ondemand.choices.JobKind",
        "JobStatusEnum": "wanmon.ondemand.choices.JobStatus",
        "JobProtocolEnum": "wanmon.ondemand.choices.JobProtocol",
    },
}

# Path directions per shard of the periodic diagnosis (wanmon/diagnosis/shards.py).
DIAGNOSIS_SHARD_PATHS = env_int("WANMON_DIAGNOSIS_SHARD_PATHS", 200)

# --- alerts (wanmon/alerts/conf.py documents each): Alertmanager-like timers in seconds ---
ALERTS_PROCESS_INTERVAL_S = env_int("ALERTS_PROCESS_INTERVAL_S", 15)
ALERTS_GROUP_WAIT_S = env_int("ALERTS_GROUP_WAIT_S", 30)
ALERTS_GROUP_INTERVAL_S = env_int("ALERTS_GROUP_INTERVAL_S", 300)
ALERTS_REPEAT_INTERVAL_S = env_int("ALERTS_REPEAT_INTERVAL_S", 4 * 3600)
ALERTS_RESOLVE_HOLD_S = env_int("ALERTS_RESOLVE_HOLD_S", 180)
ALERTS_SITE_INCIDENT_MIN_PATHS = env_int("ALERTS_SITE_INCIDENT_MIN_PATHS", 3)
ALERTS_MIN_SEVERITY = os.environ.get("ALERTS_MIN_SEVERITY", "warning")
ALERTS_SEND_RESOLVED = env_bool("ALERTS_SEND_RESOLVED", True)
ALERTS_SEND_RESOLVED_WHEN_MUTED = env_bool("ALERTS_SEND_RESOLVED_WHEN_MUTED", True)
ALERTS_DEFAULT_RECIPIENTS = [a.strip() for a in os.environ.get("ALERTS_DEFAULT_RECIPIENTS", "").split(",") if a.strip()]
ALERTS_SILENCE_MAX_DURATION_S = env_int("ALERTS_SILENCE_MAX_DURATION_S", 7 * 24 * 3600)
ALERTS_SILENCE_REMINDER_S = env_int("ALERTS_SILENCE_REMINDER_S", 3600)
ALERTS_REDISPATCH_AFTER_S = env_int("ALERTS_REDISPATCH_AFTER_S", 120)
ALERTS_CELERY_QUEUE = os.environ.get("ALERTS_CELERY_QUEUE") or None  # a dedicated e-mail worker queue, optional
# The link to the evidence in a carrier's copy of an alert e-mail opens this many days (docs/sharing.md; 1 to 90).
SHARING_EMAIL_LINK_DAYS = min(max(env_int("SHARING_EMAIL_LINK_DAYS", 14), 1), 90)

# --- Celery: Redis broker, one beat schedule (later apps add their periodic tasks here) ---
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", REDIS_URL)
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", REDIS_URL)
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_RESULT_EXPIRES = 3600
# A task not acknowledged within the visibility timeout is delivered again (acks_late): every task must end
# (hard time limit) well before it, or a long task would run twice at once. Both explicit, the limit below.
CELERY_VISIBILITY_TIMEOUT_S = env_int("WANMON_CELERY_VISIBILITY_TIMEOUT_S", 3600)
CELERY_TASK_TIME_LIMIT = env_int("WANMON_CELERY_TASK_TIME_LIMIT_S", 1800)
CELERY_TASK_SOFT_TIME_LIMIT = CELERY_TASK_TIME_LIMIT - 60
_REDIS_TRANSPORT_OPTIONS = {
    "socket_connect_timeout": REDIS_CONNECT_TIMEOUT_S,
    "socket_timeout": REDIS_SOCKET_TIMEOUT_S,
}
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_VISIBILITY_TIMEOUT_S, **_REDIS_TRANSPORT_OPTIONS}
CELERY_BROKER_CONNECTION_TIMEOUT = REDIS_CONNECT_TIMEOUT_S
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = REDIS_CONNECT_TIMEOUT_S
CELERY_REDIS_SOCKET_TIMEOUT = REDIS_SOCKET_TIMEOUT_S
CELERY_BEAT_SCHEDULE: dict[str, dict] = {
    "core-heartbeat": {"task": "wanmon.core.tasks.heartbeat_task", "schedule": 60.0},
    "diagnosis-run": {"task": "wanmon.diagnosis.tasks.diagnosis_run_task", "schedule": 60.0},
    "diagnosis-cycles-prune": {"task": "wanmon.diagnosis.tasks.diagnosis_cycles_prune_task", "schedule": 3600.0},
    "alerts-process": {
        "task": "wanmon.alerts.tasks.alerts_process_task",
        "schedule": float(ALERTS_PROCESS_INTERVAL_S),
        "options": {"expires": float(ALERTS_PROCESS_INTERVAL_S)},
    },
    # A crontab, not a 24 h interval: an interval counts from beat's start and never fires when beat restarts daily.
    "measurements-retention": {
        "task": "wanmon.measurements.tasks.retention_apply_task",
        "schedule": crontab(minute=17, hour=env_int("WANMON_RETENTION_HOUR_UTC", 3)),
    },
    # Work lost in the broker (a Redis restart, Redis down at ingest, retries exhausted) is redone from watermarks.
    "measurements-catch-up": {
        "task": "wanmon.measurements.tasks.measurements_catch_up_task",
        "schedule": float(env_int("WANMON_CATCHUP_INTERVAL_S", 60)),
        "options": {"expires": float(env_int("WANMON_CATCHUP_INTERVAL_S", 60))},
    },
    "maintenance-notices": {"task": "wanmon.maintenance.tasks.maintenance_notices_task", "schedule": 60.0},
    "maintenance-sources-poll": {"task": "wanmon.maintenance.tasks.maintenance_sources_poll_task", "schedule": 3600.0},
    "ondemand-jobs-expire": {
        "task": "wanmon.ondemand.tasks.ondemand_jobs_expire_task",
        "schedule": 15.0,
        "options": {"expires": 15.0},
    },
}

# --- tests on demand (docs/ondemand.md): caps of one test, the hourly budget of test bytes per site pair (both
# directions), and how long a job may wait for its agent (fetched within PICKUP_TIMEOUT_S, its result stored within
# its duration + REPORT_MARGIN_S) before it fails with the reason ---
WANMON_ONDEMAND_MAX_DURATION_S = float(os.environ.get("WANMON_ONDEMAND_MAX_DURATION_S", "30"))
WANMON_ONDEMAND_MAX_RATE_BPS = float(os.environ.get("WANMON_ONDEMAND_MAX_RATE_BPS", "2e9"))
WANMON_ONDEMAND_BUDGET_BYTES_PER_HOUR = env_int("WANMON_ONDEMAND_BUDGET_BYTES_PER_HOUR", 50 * 10**9)
WANMON_ONDEMAND_PICKUP_TIMEOUT_S = float(os.environ.get("WANMON_ONDEMAND_PICKUP_TIMEOUT_S", "120"))
WANMON_ONDEMAND_REPORT_MARGIN_S = float(os.environ.get("WANMON_ONDEMAND_REPORT_MARGIN_S", "120"))
# Diagnosis-driven tests (docs/diagnosis.md#diagnosis-driven-tests): the beat's cycle asks for the test that separates
# a finding's two explanations, within the policy above, from sites whose agent asks for jobs. Replays never do.
WANMON_DIAGNOSIS_TESTS = env_bool("WANMON_DIAGNOSIS_TESTS", True)
# How long a diagnosis-driven throughput test runs; a test that failed or was refused is asked for again this long
# after (not every minute); only sites whose agent asked for jobs this recently are asked (an idle agent asks every
# 20 s at most).
WANMON_DIAGNOSIS_TESTS_DURATION_S = float(os.environ.get("WANMON_DIAGNOSIS_TESTS_DURATION_S", "10"))
WANMON_DIAGNOSIS_TESTS_RETRY_S = float(os.environ.get("WANMON_DIAGNOSIS_TESTS_RETRY_S", "1800"))
WANMON_DIAGNOSIS_TESTS_AGENT_SEEN_S = float(os.environ.get("WANMON_DIAGNOSIS_TESTS_AGENT_SEEN_S", "300"))

# --- measurements ---
# Hot-path limits: a whole batch is decoded in memory, so both the body (after gzip decompression too: no zip bombs)
# and the record count are bounded.
WANMON_INGEST_MAX_BODY_BYTES = env_int("WANMON_INGEST_MAX_BODY_BYTES", 32 * 1024 * 1024)
WANMON_INGEST_MAX_RECORDS = env_int("WANMON_INGEST_MAX_RECORDS", 20_000)
WANMON_INGEST_RATE_LIMIT = os.environ.get("WANMON_INGEST_RATE_LIMIT") or "600/min"
WANMON_INGEST_STREAM_CHUNK_RECORDS = env_int("WANMON_INGEST_STREAM_CHUNK_RECORDS", 1_000)
# An agent's SNMP sample this much older than the newest one stored for its interface is refused: rates and
# rollups are recomputed from the earliest new sample on, so a clock booted at 2000-01-01 must not get there.
WANMON_INGEST_MAX_SAMPLE_LAG_S = env_int("WANMON_INGEST_MAX_SAMPLE_LAG_S", 2 * 86400)
# SNMP samples register unknown interfaces of known equipment; beyond this many per device the upload is refused.
WANMON_INGEST_MAX_INTERFACES_PER_DEVICE = env_int("WANMON_INGEST_MAX_INTERFACES_PER_DEVICE", 10_000)
# The query API answers at most this many series and points (all series together) per request.
WANMON_QUERY_MAX_SERIES = env_int("WANMON_QUERY_MAX_SERIES", 1000)
WANMON_QUERY_MAX_POINTS = env_int("WANMON_QUERY_MAX_POINTS", 200_000)
# The catch-up looks for samples newer than their interface's watermark this far back.
WANMON_CATCHUP_LOOKBACK_S = env_int("WANMON_CATCHUP_LOOKBACK_S", 3 * 86400)
# ... on interfaces whose watermark has not moved for this long (a newer sample is most likely still queued).
WANMON_CATCHUP_GRACE_S = env_int("WANMON_CATCHUP_GRACE_S", 120)
# Days to keep per hypertable, e.g. {"measurements_snmpsample": 14}; see wanmon/measurements/constants.py.
WANMON_RETENTION_DAYS: dict[str, int | None] = {}

# --- maintenance: notices to site contacts, mailbox imports through the API ---
WANMON_MAINTENANCE_NOTICE_LEAD_HOURS = float(os.environ.get("WANMON_MAINTENANCE_NOTICE_LEAD_HOURS", "48"))
# Contacts of a touched site get notices in the first of these roles the site has.
WANMON_MAINTENANCE_NOTICE_ROLES = [
    r.strip() for r in os.environ.get("WANMON_MAINTENANCE_NOTICE_ROLES", "maintenance,noc").split(",") if r.strip()
]
# Directories (os.pathsep-separated) under which the API may import a Maildir; the command may read any.
WANMON_MAINTENANCE_MAILDIRS = [p for p in os.environ.get("WANMON_MAINTENANCE_MAILDIRS", "").split(os.pathsep) if p]
# Who may announce maintenance (wanmon/maintenance/trust.py): the authserv-ids (comma-separated) of the receiving
# MTA whose Authentication-Results count (empty: the topmost header), and whether an e-mail without them is held.
WANMON_MAINTENANCE_AUTHSERV_IDS = [
    i.strip() for i in os.environ.get("WANMON_MAINTENANCE_AUTHSERV_IDS", "").split(",") if i.strip()
]
WANMON_MAINTENANCE_REQUIRE_EMAIL_AUTH = env_bool("WANMON_MAINTENANCE_REQUIRE_EMAIL_AUTH", False)
# Networks (comma-separated CIDRs) a carrier calendar URL may reach although they are not public, e.g. a portal
# over a private link; others are refused after DNS resolution (wanmon/maintenance/fetch.py).
WANMON_FETCH_ALLOW_NETS = [n.strip() for n in os.environ.get("WANMON_FETCH_ALLOW_NETS", "").split(",") if n.strip()]

# --- logging: one JSON object per line on stdout ---
LOG_LEVEL = os.environ.get("WANMON_LOG_LEVEL", "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
            "datefmt": "%Y-%m-%dT%H:%M:%S%z",
        },
    },
    "handlers": {"stdout": {"class": "logging.StreamHandler", "stream": "ext://sys.stdout", "formatter": "json"}},
    "root": {"handlers": ["stdout"], "level": LOG_LEVEL},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        "django.request": {"level": "WARNING"},
        # django-axes logs every login at INFO; lockouts are WARNING.
        "axes": {"level": "WARNING"},
    },
}

# Security headers. WANMON_BEHIND_PROXY: a TLS proxy that sets X-Forwarded-Proto and appends the client to
# X-Forwarded-For (docker-compose's Caddy) is in front; only then are those headers believed (without such a
# proxy any client could claim https or another address).
WANMON_BEHIND_PROXY = env_bool("WANMON_BEHIND_PROXY", False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if WANMON_BEHIND_PROXY else None
SESSION_COOKIE_SECURE = env_bool("WANMON_SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# HSTS where the site is served over TLS (secure cookies say so): browsers then refuse plain HTTP to it.
SECURE_HSTS_SECONDS = env_int("WANMON_HSTS_SECONDS", 365 * 86400 if SESSION_COOKIE_SECURE else 0)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy of every response (wanmon/core/middleware.py): scripts only from our static files.
WANMON_CSP = os.environ.get(
    "WANMON_CSP",
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'",
)
