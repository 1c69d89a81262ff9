"""Work ids are required and unique (see 0002)."""

from django.db import migrations, models

import mining.models


class Migration(migrations.Migration):
    dependencies = [
        ("mining", "0003_miningrun_work_id_fill"),
    ]

    operations = [
        migrations.AlterField(
            model_name="miningrun",
            name="work_id",
            field=models.CharField(
                default=mining.models.new_work_id, editable=False, max_length=32, unique=True
            ),
        ),
    ]
