from django.db import migrations

from accounts.usernames import username_skeleton


def skeletons_without_combining_marks(apps, schema_editor):
    """Skeletons now drop combining marks (``researcher`` with U+0301 is ``researcher``):
    every account's is taken again. Of two older users whose names now share one, the first
    keeps it, as when the accounts were made (0001)."""
    Account = apps.get_model("accounts", "Account")
    accounts = list(Account.objects.select_related("user").order_by("user_id"))
    # Cleared first: a new skeleton may be one another row holds until it is changed too.
    Account.objects.update(username_skeleton=None)
    taken = set()
    for account in accounts:
        skeleton = username_skeleton(account.user.username)
        account.username_skeleton = None if skeleton in taken else skeleton
        taken.add(skeleton)
    Account.objects.bulk_update(accounts, ["username_skeleton"], batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_username_skeletons_and_test_split_approval"),
    ]

    operations = [
        migrations.RunPython(skeletons_without_combining_marks, migrations.RunPython.noop),
    ]
