from django.urls import path

from . import apis

urlpatterns = [
    path("auth/login/", apis.LoginApi.as_view(), name="auth-login"),
    path("auth/logout/", apis.LogoutApi.as_view(), name="auth-logout"),
    path("auth/me/", apis.MeApi.as_view(), name="auth-me"),
    path("assignments/", apis.AssignmentListApi.as_view(), name="assignment-list"),
]
