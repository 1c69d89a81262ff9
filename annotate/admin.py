from django.contrib import admin

from .models import (
    Annotation,
    AnnotationEvent,
    Assignment,
    AssignmentKey,
    Batch,
    Key,
    Pattern,
    Study,
    TriggerPrefix,
)


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["name", "model_name", "corpus", "top_k", "n_layers", "created_at"]
    search_fields = ["name", "model_name"]


@admin.register(Key)
class KeyAdmin(admin.ModelAdmin):
    list_display = ["study", "layer", "index", "density", "max_coefficient"]
    list_filter = ["study", "layer"]
    list_select_related = ["study"]


@admin.register(TriggerPrefix)
class TriggerPrefixAdmin(admin.ModelAdmin):
    list_display = ["key", "rank", "coefficient", "trigger_token", "text"]
    list_select_related = ["key__study"]
    raw_id_fields = ["key"]


@admin.register(Batch)
class BatchAdmin(admin.ModelAdmin):
    list_display = ["name", "study", "created_at"]
    filter_horizontal = ["keys"]


class AssignmentKeyInline(admin.TabularInline):
    model = AssignmentKey
    raw_id_fields = ["key"]
    extra = 0


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["batch", "annotator", "created_at"]
    list_select_related = ["batch__study", "annotator"]
    inlines = [AssignmentKeyInline]


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ["key", "annotator", "status", "version", "updated_at"]
    list_filter = ["status"]
    list_select_related = ["key__study", "annotator"]


@admin.register(Pattern)
class PatternAdmin(admin.ModelAdmin):
    list_display = ["annotation", "kind", "description", "updated_at"]
    list_filter = ["kind"]
    list_select_related = ["annotation__key__study", "annotation__annotator"]
    raw_id_fields = ["annotation"]
    filter_horizontal = ["prefixes"]


@admin.register(AnnotationEvent)
class AnnotationEventAdmin(admin.ModelAdmin):
    """The audit trail is read-only: it records what happened."""

    list_display = ["annotation", "action", "actor", "at"]
    list_filter = ["action"]
    list_select_related = ["annotation__key", "annotation__annotator", "actor"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
