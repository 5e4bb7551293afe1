"""Settings, read from environment variables. A bad value stops start-up with its name."""

from __future__ import annotations

import os
import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    if value.strip().lower() in _TRUE:
        return True
    if value.strip().lower() in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} should be true or false, not {value!r}")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} should be a whole number, not {value!r}") from None


def env_percent(name: str, default: int) -> int:
    value = env_int(name, default)
    if not 0 <= value <= 100:
        raise ImproperlyConfigured(f"{name} is a percentage from 0 to 100, not {value}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


# Local state (the SQLite file, the embedded broker's folders, uploads) lives here.
VAR_DIR = Path(env_str("HCTQA_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def _local_secret_key() -> str:
    """A per-checkout key kept in var/, so a fresh machine needs no configuration.
    Production sets SECRET_KEY."""
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY") or _local_secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
CSRF_FAILURE_VIEW = "hctqa.views.csrf_failure"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "axes",
    "plumbing",
    "endpoints",
    # Before the apps built on it: annotation's admin extends the dataset's.
    "dataset",
    "annotation",
    "releases",
    "leaderboard",
    "ingest",
    "tracks",
    "discussion",
    "pagecache",
    # Last: its post_migrate hook assigns the other apps' permissions to the role groups.
    "accounts",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Before anything reads the body (CSRF reads POST data in process_view).
    "plumbing.request_limits.RequestSizeLimitMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last: turns a login refused for too many failures into the lockout page or JSON.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "hctqa.urls"
WSGI_APPLICATION = "hctqa.wsgi.application"

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
                "accounts.context_processors.menu_counts",
            ],
        },
    },
]

# --- Database: a SQLite file by default, PostgreSQL (or any dj-database-url URL) when set.
# WAL lets the web server read while the worker writes; IMMEDIATE takes the write lock up
# front, so two writers queue for it instead of failing halfway through a transaction.
SQLITE_OPTIONS = {
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
}
DATABASE_URL = os.environ.get("DATABASE_URL", "")
if DATABASE_URL:
    _database = dj_database_url.parse(
        DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 60), conn_health_checks=True
    )
    if _database["ENGINE"].endswith("sqlite3"):
        _database["OPTIONS"] = SQLITE_OPTIONS
    DATABASES = {"default": _database}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "db.sqlite3",
            "OPTIONS": SQLITE_OPTIONS,
            "TEST": {"NAME": VAR_DIR / "test-db.sqlite3"},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# django-axes first: it refuses a locked-out client before a password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"
# Each role lands on its own workspace (hctqa.views.landing), not on the token page.
LOGIN_REDIRECT_URL = "landing"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Static and uploaded files. WhiteNoise serves static files with DEBUG off as well.
STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
MEDIA_URL = "media/"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
# Files that are never served (uploaded predictions).
PRIVATE_FILES_ROOT = Path(env_str("PRIVATE_FILES_ROOT", str(VAR_DIR / "private")))

# --- Ingesting new tables from PDFs and web pages (the ingest app). Uploaded documents,
# page images and crops live under INGEST_FILES_ROOT and are never served as files.
INGEST_FILES_ROOT = Path(env_str("INGEST_FILES_ROOT", str(PRIVATE_FILES_ROOT / "ingest")))
INGEST_MAX_BYTES = env_int("INGEST_MAX_BYTES", 50 * 1024 * 1024)
INGEST_MAX_PAGES = env_int("INGEST_MAX_PAGES", 500)
# An uploaded PNG or JPEG with more pixels is refused (Pillow's decompression-bomb guard, set to
# this): an A4 page scanned at 600 dpi has 35 million.
INGEST_MAX_IMAGE_PIXELS = env_int("INGEST_MAX_IMAGE_PIXELS", 40_000_000)
# A page (or a region re-extracted from the review page) that takes longer is stopped: its
# child process is killed and the page says so; the other pages go on.
INGEST_PAGE_SECONDS = env_int("INGEST_PAGE_SECONDS", 30)
# Address space of the child process that reads a document (0: no limit).
INGEST_WORKER_MEMORY_MB = env_int("INGEST_WORKER_MEMORY_MB", 2048)
# An extraction beats every 5 s; one without a heartbeat this long lost its worker (killed,
# out of memory) and the sweeper queues it again, to go on from the pages it had done.
INGEST_STALE_SECONDS = env_int("INGEST_STALE_SECONDS", 30)
INGEST_MAX_ATTEMPTS = env_int("INGEST_MAX_ATTEMPTS", 3)
# A document still queued after this long gets its message sent again (the broker lost it).
INGEST_QUEUED_RESEND_SECONDS = env_int("INGEST_QUEUED_RESEND_SECONDS", 600)
# Worker seconds each person's documents may take in any hour (pages read, OCR included).
# Past it, that person's remaining pages wait until the hour's oldest work ages out; the
# upload page shows what is used and left. 0: no limit.
INGEST_SECONDS_PER_HOUR = env_int("INGEST_SECONDS_PER_HOUR", 1800)
# An extraction works this long before it gives way, if a document of someone who has used
# less of the hour is waiting: one person's backlog never holds another's pages.
INGEST_SLICE_SECONDS = env_int("INGEST_SLICE_SECONDS", 5)
# A file the ingest worker refused (damaged, encrypted, no table, too slow to open) is refused
# at upload, at once and with the same reason, for this long after: its bytes are not read
# again. An admin who deletes the refused document in the admin forgets it sooner.
INGEST_REFUSED_MEMORY_SECONDS = env_int("INGEST_REFUSED_MEMORY_SECONDS", 24 * 3600)

# --- The tracks beside QA (the tracks app). Their items' files (synthetic tables drawn to PDF
# and PNG, the documents of accepted tables and of imported ground-truth sets) live under
# TRACK_FILES_ROOT and are never served as files: commands and releases copy them out.
TRACK_FILES_ROOT = Path(env_str("TRACK_FILES_ROOT", str(PRIVATE_FILES_ROOT / "tracks")))
# A build of the items whose heartbeat is older than this lost its worker: the sweeper fails
# it, and the next build picks up where it left (items drawn already are kept).
TRACK_BUILD_STALE_SECONDS = env_int("TRACK_BUILD_STALE_SECONDS", 120)
# A submission to a track is read up to this many bytes, gzip unpacked: an extraction file of
# 5,000 tables in the cell schema is tens of megabytes (the upload itself stays within
# SUBMISSION_MAX_BYTES; gzip it).
TRACK_SUBMISSION_MAX_BYTES = env_int("TRACK_SUBMISSION_MAX_BYTES", 200 * 1024 * 1024)

# --- Dataset releases: each is written once into RELEASES_ROOT/<version>/ and never changed.
# Not under MEDIA_ROOT: the full edition holds the test split's gold answers, and every file
# is served by a view that checks who may have it.
RELEASES_ROOT = Path(env_str("RELEASES_ROOT", str(VAR_DIR / "releases")))
# A build whose heartbeat is older than this lost its worker: it is failed (and its partial
# files removed) so that the next build can start.
RELEASE_BUILD_STALE_SECONDS = env_int("RELEASE_BUILD_STALE_SECONDS", 300)
# Helper processes that make a release's records, so a build uses every core; and how long a
# helper may take over one chunk of tables before the build gives up.
RELEASE_BUILD_PROCESSES = env_int("RELEASE_BUILD_PROCESSES", min(os.cpu_count() or 1, 4))
RELEASE_BUILD_TIMEOUT = env_int("RELEASE_BUILD_TIMEOUT", 600)
# Publishing a release to the Hugging Face Hub (manage.py push_release, the admin action):
# where the Hub is, and how long each request to it may take before the push gives up. The
# token is read from HF_TOKEN when pushing and never kept.
HF_ENDPOINT = env_str("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
HF_HUB_TIMEOUT = env_int("HF_HUB_TIMEOUT", 60)

# --- OpenAI-compatible endpoints (question generation, inference runs)
# The environment variables an admin-registered endpoint may name as its key (shell-style
# patterns). The worker sends the value to that endpoint, so never allow the platform's own
# secrets.
ENDPOINT_KEY_VARIABLES = env_list("ENDPOINT_KEY_VARIABLES", ["*_API_KEY"])
# Researchers' own endpoints may be on loopback and private addresses (a single lab's own
# server, whose GPU hosts are on its network). Off: only public addresses. Link-local and
# cloud metadata addresses are refused either way.
INFERENCE_ALLOW_PRIVATE_ENDPOINTS = env_bool("INFERENCE_ALLOW_PRIVATE_ENDPOINTS", False)

# --- Verification of model-generated questions
VERIFICATION_LEASE_SECONDS = env_int("VERIFICATION_LEASE_SECONDS", 300)
# Share of what a verifier is served that is gold (questions of the private gold pool).
VERIFICATION_GOLD_PERCENT = env_percent("VERIFICATION_GOLD_PERCENT", 10)
# Share of the gold served with a deliberately wrong proposed answer.
VERIFICATION_GOLD_WRONG_PERCENT = env_percent("VERIFICATION_GOLD_WRONG_PERCENT", 50)
# A verifier leaves the pool after marking more than this many gold questions Nonsensical…
GOLD_MAX_NONSENSICAL = env_int("GOLD_MAX_NONSENSICAL", 1)
# …or after flagging more than this many correct gold answers as wrong…
GOLD_MAX_WRONG_ANSWER_FLAGS = env_int("GOLD_MAX_WRONG_ANSWER_FLAGS", 0)
# …or after accepting more than this many deliberately wrong gold answers as right.
GOLD_MAX_WRONG_ANSWERS_ACCEPTED = env_int("GOLD_MAX_WRONG_ANSWERS_ACCEPTED", 0)
# Question generation on test-split tables: off, so no model proposes (and no annotator
# sees) an answer to a held-out question. When on, those questions are verified by admins.
GENERATION_ALLOW_TEST_SPLIT = env_bool("GENERATION_ALLOW_TEST_SPLIT", False)
# Question generation: tries per table before its malformed replies are reported.
GENERATION_MAX_ATTEMPTS = env_int("GENERATION_MAX_ATTEMPTS", 3)
GENERATION_REQUEST_TIMEOUT = env_int("GENERATION_REQUEST_TIMEOUT", 120)
# Eight pairs of JSON fit well within this; a reply cut at the limit is retried.
GENERATION_MAX_TOKENS = env_int("GENERATION_MAX_TOKENS", 4096)
# Some variety, so that retries after a malformed reply do not repeat it word for word.
GENERATION_TEMPERATURE = env_int("GENERATION_TEMPERATURE_PERCENT", 70) / 100

# --- Leaderboard submissions
SUBMISSION_MAX_BYTES = env_int("SUBMISSION_MAX_BYTES", 50 * 1024 * 1024)
# The largest request body of any kind, refused before it is read (0: no limit). It bounds
# what one request can put in a temporary file; several documents ingested at once share it.
REQUEST_MAX_BYTES = env_int("REQUEST_MAX_BYTES", 200 * 1024 * 1024)
# An uploaded answer longer than this is refused (with its question id): no model answers a
# table question in ten thousand characters, and pages and scoring stay small.
SUBMISSION_MAX_ANSWER_CHARS = env_int("SUBMISSION_MAX_ANSWER_CHARS", 10_000)
# Submissions scored against test gold answers (split test or all) per user per UTC day;
# failed and deleted ones count too.
SUBMISSION_DAILY_TEST_LIMIT = env_int("SUBMISSION_DAILY_TEST_LIMIT", 5)
# Submissions one researcher may keep stored (any split; admins excepted; 0: no limit): each
# keeps its predictions file, up to SUBMISSION_MAX_BYTES. Deleting one frees its place.
SUBMISSION_MAX_STORED = env_int("SUBMISSION_MAX_STORED", 200)
# A predictions file whose form came back with other problems is kept this long (private,
# for its owner's next try of that form), then deleted by the sweeper.
SUBMISSION_KEPT_UPLOAD_SECONDS = env_int("SUBMISSION_KEPT_UPLOAD_SECONDS", 3600)
# A submission still queued or scoring after this long is requeued, or failed after
# SUBMISSION_MAX_ATTEMPTS tries.
SUBMISSION_STUCK_AFTER_SECONDS = env_int("SUBMISSION_STUCK_AFTER_SECONDS", 600)
SUBMISSION_MAX_ATTEMPTS = env_int("SUBMISSION_MAX_ATTEMPTS", 3)
# Scoring beats every 5 s; a submission in scoring whose heartbeat is older than this lost its
# worker (killed, out of memory) and is requeued by the sweeper.
SUBMISSION_HEARTBEAT_TIMEOUT_SECONDS = env_int("SUBMISSION_HEARTBEAT_TIMEOUT_SECONDS", 30)
# One scoring task's time limit: past it the submission fails with the reason.
SUBMISSION_SCORING_TIME_LIMIT = env_int("SUBMISSION_SCORING_TIME_LIMIT", 300)
# Scoring submissions again after their questions changed works in slices of this long,
# queuing the rest after each, so an upload scored meanwhile waits one slice at most.
RESCORE_SLICE_SECONDS = env_int("RESCORE_SLICE_SECONDS", 60)

# --- Inference runs: the benchmark sent to an OpenAI-compatible endpoint (a GPU host's
# vLLM, OpenAI, a llama.cpp server) by a worker on the "inference" queue.
INFERENCE_REQUEST_TIMEOUT = env_int("INFERENCE_REQUEST_TIMEOUT", 120)  # seconds per request
# Starting a run reads the endpoint's model list (the model is served, its context length):
# on the web server while someone waits, and on the worker before the first question.
INFERENCE_CHECK_TIMEOUT = env_int("INFERENCE_CHECK_TIMEOUT", 15)  # seconds
# Tries per question on 429s, 5xx and timeouts, with exponential back-off from
# INFERENCE_RETRY_BASE_MS (doubling, jittered, at most INFERENCE_RETRY_MAX_SECONDS).
INFERENCE_MAX_ATTEMPTS = env_int("INFERENCE_MAX_ATTEMPTS", 6)
INFERENCE_RETRY_BASE_MS = env_int("INFERENCE_RETRY_BASE_MS", 1000)
INFERENCE_RETRY_MAX_SECONDS = env_int("INFERENCE_RETRY_MAX_SECONDS", 60)
# A running run whose heartbeat is older than this has lost its worker: the sweeper (beat)
# queues it again, up to INFERENCE_MAX_AUTO_RESUMES times.
INFERENCE_STALE_AFTER_SECONDS = env_int("INFERENCE_STALE_AFTER_SECONDS", 180)
INFERENCE_MAX_AUTO_RESUMES = env_int("INFERENCE_MAX_AUTO_RESUMES", 5)
# The answers that arrive are committed together at most this often (or every 500): a killed
# worker loses at most this long of answers, asked again on resume. Each commit costs the
# worker CPU that its endpoint's server may share: committing every 50 ms cost a vLLM on the
# same 2-core host about a tenth of its requests per second (benchmarks/inference_vllm.py).
INFERENCE_SAVE_MS = env_int("INFERENCE_SAVE_MS", 1000)
# A run whose endpoint refused more than this share of its prompts (a text-only model sent
# images) is not put on the board: it fails, to be resumed. Prompts over the model's context
# length are not refusals: they are scored as unanswered and counted on the board row.
INFERENCE_MAX_REJECTED_PERCENT = env_int("INFERENCE_MAX_REJECTED_PERCENT", 50)
# A run queued this long gets its message sent again, in case the broker lost it.
INFERENCE_QUEUED_RESEND_SECONDS = env_int("INFERENCE_QUEUED_RESEND_SECONDS", 3600)
# A task works on a run this long, then queues its own continuation: long runs stay under
# the Celery time limits, and other runs get their turn.
INFERENCE_SLICE_SECONDS = env_int("INFERENCE_SLICE_SECONDS", 1800)
# An endpoint's answer longer than this many characters is refused, not stored or scored
# (about 8,192 tokens of English, the most a run may ask for): a hostile endpoint's megabyte
# per question would otherwise fill the database. 0: only the 1 MiB reply limit.
INFERENCE_MAX_ANSWER_CHARS = env_int("INFERENCE_MAX_ANSWER_CHARS", 32_000)
# Runs one person may have queued or running at once (admins excepted; 0: no limit): the
# inference worker takes one run at a time, so one researcher's many runs would hold it.
INFERENCE_MAX_ACTIVE_RUNS = env_int("INFERENCE_MAX_ACTIVE_RUNS", 2)

# --- Accounts, sign-up and logging in
# Self-service sign-ups per client address (an IPv6 /64) per hour; 0: no limit.
SIGN_UP_LIMIT_PER_HOUR = env_int("SIGN_UP_LIMIT_PER_HOUR", 5)
# Submissions and inference runs scored against test gold answers (split test or all) need
# an account an admin approved. On: any researcher may (a single lab's own server).
OPEN_TEST_SUBMISSIONS = env_bool("OPEN_TEST_SUBMISSIONS", False)
# Reverse proxies in front of the web server that append the client to X-Forwarded-For; the
# per-address limits (sign-up, log-in lockout, API throttles) read the client from there.
# 0: the connection's own address (nothing in front, or a proxy that is not trusted).
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0)
# django-axes: after LOGIN_FAILURE_LIMIT failed log-ins (the form, the admin, the API token
# endpoint) a client is locked out for LOGIN_LOCKOUT_MINUTES. LOGIN_LOCKOUT_BY says what is
# counted: "username+ip_address" (a user's failures from one address: a guesser is stopped,
# the user can still log in from elsewhere), "username" (from anywhere: also stops a
# guesser with many addresses, but lets anyone lock a user out), "ip_address" (every user
# from the address); several, comma-separated, lock out on any. An address (an IPv6 /64)
# is also locked out, for every user, after LOGIN_FAILURE_LIMIT_PER_ADDRESS failures within
# LOGIN_LOCKOUT_MINUTES whichever the usernames (one password tried on many: spraying);
# higher, as people behind one NAT share it; 0: no such limit (accounts.lockout).
LOGIN_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
LOGIN_FAILURE_LIMIT_PER_ADDRESS = env_int("LOGIN_FAILURE_LIMIT_PER_ADDRESS", 20)
LOGIN_LOCKOUT_MINUTES = env_int("LOGIN_LOCKOUT_MINUTES", 15)
LOGIN_LOCKOUT_BY = env_list("LOGIN_LOCKOUT_BY", ["username+ip_address"])
_LOCKOUT_PARAMETERS = {"username", "ip_address"}
for _item in LOGIN_LOCKOUT_BY:
    if not set(_item.split("+")) <= _LOCKOUT_PARAMETERS:
        raise ImproperlyConfigured(
            f"LOGIN_LOCKOUT_BY takes username, ip_address or username+ip_address, not {_item!r}"
        )
AXES_ENABLED = env_bool("LOGIN_LOCKOUT", True)
AXES_FAILURE_LIMIT = LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = timedelta(minutes=LOGIN_LOCKOUT_MINUTES)
AXES_LOCKOUT_PARAMETERS = [item.split("+") if "+" in item else item for item in LOGIN_LOCKOUT_BY]
AXES_RESET_ON_SUCCESS = True
AXES_HANDLER = "accounts.lockout.LockoutHandler"
AXES_CLIENT_IP_CALLABLE = "plumbing.client_addresses.client_network"
AXES_LOCKOUT_CALLABLE = "accounts.views.locked_out"
# The access log would grow by a row per log-in; failures are what axes is for.
AXES_DISABLE_ACCESS_LOG = True
AXES_VERBOSE = False

# --- Email, through Django's email framework. With no EMAIL_HOST, the console backend: each
# message is printed in the log of the "default" worker, which sends them. With EMAIL_HOST,
# SMTP. Messages are queued in the database and sent by a task after the change they tell of
# is committed, so a slow or dead mail server never holds a web request or loses that change.
EMAIL_HOST = env_str("EMAIL_HOST", "")
EMAIL_PORT = env_int("EMAIL_PORT", 587)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ImproperlyConfigured("Set one of EMAIL_USE_TLS (STARTTLS) and EMAIL_USE_SSL, not both")
# Seconds one connection to the mail server may take; a sending task stops at twice that.
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10)
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend"
)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "HCT-QA platform <noreply@localhost>")
# Tries per message (a failed one is tried again later, waiting longer each time).
EMAIL_MAX_ATTEMPTS = env_int("EMAIL_MAX_ATTEMPTS", 5)
# Where the platform is reached, for the links in emails.
SITE_URL = env_str("SITE_URL", "http://localhost:8000").rstrip("/")

# --- Discussion threads on tables and questions: comments one person may post per hour.
COMMENTS_PER_HOUR = env_int("COMMENTS_PER_HOUR", 60)

# --- HTTP hardening
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
HTTPS = env_bool("HTTPS", False)
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = True
    # A load balancer's health check may come in plain HTTP: /healthz answers it unredirected.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 365 * 24 * 3600)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)

# Content-Security-Policy (django-csp): scripts and styles only from the platform's own
# static files, never inline; nothing framed, nothing posted elsewhere. The API docs page
# (Swagger UI) widens style-src for itself (hctqa/urls.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        # data: for the empty favicon and Swagger UI's icons.
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# Throttle counters (DRF) live in the default cache; anonymous visitors' public pages in
# "pages" (pagecache), apart, so that pages pushed out never take counters with them,
# and the tokens that say which pages are current in "page_tokens", which pages never cull.
# All must be shared by every process that serves or writes (web processes and workers),
# or a page would outlive the change that a worker made: files under var/cache by default,
# shared on one host; with several hosts set CACHE_URL=redis://... PAGE_CACHE_URL puts the
# pages and their tokens in a Redis of their own, whose maxmemory bounds them alone.
CACHE_URL = env_str("CACHE_URL", "")
_REDIS = ("redis://", "rediss://")
PAGE_CACHE_URL = env_str("PAGE_CACHE_URL", CACHE_URL if CACHE_URL.startswith(_REDIS) else "")
if PAGE_CACHE_URL.startswith(_REDIS):
    _pages_redis = {"BACKEND": "django.core.cache.backends.redis.RedisCache"}
    _PAGES = {
        "pages": {**_pages_redis, "LOCATION": PAGE_CACHE_URL, "KEY_PREFIX": "pages"},
        "page_tokens": {**_pages_redis, "LOCATION": PAGE_CACHE_URL, "KEY_PREFIX": "page-tokens"},
    }
elif PAGE_CACHE_URL == "":
    _files = "django.core.cache.backends.filebased.FileBasedCache"
    _PAGES = {
        "pages": {
            "BACKEND": _files,
            "LOCATION": str(VAR_DIR / "cache" / "pages"),
            "OPTIONS": {"MAX_ENTRIES": 3000},
        },
        # One token per database table (about a hundred): never culled.
        "page_tokens": {
            "BACKEND": _files,
            "LOCATION": str(VAR_DIR / "cache" / "page-tokens"),
            "OPTIONS": {"MAX_ENTRIES": 100_000},
        },
    }
else:
    raise ImproperlyConfigured(f"PAGE_CACHE_URL should be redis://..., not {PAGE_CACHE_URL!r}")
if CACHE_URL.startswith(_REDIS):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": CACHE_URL,
        },
        **_PAGES,
    }
elif CACHE_URL == "":
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        },
        **_PAGES,
    }
elif CACHE_URL == "locmem://":
    # One process's counters; the pages stay in files, which the workers share.
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}, **_PAGES}
else:
    raise ImproperlyConfigured(f"CACHE_URL should be redis://... or locmem://, not {CACHE_URL!r}")
# How long a public page is kept at most (0: never kept). A page is rendered again as soon as
# a table it read changes; this bounds only changes made outside the platform (psql by hand)
# or by a worker that shares no cache with the web server. Off with DEBUG, for template work.
PAGE_CACHE_SECONDS = env_int("PAGE_CACHE_SECONDS", 0 if DEBUG else 300)

# API rate limits, as DRF rates ("120/minute", "1000/hour"; empty: none). Anonymous clients
# count per address, logged-in ones per user. The annotation tools save a draft every second,
# well within the user rate. Uploads and inference runs, and the token endpoint (per
# address), have their own, tighter limits.
API_THROTTLE_RATES: dict[str, str | None] = {
    "anon": env_str("API_THROTTLE_ANON", "120/minute") or None,
    "user": env_str("API_THROTTLE_USER", "600/minute") or None,
    "uploads": env_str("API_THROTTLE_UPLOADS", "60/hour") or None,
    # Files sent for ingesting, each counted, on the upload page and the API together: each
    # costs the ingest worker up to INGEST_PAGE_SECONDS a page.
    "ingest": env_str("API_THROTTLE_INGEST", "60/hour") or None,
    "auth": env_str("API_THROTTLE_AUTH", "20/minute") or None,
    # Not the API: new comparisons on the compare page (a bootstrap, half a second of CPU
    # each, open to anonymous visitors); comparisons already in the cache are not counted.
    "compare": env_str("PAGE_THROTTLE_COMPARE", "60/hour") or None,
}

# --- REST API
REST_FRAMEWORK = {
    # Token first: a bad token gets 401 with a WWW-Authenticate challenge, not 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    # DRF's JSON parser with nesting bounded: deeply nested JSON is a 400, not a 500.
    "DEFAULT_PARSER_CLASSES": [
        "plumbing.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "plumbing.api.AutoSchema",
    "EXCEPTION_HANDLER": "plumbing.api.exception_handler",
    # Rates come from API_THROTTLE_RATES, read per request (plumbing/throttles.py).
    "DEFAULT_THROTTLE_CLASSES": [
        "plumbing.throttles.AnonRateThrottle",
        "plumbing.throttles.UserRateThrottle",
        "plumbing.throttles.ScopedRateThrottle",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "HCT-QA platform API",
    "DESCRIPTION": "Tables, questions and gold answers of the HCT-QA benchmark.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI's files ship with drf-spectacular-sidecar: the docs page needs no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # No deep links: with them each operation's path is a link inside the button that opens
    # it, an interactive control nested in another (axe-core: nested-interactive).
    "SWAGGER_UI_SETTINGS": {"deepLinking": False},
    "REDOC_DIST": "SIDECAR",
    # Choice sets that share a field name: split (a table's, and the questions a run or a
    # submission is scored on), an ingested document's and its candidates' kinds and states,
    # a run's status; an inference run takes fewer table formats and prompt styles than a
    # submission states.
    "ENUM_NAME_OVERRIDES": {
        "TableSplitEnum": "dataset.models.Split",
        "EvalSplitEnum": "leaderboard.models.EvalSplit",
        "TableFormatEnum": "leaderboard.models.TableFormat",
        "InferenceTableFormatEnum": "leaderboard.models.INFERENCE_FORMATS",
        "PromptStyleEnum": "leaderboard.models.PromptStyle",
        "InferencePromptStyleEnum": "leaderboard.models.INFERENCE_STYLES",
        "DocumentKindEnum": "ingest.models.DocumentKind",
        "DocumentStatusEnum": "ingest.models.DocumentStatus",
        "CandidateStatusEnum": "ingest.models.CandidateStatus",
        "CandidateStrategyEnum": "ingest.models.Strategy",
        "RunStatusEnum": "plumbing.jobs.RunStatus",
    },
}

# --- Celery. With no CELERY_BROKER_URL, kombu's filesystem transport: messages are files in
# var/celery, so a real worker process runs with no broker server. It needs no extra package,
# survives restarts (messages are on disk), and supports the fanout that remote control and
# /healthz's worker ping rely on. Set CELERY_BROKER_URL=redis://... in production.
# "localhost" only keeps kombu from warning that no host was given; the transport ignores it.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or "filesystem://localhost//"
if CELERY_BROKER_URL.startswith("filesystem://"):
    _celery_dir = Path(env_str("CELERY_FILESYSTEM_DIR", str(VAR_DIR / "celery")))
    for _folder in ("queue", "control"):
        (_celery_dir / _folder).mkdir(parents=True, exist_ok=True)
    # kombu's transport, writing each message whole (plumbing/broker.py).
    CELERY_BROKER_TRANSPORT = "plumbing.broker:FilesystemTransport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_celery_dir / "queue"),
        "data_folder_out": str(_celery_dir / "queue"),
        "control_folder": str(_celery_dir / "control"),
        "polling_interval": 0.2,
    }
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Tasks record their progress in the database; nothing reads Celery results.
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 3300)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 3600)
CELERY_BROKER_CONNECTION_TIMEOUT = 3
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Six queues, each with its own worker process, so that one kind of work never waits
# behind another: "scoring" (submissions and the property regression), "inference" (runs
# and question generation, which wait on model endpoints: on the GPU host in production),
# "ingest" (opening uploaded PDFs and web pages and extracting their tables, page by page),
# "sweeps" (beat's recovery sweeps, a few seconds apart, never behind an admin's job),
# "builds" (an admin's long jobs, minutes each: release builds and pushes, synthetic
# generation, the tracks' item builds) and "default" (the rest, short: emails, the hourly
# question-set check), so that a password-reset email never waits behind a release build.
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = {
    "leaderboard.tasks.score_submission": {"queue": "scoring"},
    "leaderboard.tasks.refresh_property_regression": {"queue": "scoring"},
    "leaderboard.tasks.rescore_submissions": {"queue": "scoring"},
    "leaderboard.tasks.run_inference": {"queue": "inference"},
    "annotation.tasks.generate_questions": {"queue": "inference"},
    "ingest.tasks.extract_document": {"queue": "ingest"},
    "ingest.tasks.score_candidate": {"queue": "ingest"},
    "releases.tasks.build_release": {"queue": "builds"},
    "releases.tasks.push_release": {"queue": "builds"},
    "annotation.tasks.synthetic_generation": {"queue": "builds"},
    "tracks.tasks.build_track_items": {"queue": "builds"},
    # Every job kind (plumbing.jobs): scorings, re-scorings, inference runs, extractions.
    "plumbing.tasks.sweep_jobs": {"queue": "sweeps"},
    "annotation.tasks.release_expired_leases": {"queue": "sweeps"},
    # Queues the emails due; sending them is the default queue's (send_email).
    "accounts.tasks.send_waiting_emails": {"queue": "sweeps"},
    "accounts.tasks.send_approval_digests": {"queue": "sweeps"},
}
WORKER_QUEUES = ("default", "scoring", "inference", "ingest", "sweeps", "builds")
# A task killed with its worker comes back by two ways. (1) task_reject_on_worker_lost: when
# the pool's child process dies (killed, out of memory) the worker puts the message back at
# once, on either broker. (2) When the worker's main process dies too, Redis hands the
# message out again after the queue's visibility timeout below; kombu's filesystem transport
# deletes a message when it delivers it, so there the message is gone. Either way the
# heartbeat sweeps (every SWEEP_EVERY_SECONDS, on the "sweeps" queue) requeue a scoring or an
# extraction whose heartbeat stopped for SUBMISSION_HEARTBEAT_TIMEOUT_SECONDS /
# INGEST_STALE_SECONDS (30 s): that is what brings it back within a minute on both brokers.
# Redis's visibility timeout is one per connection, counted from delivery, and a message
# older than it is handed out again even while its task still runs; so each worker keeps the
# messages it holds under keys of its own queues (hctqa.celery) with the timeout of its
# slowest queue, longer than that queue's longest task (its time limit).
CELERY_QUEUE_VISIBILITY_SECONDS = {
    "scoring": RESCORE_SLICE_SECONDS + SUBMISSION_SCORING_TIME_LIMIT + 90,
    "sweeps": 120,
    "ingest": CELERY_TASK_TIME_LIMIT + 60,
    "inference": CELERY_TASK_TIME_LIMIT + 60,
    "builds": CELERY_TASK_TIME_LIMIT + 60,
    "default": CELERY_TASK_TIME_LIMIT + 60,
}
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": max(CELERY_QUEUE_VISIBILITY_SECONDS.values()),
        # Look for messages past their timeout every 10 s (kombu's default is every 100 s).
        "unacked_restore_interval": 10,
        "unacked_restore_throttle": 1,
    }
# How often beat sweeps the jobs (plumbing.jobs: scorings, inference runs, extractions). A
# sweep message not
# taken within one period is dropped: the next one does the same work.
SWEEP_EVERY_SECONDS = env_int("SWEEP_EVERY_SECONDS", 10)
# How often beat compares each scored submission's question set with the current one, for
# the changes that send no signal (questions written, verified, edited, removed).
QUESTION_SET_CHECK_SECONDS = env_int("QUESTION_SET_CHECK_SECONDS", 3600)
CELERY_BEAT_SCHEDULE = {
    "sweep-jobs": {
        "task": "plumbing.tasks.sweep_jobs",
        "schedule": SWEEP_EVERY_SECONDS,
        "options": {"expires": SWEEP_EVERY_SECONDS},
    },
    "release-expired-verification-leases": {
        "task": "annotation.tasks.release_expired_leases",
        "schedule": 60,
        "options": {"expires": 60},
    },
    "rescore-after-question-set-drift": {
        "task": "leaderboard.tasks.check_question_sets",
        "schedule": QUESTION_SET_CHECK_SECONDS,
    },
    "send-waiting-emails": {
        "task": "accounts.tasks.send_waiting_emails",
        "schedule": 60,
        "options": {"expires": 60},
    },
    # Emails each admin the requests that came since their last digest, an hour after it.
    "send-approval-request-digests": {
        "task": "accounts.tasks.send_approval_digests",
        "schedule": 300,
        "options": {"expires": 300},
    },
}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "expected_refusals": {"()": "plumbing.log_filters.ExpectedRefusals"},
        "suspicious_requests": {"()": "plumbing.log_filters.SuspiciousRequests"},
        "quiet_sweeps": {"()": "plumbing.log_filters.QuietSweeps"},
    },
    # On the handler: django.security.* loggers are made per exception class.
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["suspicious_requests"]}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        # One INFO line per HTTP request would flood the inference worker's log, and
        # django-axes logs every log-in at INFO; its warnings (failures, lockouts) stay.
        "httpx2": {"level": "WARNING"},
        "axes": {"level": "WARNING"},
        "django.request": {"filters": ["expected_refusals"]},
        # Celery's "received" and "succeeded" lines for beat's periodic tasks.
        "celery.worker.strategy": {"filters": ["quiet_sweeps"]},
        "celery.app.trace": {"filters": ["quiet_sweeps"]},
        "celery.beat": {"filters": ["quiet_sweeps"]},
    },
}

# How long after writing a question its author may still change it (from "My recent work").
ANNOTATION_CHANGE_WINDOW_HOURS = env_int("ANNOTATION_CHANGE_WINDOW_HOURS", 24)

# The synthetic generator's parameter files (PARAM_semantics.json, PARAM_tableTemplates.json,
# PARAM_NLquestionTemplates.json) for the admin page's runs; empty: the page says so.
SYNTHETIC_PARAMS_DIR = env_str("SYNTHETIC_PARAMS_DIR", "")
