"""A run's heartbeat (a worker's last sign of life) and its re-queue count; the worker
that mined each shard."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('mining', '0004_miningrun_work_id_unique'),
    ]

    operations = [
        migrations.AddField(
            model_name='miningrun',
            name='heartbeat_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='miningrun',
            name='requeues',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='miningshard',
            name='worker',
            field=models.CharField(blank=True, max_length=300),
        ),
        migrations.AddIndex(
            model_name='miningrun',
            index=models.Index(fields=['status', 'heartbeat_at'], name='run_status_heartbeat'),
        ),
    ]
