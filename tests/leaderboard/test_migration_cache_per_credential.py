"""The upgrade to a cache per credential: answers cached under the old key, which named no
credential, are all forgotten, so none of them reaches another person."""

from __future__ import annotations

import pytest

from tests.migration_helpers import latest, migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("leaderboard", "0011_scores_withhold_figures_on_few_test_answers")]


def test_answers_cached_without_a_credential_are_forgotten() -> None:
    old = migrate(BEFORE)
    CachedResponse = old.get_model("leaderboard", "CachedResponse")
    for i in range(3):
        CachedResponse.objects.create(
            key=f"{i:064d}",
            model_name="m",
            base_url="https://own.example/v1",
            prompt_sha256="0" * 64,
            response="a private answer",
        )

    new = migrate(latest())
    assert not new.get_model("leaderboard", "CachedResponse").objects.exists()
