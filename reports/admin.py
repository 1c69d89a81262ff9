from django.contrib import admin

from .models import ExportJob


@admin.register(ExportJob)
class ExportJobAdmin(admin.ModelAdmin):
    list_display = ["id", "study", "format", "status", "progress", "created_by", "created_at"]
    list_filter = ["status", "format"]
    list_select_related = ["study", "created_by"]
    # Raw ids, not a <select> of every study and user: a <select> would load every row
    # into one page.
    raw_id_fields = ["study", "created_by"]
