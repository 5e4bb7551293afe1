from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from hctqa.settings import env_bool, env_int, env_list, env_percent


def test_booleans_accept_the_usual_spellings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAG", "Yes")
    assert env_bool("FLAG", False) is True
    monkeypatch.setenv("FLAG", "0")
    assert env_bool("FLAG", True) is False


def test_a_bad_value_stops_start_up_with_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEBUG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="DEBUG should be true or false, not 'maybe'"):
        env_bool("DEBUG", False)
    monkeypatch.setenv("CELERY_TASK_TIME_LIMIT", "ten")
    with pytest.raises(
        ImproperlyConfigured, match="CELERY_TASK_TIME_LIMIT should be a whole number"
    ):
        env_int("CELERY_TASK_TIME_LIMIT", 1)


def test_lists_split_on_commas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOWED_HOSTS", "a.org, b.org,,")
    assert env_list("ALLOWED_HOSTS", []) == ["a.org", "b.org"]


def test_percentages_stay_between_0_and_100(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIFICATION_GOLD_WRONG_PERCENT", "150")
    with pytest.raises(ImproperlyConfigured, match="from 0 to 100, not 150"):
        env_percent("VERIFICATION_GOLD_WRONG_PERCENT", 50)
    monkeypatch.setenv("VERIFICATION_GOLD_WRONG_PERCENT", "0")
    assert env_percent("VERIFICATION_GOLD_WRONG_PERCENT", 50) == 0
