from django.db import migrations


def fold_servings_into_assignments(apps, schema_editor):
    """Check keys used to be served by next-key outside every assignment (a
    ``CheckServing`` row and no ``AssignmentKey``). They are keys of an assignment now:
    each served check, submitted or not, becomes a check key of the assignment it was
    served under (or, where that assignment is gone, of the annotator's oldest
    assignment of the key's study), so that its annotator still reaches it and it counts
    in their assignment like any check given from now on. A serving with no such
    assignment stays a record only (the key is not given again)."""
    CheckServing = apps.get_model("annotate", "CheckServing")
    Assignment = apps.get_model("annotate", "Assignment")
    AssignmentKey = apps.get_model("annotate", "AssignmentKey")
    held = set(AssignmentKey.objects.values_list("assignment__annotator_id", "key_id"))
    rows = []
    for serving in CheckServing.objects.select_related("key").order_by("id").iterator():
        if (serving.annotator_id, serving.key_id) in held:
            continue
        assignment_id = serving.assignment_id
        if assignment_id is None:
            assignment_id = (
                Assignment.objects.filter(
                    annotator_id=serving.annotator_id, batch__study_id=serving.key.study_id
                )
                .order_by("created_at", "id")
                .values_list("id", flat=True)
                .first()
            )
            if assignment_id is None:
                continue
            serving.assignment_id = assignment_id
            serving.save(update_fields=["assignment"])
        rows.append(AssignmentKey(assignment_id=assignment_id, key_id=serving.key_id, is_check=True))
        held.add((serving.annotator_id, serving.key_id))
    AssignmentKey.objects.bulk_create(rows, ignore_conflicts=True)


def unfold(apps, schema_editor):
    apps.get_model("annotate", "AssignmentKey").objects.filter(is_check=True).delete()


class Migration(migrations.Migration):
    # Apart from the schema change: on PostgreSQL, rows written in the migration that
    # adds an indexed foreign key would hold back its deferred CREATE INDEX.

    dependencies = [
        ("annotate", "0011_check_keys_given_with_keys"),
    ]

    operations = [
        migrations.RunPython(fold_servings_into_assignments, unfold),
    ]
