"""ffkv settings: one module, driven by the environment only (.env.example lists it all).

Every variable is listed in ``.env.example``. The defaults give the embedded set-up
(SQLite, a Celery broker on the file system, CPU) so that ``make demo`` runs anywhere;
``DJANGO_ENV=production`` turns the defaults off: it refuses DEBUG, demands
``SECRET_KEY``, ``DATABASE_URL`` and ``CACHE_URL``, and turns on HTTPS only (HSTS).
"""

from __future__ import annotations

import re
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
if (BASE_DIR / ".env").is_file():
    environ.Env.read_env(BASE_DIR / ".env")

DJANGO_ENV = env.str("DJANGO_ENV", default="development")
if DJANGO_ENV not in {"development", "production"}:
    raise ImproperlyConfigured(
        f"DJANGO_ENV must be 'development' or 'production', not {DJANGO_ENV!r}"
    )
PRODUCTION = DJANGO_ENV == "production"


def _required(name: str) -> str:
    value = env.str(name, default="")
    if not value:
        raise ImproperlyConfigured(f"{name} must be set when DJANGO_ENV=production")
    return value


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _env_bool(name: str, default: bool) -> bool:
    # django-environ reads any unknown word as False; a typo must not flip a setting.
    raw = env.str(name, default="1" if default else "0").strip().lower()
    if raw not in _TRUE | _FALSE:
        raise ImproperlyConfigured(f"{name} must be a boolean (true/false), not {raw!r}")
    return raw in _TRUE


def _env_int(name: str, default: int) -> int:
    try:
        return env.int(name, default=default)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer") from exc


DEBUG = _env_bool("DEBUG", False)
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured("DEBUG must be off when DJANGO_ENV=production")

_DEV_SECRET = "ffkv-development-only-secret-key-do-not-use-in-production"
SECRET_KEY = _required("SECRET_KEY") if PRODUCTION else env.str("SECRET_KEY", default=_DEV_SECRET)
if PRODUCTION and SECRET_KEY == _DEV_SECRET:
    raise ImproperlyConfigured("SECRET_KEY must not be the development default in production")

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# Runtime data of the embedded set-up: the SQLite file, the file-system broker, the
# mining work directories (tokenized corpus stores, shard checkpoints).
DATA_DIR = Path(env.str("FFKV_DATA_DIR", default=str(BASE_DIR / "var")))


def _roots(name: str, default: list[Path]) -> list[Path]:
    # Colon- or comma-separated folders; unset or empty takes the default. Relative
    # folders are taken from BASE_DIR, so that web and worker processes agree.
    parts = [p.strip() for p in re.split(r"[:,]", env.str(name, default="")) if p.strip()]
    return [BASE_DIR / Path(p).expanduser() for p in parts] or default


# Mining reads local corpus files and model folders only inside these folders (after
# symlinks and ".."); builtin: and hf: sources are always allowed (mining.core.sources).
# fixtures/ holds the project's own sample corpus (fixtures/sentences.txt).
FFKV_CORPUS_ROOTS = _roots("FFKV_CORPUS_ROOTS", [DATA_DIR / "corpora", BASE_DIR / "fixtures"])
FFKV_MODEL_ROOTS = _roots("FFKV_MODEL_ROOTS", [DATA_DIR / "models"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # swagger-ui served from the app, not a CDN
    "annotate",
    "mining",
    "reports",
]

MIDDLEWARE = [
    # Outermost: every log line of the request carries its id, and every response the
    # middleware below gives on its own (static files, refusals, errors) the CSP.
    "config.middleware.RequestIdMiddleware",
    "config.middleware.ContentSecurityPolicyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "config.middleware.BodySizeLimitMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "config" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

if PRODUCTION:
    _required("DATABASE_URL")
try:
    DATABASES = {
        "default": env.db_url("DATABASE_URL", default=f"sqlite:///{DATA_DIR / 'db.sqlite3'}")
    }
except (ValueError, KeyError, environ.ImproperlyConfigured) as exc:
    raise ImproperlyConfigured(f"DATABASE_URL is not a valid database URL: {exc}") from exc
_ENGINES = {"django.db.backends.sqlite3", "django.db.backends.postgresql"}
if DATABASES["default"]["ENGINE"] not in _ENGINES:
    raise ImproperlyConfigured(
        "DATABASE_URL is not a valid database URL: use postgres://... or sqlite:///..."
    )
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite cannot create the folder of its file; the embedded set-up owns DATA_DIR.
    _sqlite_name = str(DATABASES["default"].get("NAME", ""))
    if _sqlite_name and _sqlite_name != ":memory:":
        Path(_sqlite_name).parent.mkdir(parents=True, exist_ok=True)
    # WAL and immediate transactions let the web server and the worker share the file.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        }
    )
else:
    DATABASES["default"]["CONN_MAX_AGE"] = _env_int("CONN_MAX_AGE", 60)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Django's ModelBackend, plus the annotator role read with the user on every request.
AUTHENTICATION_BACKENDS = ["annotate.backends.RoleModelBackend"]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
# Production collects static files (whitenoise serves them with hashed names); the
# embedded set-up serves them straight from the finders.
STATIC_ROOT = env.str("STATIC_ROOT", default=str(DATA_DIR / "static")) if PRODUCTION else None
FRONTEND_DIST = BASE_DIR / "frontend" / "dist"
STATICFILES_DIRS = [FRONTEND_DIST] if FRONTEND_DIST.is_dir() else []
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = not PRODUCTION
_VITE_HASHED = re.compile(r"^.+[.-][0-9a-zA-Z_-]{8,12}\..+$")


def _immutable_file_test(path: str, url: str) -> bool:
    # Vite names built assets ``name-<hash>.ext``: they never change, cache them forever.
    return url.startswith(STATIC_URL + "assets/") and bool(_VITE_HASHED.match(url))


WHITENOISE_IMMUTABLE_FILE_TEST = _immutable_file_test

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_SECURE = _env_bool("SECURE_COOKIES", PRODUCTION)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
LOGIN_URL = "/login"
# How long a one-time link to set a password (an invitation, a reset) stays valid.
PASSWORD_RESET_TIMEOUT = _env_int("FFKV_PASSWORD_LINK_TTL_S", 3 * 24 * 3600)
if PASSWORD_RESET_TIMEOUT < 60:
    raise ImproperlyConfigured(
        f"FFKV_PASSWORD_LINK_TTL_S must be 60 or more, not {PASSWORD_RESET_TIMEOUT}"
    )
CSRF_FAILURE_VIEW = "config.views.csrf_failure"

# The login throttle counts in the cache: production points CACHE_URL at Redis so
# that every gunicorn process shares the count (per-process counts multiply the rate).
_CACHE_URL = _required("CACHE_URL") if PRODUCTION else env.str("CACHE_URL", default="")
if _CACHE_URL.startswith(("redis://", "rediss://")):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": _CACHE_URL,
        }
    }
elif _CACHE_URL:
    raise ImproperlyConfigured(f"CACHE_URL must be a redis:// URL, not {_CACHE_URL!r}")
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# How many reverse proxies in front of the app append to X-Forwarded-For. The login
# throttle counts per client address: with 0 it is REMOTE_ADDR and the header is ignored,
# since a client can write any address it likes there.
TRUSTED_PROXIES = _env_int("FFKV_TRUSTED_PROXIES", 0)
if TRUSTED_PROXIES < 0:
    raise ImproperlyConfigured(f"FFKV_TRUSTED_PROXIES must be 0 or more, not {TRUSTED_PROXIES}")
# Behind a proxy that terminates TLS, the request reached the proxy over HTTPS when the
# proxy says so; without one, a client could write the header itself.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if TRUSTED_PROXIES else None

# The size a request body may have, uploads included (an import's JSONL file): past it,
# a JSON 413 before anything is read (config.middleware.BodySizeLimitMiddleware). Form
# and JSON data outside files keep Django's own 2.5 MB (DATA_UPLOAD_MAX_MEMORY_SIZE).
# A larger study goes in with `manage.py import FILE`, which has no such limit.
_MAX_UPLOAD_MB = _env_int("FFKV_MAX_UPLOAD_MB", 100)
if _MAX_UPLOAD_MB < 1:
    raise ImproperlyConfigured(f"FFKV_MAX_UPLOAD_MB must be 1 or more, not {_MAX_UPLOAD_MB}")
FFKV_MAX_UPLOAD_BYTES = _MAX_UPLOAD_MB * 1024 * 1024

# Sent on every response (config.middleware.ContentSecurityPolicyMiddleware). Nothing
# inline runs: the SPA, the Django admin and the API docs load scripts and styles from
# files only (the docs' start-up script: config/templates/api_docs.html).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.SessionAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["annotate.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "annotate.api_errors.exception_handler",
    "DEFAULT_THROTTLE_RATES": {
        "login": env.str("LOGIN_THROTTLE_RATE", default="10/min"),
        "login_username": env.str("LOGIN_USERNAME_THROTTLE_RATE", default="10/min"),
        # The pages of a one-time link to set a password (annotate.apis.auth).
        "password_link": env.str("PASSWORD_LINK_THROTTLE_RATE", default="10/min"),
    },
    "NUM_PROXIES": TRUSTED_PROXIES,
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "ffkv API",
    "DESCRIPTION": "Mine and annotate the key-value memories of transformer FFN layers.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/api/",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # No "valid" badge: swagger-ui would send the schema's address to its public
    # validator, an image the CSP blocks anyway.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    "GET_LIB_DOC_EXCLUDES": "annotate.apis.common.schema_doc_excludes",
    "ENUM_NAME_OVERRIDES": {
        "AnnotationStatusEnum": "annotate.models.Annotation.Status",
        "ErrorCodeEnum": "annotate.api_errors.ErrorCode",
        "KeyWorkStatusEnum": "annotate.selectors.annotations.KEY_WORK_STATUSES",
        "KeyFlagReasonEnum": "annotate.models.KeyFlag.Reason",
        # A pattern's kind; a sample's (band, random); where a pattern came from.
        "KindEnum": "annotate.labels.KINDS",
        "SampleKindEnum": "annotate.apis.annotator.SAMPLE_KINDS",
        "PatternSourceEnum": "annotate.models.Pattern.Source",
        "GoldPatternSourceEnum": "annotate.models.GoldPattern.Source",
        "LabelEnum": "annotate.labels.LABELS",
        "MiningRunStatusEnum": "mining.models.MiningRun.Status",
        # Export, composition and causal jobs share their states.
        "JobStatusEnum": "reports.models.ExportJob.Status",
        "CausalKindEnum": "mining.models.CausalJob.Kind",
        "ValueAgreementReasonEnum": "reports.stats.value_agreement.REASONS",
        "ValueAgreementVariantEnum": "reports.stats.value_agreement.VARIANTS",
    },
}

# Celery. The embedded default is kombu's file-system transport: no server needed.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")
if not re.match(r"^(filesystem|redis|rediss|amqp|memory)://", CELERY_BROKER_URL):
    raise ImproperlyConfigured(
        "CELERY_BROKER_URL must start with filesystem://, redis://, rediss://, amqp:// "
        f"or memory://, not {CELERY_BROKER_URL!r}"
    )
if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dir = DATA_DIR / "broker"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        # Exchange bindings; the default is a "control" folder in the working directory.
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
    # Web processes publish into these folders and workers read them: both need them.
    for _folder in ("queue", "processed", "control"):
        (_broker_dir / _folder).mkdir(parents=True, exist_ok=True)
else:
    # Redis redelivers a message that was not acknowledged after this many seconds:
    # how a shard whose worker was killed gets mined again. A shard must finish within
    # it, or a second worker starts it too (harmless: shards are idempotent, but wasted).
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": _env_int("CELERY_VISIBILITY_TIMEOUT", 12 * 3600),
        "unacked_restore_interval": 5,
        "unacked_restore_throttle": 1,
    }
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# A worker killed mid-task leaves the message unacknowledged: the task runs again
# (docs/reliability.md). Tasks are written to be idempotent for that reason.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_DEFAULT_QUEUE = "celery"
# Mining runs on GPU workers (queue ``gpu``); the demo's single worker consumes both.
CELERY_TASK_ROUTES = {"mining.*": {"queue": "gpu"}}
# A running export job whose worker sent no heartbeat for this long lost its worker
# (killed): it is marked failed, and its partial file is never offered.
EXPORT_STALE_SECONDS = _env_int("FFKV_EXPORT_STALE_SECONDS", 300)
# A mining run whose workers gave no sign of life (heartbeat) for this long has its work
# queued again; after FFKV_RUN_STALE_REQUEUES such re-queues in a row it fails, with the
# reason. Workers beat every tenth of it (at most every 30 s).
RUN_STALE_AFTER_S = _env_int("FFKV_RUN_STALE_AFTER_S", 600)
RUN_STALE_REQUEUES = _env_int("FFKV_RUN_STALE_REQUEUES", 3)
if RUN_STALE_AFTER_S < 1 or RUN_STALE_REQUEUES < 0:
    raise ImproperlyConfigured(
        "FFKV_RUN_STALE_AFTER_S must be 1 or more and FFKV_RUN_STALE_REQUEUES 0 or more"
    )

# The optional LLM explainer (docs/evidence.md, "The LLM explainer"): any endpoint that
# speaks OpenAI's chat-completions protocol, e.g. http://127.0.0.1:8080/v1. Empty: off.
LLM_BASE_URL = env.str("FFKV_LLM_BASE_URL", default="").strip()
LLM_MODEL = env.str("FFKV_LLM_MODEL", default="").strip()
LLM_API_KEY = env.str("FFKV_LLM_API_KEY", default="")
LLM_TIMEOUT_S = _env_int("FFKV_LLM_TIMEOUT_S", 60)
if LLM_BASE_URL and not re.match(r"^https?://", LLM_BASE_URL):
    raise ImproperlyConfigured(
        f"FFKV_LLM_BASE_URL must start with http:// or https://, not {LLM_BASE_URL!r}"
    )
if LLM_BASE_URL and not LLM_MODEL:
    raise ImproperlyConfigured("FFKV_LLM_MODEL must be set when FFKV_LLM_BASE_URL is")
if LLM_TIMEOUT_S < 1:
    raise ImproperlyConfigured("FFKV_LLM_TIMEOUT_S must be 1 or more")

# Every line carries the id of the request it was written in (config/logging.py).
# json: one object a line, for a log collector (the production default); text: for
# people (the development default).
LOG_FORMAT = env.str("LOG_FORMAT", default="json" if PRODUCTION else "text")
if LOG_FORMAT not in {"json", "text"}:
    raise ImproperlyConfigured(f"LOG_FORMAT must be 'json' or 'text', not {LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "config.logging.RequestIdFilter"}},
    "formatters": {
        "text": {"format": "%(asctime)s %(levelname)s [%(request_id)s] %(name)s: %(message)s"},
        "json": {"()": "config.logging.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["request_id"],
            "formatter": LOG_FORMAT,
        }
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
}

if PRODUCTION:
    SECURE_CONTENT_TYPE_NOSNIFF = True
    X_FRAME_OPTIONS = "DENY"
    # TLS is terminated in front of the app (docs/operations.md, "TLS and proxies"): plain HTTP is
    # sent to HTTPS, except the health check that the container's probe asks over HTTP.
    SECURE_SSL_REDIRECT = _env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_REDIRECT_EXEMPT = [r"^api/health/$"]
    # A year, the common choice once HTTPS works (and what check --deploy asks for);
    # 0 turns HSTS off, e.g. for a first trial of a new host name.
    SECURE_HSTS_SECONDS = _env_int("SECURE_HSTS_SECONDS", 31_536_000)
    if SECURE_HSTS_SECONDS < 0:
        raise ImproperlyConfigured("SECURE_HSTS_SECONDS must be 0 or more")
    SECURE_HSTS_INCLUDE_SUBDOMAINS = _env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = _env_bool("SECURE_HSTS_PRELOAD", False)
    if not SECURE_HSTS_PRELOAD:
        # Preloading asks browsers to hard-code HTTPS for the whole domain, for months,
        # undone only by a slow removal request: the domain's owner opts in, not ffkv.
        # check --deploy's reminder of it (W021) is answered by this choice.
        SILENCED_SYSTEM_CHECKS = ["security.W021"]
