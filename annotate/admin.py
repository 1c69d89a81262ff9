"""Django's admin for the annotation domain (/admin/; the app's own screens are /manage).

Two rules:

- Annotations, their patterns and the audit trail are read-only here, for everyone,
  superusers included: their writes go through ``annotate.services``, which check the
  rules, bump the version and record the audit event. An edit made here skipped all three.
- No page lists a whole table in a ``<select>``: every foreign key is a raw id (or shown
  read-only, as a link), and the keys of a batch or an assignment, which can run to
  100,000, are counted rather than listed in a form. One change page was 4.3 MB.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from .models import (
    Annotation,
    AnnotationEvent,
    Assignment,
    AssignmentKey,
    Batch,
    CheckServing,
    GoldAnnotation,
    GoldEvent,
    GoldPattern,
    Guideline,
    Key,
    KeyFlag,
    Pattern,
    Study,
    TriggerPrefix,
)
from .permissions import user_can_manage_account
from .services import ServiceError
from .services.accounts import username_skeletons, username_validate_new
from .usernames import username_normal


class ReadOnlyAdmin(admin.ModelAdmin):
    """Viewing only, whoever asks: the writes belong to ``annotate.services``."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["name", "model_name", "corpus", "top_k", "n_layers", "archived", "created_at"]
    list_filter = ["archived"]
    search_fields = ["name", "model_name"]
    raw_id_fields = ["created_by"]


@admin.register(Key)
class KeyAdmin(admin.ModelAdmin):
    list_display = ["study", "layer", "index", "density", "max_coefficient"]
    list_filter = ["study", "layer"]
    list_select_related = ["study"]
    raw_id_fields = ["study"]


@admin.register(TriggerPrefix)
class TriggerPrefixAdmin(admin.ModelAdmin):
    list_display = ["key", "rank", "coefficient", "trigger_token", "text"]
    list_select_related = ["key__study"]
    raw_id_fields = ["key"]


def _keys_link(count: int, assignment_id: int) -> str:
    url = reverse("admin:annotate_assignmentkey_changelist") + f"?assignment={assignment_id}"
    return format_html('<a href="{}">{} key{}</a>', url, count, "" if count == 1 else "s")


@admin.register(Batch)
class BatchAdmin(admin.ModelAdmin):
    """A batch's keys are chosen when it is made (``batch_create_*``) and assignments rest
    on them, so they are counted here, not edited."""

    list_display = ["name", "study", "created_at"]
    list_select_related = ["study"]
    raw_id_fields = ["study", "created_by"]
    exclude = ["keys"]
    readonly_fields = ["key_count"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Batch]:
        return super().get_queryset(request).annotate(n_keys=Count("keys", distinct=True))

    @admin.display(description="keys")
    def key_count(self, batch: Batch) -> int:
        return getattr(batch, "n_keys", 0)


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    """An assignment's keys are dealt by ``assignment_create_with_overlap`` and moved by
    ``annotator_deactivate_and_reassign``; here they are counted, with a link to the list."""

    list_display = ["batch", "annotator", "created_at"]
    list_select_related = ["batch__study", "annotator"]
    raw_id_fields = ["batch", "annotator"]
    readonly_fields = ["key_count"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Assignment]:
        return super().get_queryset(request).annotate(n_keys=Count("keys", distinct=True))

    @admin.display(description="keys")
    def key_count(self, assignment: Assignment) -> str:
        return _keys_link(getattr(assignment, "n_keys", 0), assignment.pk)


@admin.register(AssignmentKey)
class AssignmentKeyAdmin(ReadOnlyAdmin):
    # Admins may see which keys are checks; annotators never do.
    list_display = ["assignment", "key", "is_check"]
    list_filter = ["is_check"]
    list_select_related = ["assignment__batch__study", "assignment__annotator", "key"]
    raw_id_fields = ["assignment", "key"]


@admin.register(Annotation)
class AnnotationAdmin(ReadOnlyAdmin):
    list_display = ["key", "annotator", "status", "version", "updated_at"]
    list_filter = ["status"]
    list_select_related = ["key__study", "annotator"]
    raw_id_fields = ["key", "annotator"]


@admin.register(Pattern)
class PatternAdmin(ReadOnlyAdmin):
    list_display = ["annotation", "kind", "description", "updated_at"]
    list_filter = ["kind"]
    list_select_related = ["annotation__key__study", "annotation__annotator"]
    raw_id_fields = ["annotation", "prefixes", "suggestion"]


@admin.register(AnnotationEvent)
class AnnotationEventAdmin(ReadOnlyAdmin):
    """The audit trail records what happened."""

    list_display = ["annotation", "action", "actor", "at"]
    list_filter = ["action"]
    list_select_related = ["annotation__key", "annotation__annotator", "actor"]
    raw_id_fields = ["annotation", "actor"]


GOLD_PATTERN_FIELDS = (
    "order",
    "kind",
    "description",
    "source",
    "source_annotator",
    "source_pattern",
)


class GoldPatternInline(admin.TabularInline):
    model = GoldPattern
    fields = GOLD_PATTERN_FIELDS
    readonly_fields = GOLD_PATTERN_FIELDS
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(GoldAnnotation)
class GoldAnnotationAdmin(ReadOnlyAdmin):
    """Gold is written through ``annotate.services.gold`` (version checks, the 3-prefix rule)."""

    list_display = ["key", "status", "is_check", "curator", "version", "updated_at"]
    list_filter = ["status", "is_check"]
    list_select_related = ["key__study", "curator"]
    raw_id_fields = ["key", "curator"]
    inlines = [GoldPatternInline]


@admin.register(GoldEvent)
class GoldEventAdmin(ReadOnlyAdmin):
    """The gold's audit trail records what happened, as the annotators' does."""

    list_display = ["gold", "action", "actor", "at"]
    list_filter = ["action"]
    list_select_related = ["gold__key__study", "actor"]
    raw_id_fields = ["gold", "actor"]


@admin.register(KeyFlag)
class KeyFlagAdmin(ReadOnlyAdmin):
    list_display = ["key", "annotator", "reason", "created_at"]
    list_filter = ["reason"]
    list_select_related = ["key__study", "annotator"]
    raw_id_fields = ["key", "annotator"]


@admin.register(Guideline)
class GuidelineAdmin(ReadOnlyAdmin):
    """Each edit of a study's guidelines is a new version, made by its own service."""

    list_display = ["study", "version", "created_by", "created_at"]
    list_select_related = ["study", "created_by"]
    raw_id_fields = ["study", "created_by"]


@admin.register(CheckServing)
class CheckServingAdmin(ReadOnlyAdmin):
    list_display = ["key", "annotator", "assignment", "drawn_by", "served_at"]
    list_select_related = ["key__study", "annotator", "assignment__batch", "drawn_by"]
    raw_id_fields = ["annotator", "key", "assignment", "drawn_by"]


# --- accounts ---------------------------------------------------------------------------


def _new_username(value: str, *, renaming: Any = None) -> str:
    """A username checked as the annotator screens check one (NFKC; not taken, not two
    scripts, not confusable with another account's); ``renaming``: the account whose own
    name does not count against it."""
    skeletons = None
    if renaming is not None:
        skeletons = {k: v for k, v in username_skeletons().items() if v != renaming.username}
    try:
        return username_validate_new(username=value, skeletons=skeletons)
    except ServiceError as exc:
        raise forms.ValidationError(exc.message, code=exc.code) from exc


class AccountCreationForm(AdminUserCreationForm):
    def clean_username(self) -> str:
        return _new_username(self.cleaned_data.get("username") or "")


class AccountChangeForm(UserChangeForm):
    def clean_username(self) -> str:
        name = username_normal(self.cleaned_data.get("username") or "")
        if self.instance.pk and name == self.instance.username:
            return name
        return _new_username(name, renaming=self.instance if self.instance.pk else None)


class AccountAdmin(UserAdmin):
    """Django's user admin, with the rule of the annotator screens: only a superuser sees,
    changes (the password included) or deletes the account of an admin or a superuser,
    and only a superuser makes anyone an admin, a superuser or gives permissions. Without
    it a staff member granted ``auth.change_user`` could set a superuser's password, or
    make themselves one. Usernames are checked as the annotator screens check them."""

    add_form = AccountCreationForm
    form = AccountChangeForm
    ONLY_SUPERUSERS_CHANGE = ("is_staff", "is_superuser", "groups", "user_permissions")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        users = super().get_queryset(request)
        if request.user.is_superuser:
            return users
        return users.filter(is_staff=False, is_superuser=False)

    def _manages(self, request: HttpRequest, obj: Any) -> bool:
        return obj is None or user_can_manage_account(request.user, obj)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._manages(request, obj) and super().has_view_permission(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._manages(request, obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._manages(request, obj) and super().has_delete_permission(request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = tuple(super().get_readonly_fields(request, obj))
        if request.user.is_superuser:
            return fields
        return fields + self.ONLY_SUPERUSERS_CHANGE


admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), AccountAdmin)
