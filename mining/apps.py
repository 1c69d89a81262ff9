from django.apps import AppConfig


class MiningConfig(AppConfig):
    name = "mining"
    verbose_name = "Mining"
    default_auto_field = "django.db.models.BigAutoField"
