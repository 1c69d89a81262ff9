"""The annotator-facing API: one view per operation (validate → service/selector → serialize)."""

from __future__ import annotations

from django.contrib.auth import authenticate, login, logout
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_protect
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from .permissions import IsAnnotator, user_is_annotator
from .selectors import assignment_list_for_annotator

INVALID_CREDENTIALS = "Invalid username or password."


@extend_schema_serializer(component_name="User")
class UserOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    is_staff = serializers.BooleanField()
    is_annotator = serializers.SerializerMethodField()
    display_name = serializers.SerializerMethodField()

    def get_is_annotator(self, obj) -> bool:
        return user_is_annotator(obj)

    def get_display_name(self, obj) -> str:
        return obj.get_full_name() or obj.username


@extend_schema_serializer(component_name="Error")
class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()


def user_payload(user) -> dict:
    return dict(UserOutputSerializer(user).data)


@method_decorator(csrf_protect, name="dispatch")
class LoginApi(APIView):
    permission_classes = [AllowAny]
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "login"

    @extend_schema_serializer(component_name="Login")
    class InputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150)
        password = serializers.CharField(max_length=512, trim_whitespace=False)

    @extend_schema(
        request=InputSerializer,
        responses={200: UserOutputSerializer, 400: ErrorSerializer, 429: ErrorSerializer},
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user = authenticate(request, **serializer.validated_data)
        if user is None:
            return Response({"detail": INVALID_CREDENTIALS}, status=status.HTTP_400_BAD_REQUEST)
        login(request, user)
        return Response(user_payload(user))


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


class AssignmentListApi(APIView):
    permission_classes = [IsAnnotator]

    @extend_schema_serializer(component_name="Assignment")
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        batch_name = serializers.CharField(source="batch.name")
        study_id = serializers.IntegerField(source="batch.study_id")
        study_name = serializers.CharField(source="batch.study.name")
        keys_total = serializers.IntegerField()
        keys_submitted = serializers.IntegerField()
        created_at = serializers.DateTimeField()

    @extend_schema(responses={200: OutputSerializer(many=True)})
    def get(self, request: Request) -> Response:
        assignments = assignment_list_for_annotator(user=request.user)
        return Response(self.OutputSerializer(assignments, many=True).data)
