from django.contrib import admin

from .models import Annotation, Assignment, Batch, Key, Study, TriggerPrefix


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


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["batch", "annotator", "created_at"]
    list_select_related = ["batch__study", "annotator"]


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ["key", "annotator", "status", "version", "updated_at"]
    list_filter = ["status"]
    list_select_related = ["key__study", "annotator"]
