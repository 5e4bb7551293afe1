import django.utils.timezone
from django.db import migrations


def rescore_submissions_on_test_questions(apps, schema_editor):
    """Scores on test-split questions (split test or all) were kept under the pairwise
    disclosure rule, which let a combination of three shown breakdown groups give one test
    question's score. Those submissions are queued, together, to be scored again under the
    rule for every linear combination (hctqa.core.disclosure); until then the boards list
    them apart, unranked, and the sweeper hands the re-scoring to the scoring worker. The
    property regression is refreshed by the re-scoring, without the test tables."""
    Submission = apps.get_model("leaderboard", "Submission")
    Rescore = apps.get_model("leaderboard", "Rescore")
    to_rescore = Submission.objects.filter(
        kind="submission", status="scored", split__in=["test", "all"]
    )
    count = to_rescore.count()
    if not count:
        return
    rescore = Rescore.objects.create(
        reason="no combination of the figures shown on test-split questions may rest on 1 "
        "to 10 of them (not only pairs): scoring again under that rule",
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
        ("leaderboard", "0014_inference_prompts_over_the_context"),
    ]

    operations = [
        migrations.RunPython(rescore_submissions_on_test_questions, migrations.RunPython.noop),
    ]
