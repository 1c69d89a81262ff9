from django.db import migrations

ANNOTATOR_GROUP = "annotator"


def create_group(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Group.objects.get_or_create(name=ANNOTATOR_GROUP)


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(create_group, migrations.RunPython.noop)]
