"""Sign-in, sign-out and who am I."""

from __future__ import annotations

import hashlib
import math
import secrets
import unicodedata
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import authenticate, login, logout
from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_protect
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle, SimpleRateThrottle
from rest_framework.views import APIView

from ..api_errors import ErrorCode, error_response
from ..permissions import user_is_annotator, user_is_curator
from ..services.accounts import (
    PASSWORD_LINK_INVALID,
    password_link_user,
    password_set_with_link,
)
from ..usernames import username_normal
from .common import ApiErrorsMixin, ErrorSerializer, ValidationErrorSerializer

INVALID_CREDENTIALS = "Invalid username or password."


@extend_schema_serializer(component_name="User")
class UserOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    is_staff = serializers.BooleanField()
    is_annotator = serializers.SerializerMethodField()
    is_curator = serializers.SerializerMethodField()
    display_name = serializers.SerializerMethodField()

    def get_is_annotator(self, obj) -> bool:
        return user_is_annotator(obj)

    def get_is_curator(self, obj) -> bool:
        return user_is_curator(obj)

    def get_display_name(self, obj) -> str:
        return obj.get_full_name() or obj.username


def user_payload(user) -> dict:
    return dict(UserOutputSerializer(user).data)


# A browser where an account has signed in carries a signed cookie naming it (by a hash of
# the name) and a random id of the browser. The per-username count is kept apart for each
# such browser: a stranger hammering a name fills the count of the browsers that never
# signed in to it, and its owner still signs in from theirs.
KNOWN_DEVICE_COOKIE = "ffkv_known_device"
KNOWN_DEVICE_SALT = "annotate.apis.auth.known-device"
KNOWN_DEVICE_MAX_AGE = 90 * 24 * 3600  # a browser is forgotten 90 days after its last sign-in
KNOWN_DEVICE_ACCOUNTS = 8  # accounts remembered per browser, the latest first


def _username_digest(username: str) -> str:
    """The name as loosely as a person reads it (NFKC, case, surrounding spaces), hashed:
    ``Alice`` and `` alice `` share one count, and a cookie or cache key stays short and
    plain whatever the name holds."""
    name = unicodedata.normalize("NFKC", username).strip().casefold()
    return hashlib.sha256(name.encode("utf-8", "backslashreplace")).hexdigest()[:32]


@dataclass(frozen=True)
class KnownDevice:
    id: str
    accounts: tuple[str, ...]  # username digests, the latest sign-in first


def known_device(request: HttpRequest | Request) -> KnownDevice | None:
    """The browser's known-device cookie, if it is one this site signed (and not older
    than ``KNOWN_DEVICE_MAX_AGE``); None otherwise, a forged or stale one included."""
    value = request.COOKIES.get(KNOWN_DEVICE_COOKIE)
    if not value or len(value) > 4096:
        return None
    try:
        data = signing.loads(value, salt=KNOWN_DEVICE_SALT, max_age=KNOWN_DEVICE_MAX_AGE)
    except (signing.BadSignature, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    device, accounts = data.get("d"), data.get("u")
    if not isinstance(device, str) or not isinstance(accounts, list):
        return None
    return KnownDevice(id=device, accounts=tuple(a for a in accounts if isinstance(a, str)))


def known_device_remember(request: HttpRequest | Request, response: HttpResponse, user) -> None:
    """After a sign-in: the browser is a known device of ``user`` from now on."""
    device = known_device(request)
    digest = _username_digest(user.get_username())
    earlier = [a for a in device.accounts if a != digest] if device is not None else []
    value = {
        "d": device.id if device is not None else secrets.token_urlsafe(16),
        "u": [digest, *earlier][:KNOWN_DEVICE_ACCOUNTS],
    }
    response.set_cookie(
        KNOWN_DEVICE_COOKIE,
        signing.dumps(value, salt=KNOWN_DEVICE_SALT),
        max_age=KNOWN_DEVICE_MAX_AGE,
        httponly=True,
        samesite="Lax",
        secure=settings.SESSION_COOKIE_SECURE,
    )


class UsernameRateThrottle(SimpleRateThrottle):
    """Counts sign-in attempts per submitted username: the per-address throttle alone
    lets one account be guessed at from many addresses.

    One count for every browser that has not signed in to the account (so guessing from
    many addresses stays bounded), and one of its own for each browser that has (a known
    device: ``known_device``), so that a stranger who keeps the first count spent does
    not lock the owner out of the browsers they use.
    """

    scope = "login_username"

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        data = request.data
        username = data.get("username") if isinstance(data, dict) else None
        # The values the serializer's CharField accepts; anything else is refused there
        # before a password is checked, so it needs no count.
        if isinstance(username, bool) or not isinstance(username, (str, int, float)):
            return None
        ident = _username_digest(str(username))
        device = known_device(request)
        if device is not None and ident in device.accounts:
            ident = f"{ident}:{hashlib.sha256(device.id.encode()).hexdigest()[:32]}"
        return self.cache_format % {"scope": self.scope, "ident": ident}


@method_decorator(csrf_protect, name="dispatch")
class LoginApi(APIView):
    permission_classes = [AllowAny]
    throttle_classes = [ScopedRateThrottle, UsernameRateThrottle]
    throttle_scope = "login"

    @extend_schema_serializer(component_name="Login")
    class InputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150)
        password = serializers.CharField(max_length=512, trim_whitespace=False)

    @extend_schema(
        request=InputSerializer,
        responses={
            200: UserOutputSerializer,
            400: OpenApiResponse(
                ValidationErrorSerializer,
                description="Wrong credentials (code `invalid_credentials`) or field errors "
                "(code `invalid`).",
            ),
            429: ErrorSerializer,
        },
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        credentials = dict(serializer.validated_data)
        # Accounts are stored under NFKC names, as Django's own sign-in form reads them:
        # a name typed with fullwidth letters is the same account.
        credentials["username"] = username_normal(credentials["username"])
        user = authenticate(request, **credentials)
        if user is None:
            return error_response(
                INVALID_CREDENTIALS, ErrorCode.INVALID_CREDENTIALS, status.HTTP_400_BAD_REQUEST
            )
        login(request, user)
        response = Response(user_payload(user))
        known_device_remember(request, response, user)
        return response


class _FormSignIn(APIView):
    """A sign-in form outside the API (the Django admin's), as DRF's throttles see it."""

    throttle_scope = LoginApi.throttle_scope


def login_throttle_wait(request: HttpRequest) -> int | None:
    """Counts a sign-in posted to a form outside the API (the Django admin's) in the API
    login's own throttles, per address and per username (a known device's own count
    included), and answers the seconds to wait once either count is spent (``None``: go
    ahead). One count for both forms: a guesser gains nothing by switching between them."""
    form = Request(request, parsers=[FormParser(), MultiPartParser()])
    view = _FormSignIn()
    throttles = [throttle_class() for throttle_class in LoginApi.throttle_classes]
    # Every throttle records the attempt, as DRF's own check does.
    refused = [throttle for throttle in throttles if not throttle.allow_request(form, view)]
    if not refused:
        return None
    waits = [wait for wait in (throttle.wait() for throttle in refused) if wait is not None]
    return max(1, math.ceil(max(waits, default=0)))


class LogoutApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request) -> Response:
        logout(request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeApi(APIView):
    @extend_schema(responses={200: UserOutputSerializer, 403: ErrorSerializer})
    def get(self, request: Request) -> Response:
        return Response(user_payload(request.user))


@extend_schema_serializer(component_name="PasswordLinkCheck")
class PasswordLinkInputSerializer(serializers.Serializer):
    uid = serializers.CharField(max_length=64)
    token = serializers.CharField(max_length=128)


@method_decorator(csrf_protect, name="dispatch")
class PasswordLinkCheckApi(ApiErrorsMixin, APIView):
    """Whether a one-time link to set a password is valid, and whose it is. Asked with
    POST so that the token stays out of query strings and access logs."""

    permission_classes = [AllowAny]
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "password_link"

    @extend_schema_serializer(component_name="PasswordLinkOwner")
    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()

    @extend_schema(
        request=PasswordLinkInputSerializer,
        responses={200: OutputSerializer, 400: ValidationErrorSerializer, 429: ErrorSerializer},
    )
    def post(self, request: Request) -> Response:
        serializer = PasswordLinkInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user = password_link_user(**serializer.validated_data)
        if user is None:
            return error_response(
                PASSWORD_LINK_INVALID, ErrorCode.PASSWORD_LINK_INVALID, status.HTTP_400_BAD_REQUEST
            )
        return Response(self.OutputSerializer(user).data)


@method_decorator(csrf_protect, name="dispatch")
class SetPasswordApi(ApiErrorsMixin, APIView):
    """Set one's password with a one-time link, and sign in. The link is spent."""

    permission_classes = [AllowAny]
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "password_link"

    @extend_schema_serializer(component_name="SetPassword")
    class InputSerializer(PasswordLinkInputSerializer):
        password = serializers.CharField(max_length=512, trim_whitespace=False)

    @extend_schema(
        request=InputSerializer,
        responses={200: UserOutputSerializer, 400: ValidationErrorSerializer, 429: ErrorSerializer},
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user = password_set_with_link(**serializer.validated_data)
        login(request, user)
        response = Response(user_payload(user))
        known_device_remember(request, response, user)
        return response
