"""Re-scorings and inference runs: who sees a run, its problems, its public recipe."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404

from leaderboard.models import InferenceResponse, InferenceRun, Rescore, ResponseStatus, Submission
from leaderboard.selectors.questions import User

# --- Re-scoring ----------------------------------------------------------------------------


def rescores_recent(*, limit: int = 20) -> list[Rescore]:
    return list(Rescore.objects.order_by("-created_at", "-id")[:limit])


# --- Inference runs ------------------------------------------------------------------------


def can_manage_run(*, user: User, run: InferenceRun) -> bool:
    if not user.is_authenticated:
        return False
    return run.created_by_id == user.pk or user.has_perm("leaderboard.change_inferencerun")


def inference_runs_for(*, user: User) -> QuerySet[InferenceRun]:
    """The user's own runs; admins see everyone's (they share the GPU host)."""
    runs = InferenceRun.objects.select_related("created_by", "submission", "endpoint").defer(
        "config"
    )
    if not user.has_perm("leaderboard.change_inferencerun"):
        runs = runs.filter(created_by=user)
    return runs.order_by("-created_at", "-id")


def inference_run_for_viewer(*, run_id: int, user: User) -> InferenceRun:
    """A run for its owner and admins; a 404 for anyone else, so runs do not reveal that
    they exist."""
    try:
        run = InferenceRun.objects.select_related("created_by", "submission", "endpoint").get(
            pk=run_id
        )
    except InferenceRun.DoesNotExist:
        raise Http404("No such inference run") from None
    if not can_manage_run(user=user, run=run):
        raise Http404("No such inference run")
    return run


def inference_run_problems(*, run: InferenceRun, limit: int = 5) -> list[InferenceResponse]:
    """The latest questions that got no answer, with the reason (never a gold answer)."""
    return list(
        InferenceResponse.objects.filter(run=run)
        .exclude(status=ResponseStatus.ANSWERED)
        .exclude(question__in_gold_pool=True)
        .select_related("item")
        .only("question_id", "item__item_id", "status", "error", "attempts", "created_at")
        .order_by("-created_at", "-id")[:limit]
    )


# What the public may read about how a submission's answers were produced: everything
# but where the endpoint lives and what it is called.
_PRIVATE_CONFIG_KEYS = frozenset({"base_url", "api_key_env", "registered_endpoint", "concurrency"})


def answers_run(*, submission: Submission) -> InferenceRun | None:
    """The inference run on this platform that produced the submission's answers, if one
    did (an upload has none)."""
    return InferenceRun.objects.filter(submission=submission).first()


def inference_recipe(*, run: InferenceRun | None) -> dict[str, Any] | None:
    """The configuration of the run that produced a submission, without where it ran."""
    if run is None:
        return None
    return {k: v for k, v in run.config.items() if k not in _PRIVATE_CONFIG_KEYS}
