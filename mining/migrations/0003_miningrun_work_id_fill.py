"""A fresh random work id for each existing run (see 0002)."""

import secrets

from django.db import migrations


def give_each_run_a_work_id(apps, schema_editor):
    MiningRun = apps.get_model("mining", "MiningRun")
    for pk in MiningRun.objects.filter(work_id__isnull=True).values_list("pk", flat=True):
        MiningRun.objects.filter(pk=pk).update(work_id=secrets.token_hex(16))


class Migration(migrations.Migration):
    dependencies = [
        ("mining", "0002_miningrun_work_id"),
    ]

    operations = [
        migrations.RunPython(give_each_run_a_work_id, migrations.RunPython.noop),
    ]
