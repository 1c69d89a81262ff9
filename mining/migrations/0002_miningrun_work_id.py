"""Every run gets a random work id naming its work folder (docs/mining.md,
"Runs, shards and the merge"), in three steps.

The column comes without its default: a callable default would be called once and give
every existing row the same id. 0003 gives each row its own, 0004 makes it unique. The
steps are separate migrations: PostgreSQL refuses to alter a table in the transaction
that updated its rows ("pending trigger events").
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("mining", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="miningrun",
            name="work_id",
            field=models.CharField(editable=False, max_length=32, null=True),
        ),
    ]
