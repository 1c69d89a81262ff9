"""Sign-in, sign-out and who am I."""

from __future__ import annotations

import hashlib
import math
import unicodedata

from django.contrib.auth import authenticate, login, logout
from django.http import HttpRequest
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
from ..services import PASSWORD_LINK_INVALID, password_link_user, password_set_with_link
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


class UsernameRateThrottle(SimpleRateThrottle):
    """Counts sign-in attempts per submitted username, from any address: the per-address
    throttle alone lets one account be guessed at from many addresses.

    The name is normalised as loosely as a person would read it (NFKC, case, surrounding
    spaces), so that ``Alice`` and `` alice `` share one count.
    """

    scope = "login_username"

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        data = request.data
        username = data.get("username") if isinstance(data, dict) else None
        # The values the serializer's CharField accepts; anything else is refused there
        # before a password is checked, so it needs no count.
        if isinstance(username, bool) or not isinstance(username, (str, int, float)):
            return None
        name = unicodedata.normalize("NFKC", str(username)).strip().casefold()
        # Hashed: the cache key stays short and plain whatever the name holds.
        digest = hashlib.sha256(name.encode("utf-8", "backslashreplace")).hexdigest()
        return self.cache_format % {"scope": self.scope, "ident": digest}


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
        return Response(user_payload(user))


class _FormSignIn(APIView):
    """A sign-in form outside the API (the Django admin's), as DRF's throttles see it."""

    throttle_scope = LoginApi.throttle_scope


def login_throttle_wait(request: HttpRequest) -> int | None:
    """Counts a sign-in posted to a form outside the API (the Django admin's) in the API
    login's own throttles, per address and per username, and answers the seconds to wait
    once either count is spent (``None``: go ahead). One count for both forms: a guesser
    gains nothing by switching between them."""
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
        return Response(user_payload(user))
