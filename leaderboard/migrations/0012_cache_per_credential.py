"""The response cache is shared only under the same credential (issue 23). Answers cached
before were keyed without one: any of them may be a researcher's private answer, or one made
with a registered endpoint's key, so none is kept (a later run asks the endpoint again)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def forget_unscoped_answers(apps, schema_editor):
    apps.get_model("leaderboard", "CachedResponse").objects.all().delete()


class Migration(migrations.Migration):

    dependencies = [
        ('endpoints', '0001_initial'),
        ('leaderboard', '0011_scores_withhold_figures_on_few_test_answers'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(forget_unscoped_answers, migrations.RunPython.noop),
        migrations.AddField(
            model_name='cachedresponse',
            name='endpoint',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='endpoints.endpoint'),
        ),
        migrations.AddField(
            model_name='cachedresponse',
            name='owner',
            field=models.ForeignKey(blank=True, help_text="Made on this person's own endpoint.", null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddConstraint(
            model_name='cachedresponse',
            constraint=models.CheckConstraint(condition=models.Q(('endpoint__isnull', True), ('owner__isnull', True), _connector='XOR'), name='cached_response_endpoint_or_owner'),
        ),
    ]
