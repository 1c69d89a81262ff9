from django.contrib import admin

from .models import ExportJob


@admin.register(ExportJob)
class ExportJobAdmin(admin.ModelAdmin):
    list_display = ["id", "study", "format", "status", "progress", "created_by", "created_at"]
    list_filter = ["status", "format"]
    list_select_related = ["study", "created_by"]
