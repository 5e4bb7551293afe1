import django.utils.timezone
from django.db import migrations


def rescore_submissions_on_test_questions(apps, schema_editor):
    """The disclosure rule counted an empty answer as unknown to a reader, but an empty
    answer scores 0 and readers can tell which answers an inference run left empty (the
    prompts over the model's context). Submissions scored on test-split questions are queued
    to be scored again with empty answers counted as known; until then the boards list them
    apart, unranked."""
    Submission = apps.get_model("leaderboard", "Submission")
    Rescore = apps.get_model("leaderboard", "Rescore")
    to_rescore = Submission.objects.filter(
        kind="submission", status="scored", split__in=["test", "all"]
    )
    count = to_rescore.count()
    if not count:
        return
    rescore = Rescore.objects.create(
        reason="an empty answer is known to score 0, so no figure shown may rest on the "
        "other answers of 1 to 10 test questions: scoring again under that rule",
        total=count,
        status="queued",
    )
    to_rescore.update(
        status="queued",
        stale=True,
        rescore=rescore,
        progress=0,
        attempts=0,
        error="",
        queued_at=django.utils.timezone.now(),
        started_at=None,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0015_rescore_under_linear_disclosure"),
    ]

    operations = [
        migrations.RunPython(rescore_submissions_on_test_questions, migrations.RunPython.noop),
    ]
