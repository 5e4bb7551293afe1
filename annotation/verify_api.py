"""REST API of the verification workflow: claim, renew, submit and release slots; adjudicate;
the dashboard; question-generation runs. The verification page's script uses it too."""

from __future__ import annotations

import uuid
from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import permissions as rules
from annotation import selectors, services
from annotation.models import GenerationRun, Rating
from plumbing.api import ConflictOutput, ErrorOutput, StrictInput
from plumbing.jobs import RunStatus
from plumbing.pagination import CountedPagination, page_serializer
from plumbing.permissions import api_rule

SKIPPED_KEY = "verify_skipped"


# --- What the API answers ----------------------------------------------------------------


class SlotOutput(serializers.Serializer):
    """A question to verify: the same for gold and regular slots (nothing says which)."""

    slot = serializers.UUIDField()
    table_id = serializers.CharField()
    question = serializers.CharField()
    proposed_answer = serializers.CharField()
    lease_expires_at = serializers.DateTimeField()
    url = serializers.CharField()


class RenewedOutput(serializers.Serializer):
    slot = serializers.UUIDField()
    lease_expires_at = serializers.DateTimeField()


class VerdictSavedOutput(serializers.Serializer):
    slot = serializers.UUIDField()
    saved = serializers.BooleanField()
    removed_from_pool = serializers.BooleanField(
        help_text="The verdict failed gold control once too often: no more slots."
    )
    next = SlotOutput(allow_null=True, help_text="The next slot, in the same round trip.")


class ReleasedOutput(serializers.Serializer):
    slot = serializers.UUIDField()
    next = SlotOutput(allow_null=True)


class _Verdict(serializers.Serializer):
    annotator = serializers.CharField(allow_null=True)
    rating = serializers.ChoiceField(choices=Rating.choices)
    answer_correct = serializers.BooleanField(allow_null=True)
    corrected_answer = serializers.CharField()
    rewritten_question = serializers.CharField()


class _Disputed(serializers.Serializer):
    question_id = serializers.CharField()
    table_id = serializers.CharField()
    question = serializers.CharField()
    proposed_answer = serializers.CharField()
    verdicts = _Verdict(many=True)


class AdjudicationQueueOutput(serializers.Serializer):
    waiting = serializers.IntegerField()
    questions = _Disputed(many=True)


class AdjudicatedOutput(serializers.Serializer):
    question_id = serializers.CharField()
    status = serializers.CharField()
    text = serializers.CharField()


class _Share(serializers.Serializer):
    key = serializers.CharField()
    count = serializers.IntegerField()
    share = serializers.FloatField(allow_null=True)
    paper = serializers.FloatField(help_text="The paper's share (Section 3.2).")


class _PairKappa(serializers.Serializer):
    a = serializers.CharField()
    b = serializers.CharField()
    questions = serializers.IntegerField()
    cohen_kappa = serializers.FloatField(allow_null=True)


class _Verifier(serializers.Serializer):
    username = serializers.CharField()
    verified = serializers.IntegerField()
    last_day = serializers.IntegerField()
    per_hour = serializers.FloatField(allow_null=True)
    removed_at = serializers.DateTimeField(allow_null=True)
    removal_reason = serializers.CharField()
    gold_seen = serializers.IntegerField(required=False, help_text="Admins only.")
    gold_accuracy = serializers.FloatField(required=False, allow_null=True)
    gold_right_flagged_wrong = serializers.IntegerField(required=False)
    gold_wrong_accepted = serializers.IntegerField(required=False)


class _Queue(serializers.Serializer):
    label = serializers.CharField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    percent = serializers.IntegerField(help_text="Rounded down: 100 only when none is left.")


class GoldSummaryOutput(serializers.Serializer):
    pool = serializers.IntegerField()
    serving = serializers.BooleanField()
    gold_percent = serializers.IntegerField()
    wrong_percent = serializers.IntegerField()
    verdicts = serializers.IntegerField()
    verdicts_on_wrong_answers = serializers.IntegerField()
    passed = serializers.IntegerField()
    max_nonsensical = serializers.IntegerField()
    max_right_flagged_wrong = serializers.IntegerField()
    max_wrong_accepted = serializers.IntegerField()


class DashboardOutput(serializers.Serializer):
    decided = serializers.IntegerField()
    shares = _Share(many=True)
    krippendorff_alpha = serializers.FloatField(allow_null=True)
    alpha_questions = serializers.IntegerField()
    pairs = _PairKappa(many=True)
    verifiers = _Verifier(many=True)
    queues = _Queue(many=True)
    questions_by_status = serializers.DictField(child=serializers.IntegerField())
    gold_control = GoldSummaryOutput(required=False, help_text="Admins only.")


class PoolChangeOutput(serializers.Serializer):
    changed = serializers.ListField(child=serializers.CharField())
    unchanged = serializers.ListField(child=serializers.CharField())


class _GoldVerdict(serializers.Serializer):
    submitted_at = serializers.DateTimeField(allow_null=True)
    annotator = serializers.CharField(allow_null=True)
    question_id = serializers.CharField()
    gold_answer = serializers.CharField()
    shown_answer = serializers.CharField()
    shown_answer_wrong = serializers.BooleanField()
    rating = serializers.ChoiceField(choices=Rating.choices, allow_null=True)
    answer_correct = serializers.BooleanField(allow_null=True)
    corrected_answer = serializers.CharField()
    passed = serializers.BooleanField(allow_null=True)
    failure = serializers.CharField()


class GoldVerdictsOutput(serializers.Serializer):
    verdicts = _GoldVerdict(many=True)


class GenerationRunOutput(serializers.Serializer):
    id = serializers.IntegerField()
    model = serializers.CharField()
    endpoint = serializers.CharField()
    base_url = serializers.CharField()
    use_images = serializers.BooleanField()
    questions_per_table = serializers.IntegerField()
    status = serializers.ChoiceField(choices=RunStatus.choices)
    state = serializers.CharField(
        help_text="As pages show it: done, partly_failed (some tables got no valid reply), "
        "failed, or its status while not finished."
    )
    error = serializers.CharField()
    tables_total = serializers.IntegerField()
    tables_done = serializers.IntegerField()
    tables_failed = serializers.IntegerField()
    questions_created = serializers.IntegerField()
    progress = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    url = serializers.CharField()


class GenerationRunsOutput(serializers.Serializer):
    runs = GenerationRunOutput(many=True)


def skipped_questions(request: Any) -> list[str]:
    return list(request.session.get(SKIPPED_KEY, []))


def release_and_skip(request: Any, slot_id: int) -> None:
    """Give the slot back, remembering the last few skipped questions in the session so the
    next claim does not hand the same question straight back."""
    held = selectors.verification_slot_held(annotator=request.user, slot_id=slot_id)
    if held is not None:
        request.session[SKIPPED_KEY] = [held.question_id, *skipped_questions(request)][:50]
    services.verification_release(annotator=request.user, slot_id=slot_id)


def claim_payload(request: Any) -> dict[str, Any] | None:
    slot = services.verification_claim(
        annotator=request.user, avoid_questions=skipped_questions(request)
    )
    return selectors.slot_payload(slot) if slot else None


class VerifyClaimApi(APIView):
    """The slot to verify now (the one already held, gold when due, else an open one)."""

    permission_classes = [IsAuthenticated, api_rule(rules.VERIFYING)]

    @extend_schema(
        request=None,
        responses={200: SlotOutput, 204: OpenApiResponse(description="Nothing to verify.")},
    )
    def post(self, request: Request) -> Response:
        payload = claim_payload(request)
        if payload is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(payload)


class VerifyRenewApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(rules.VERIFYING)]

    @extend_schema(request=None, responses={200: RenewedOutput, 409: ConflictOutput})
    def post(self, request: Request, slot_id: uuid.UUID) -> Response:
        expires = services.verification_renew(
            annotator=request.user, slot_id=selectors.verification_slot_pk(public_id=slot_id)
        )
        return Response({"slot": str(slot_id), "lease_expires_at": expires})


class VerdictInput(serializers.Serializer):
    rating = serializers.ChoiceField(choices=Rating.choices)
    answer_correct = serializers.BooleanField()
    corrected_answer = serializers.CharField(required=False, allow_blank=True, default="")
    rewritten_question = serializers.CharField(required=False, allow_blank=True, default="")
    elapsed_ms = serializers.IntegerField(required=False, min_value=0, default=0)


class VerifySubmitApi(APIView):
    """Record a verdict and hand out the next slot in the same round trip."""

    permission_classes = [IsAuthenticated, api_rule(rules.VERIFYING)]

    @extend_schema(
        request=VerdictInput,
        responses={200: VerdictSavedOutput, 400: ErrorOutput, 409: ConflictOutput},
    )
    def post(self, request: Request, slot_id: uuid.UUID) -> Response:
        data = VerdictInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        elapsed = values.pop("elapsed_ms")
        result = services.verification_submit(
            annotator=request.user,
            slot_id=selectors.verification_slot_pk(public_id=slot_id),
            verdict=services.Verdict(**values),
            elapsed_ms=elapsed,
        )
        following = None if result.removed_from_pool else claim_payload(request)
        return Response(
            {
                "slot": str(slot_id),
                "saved": True,
                "removed_from_pool": result.removed_from_pool,
                "next": following,
            }
        )


class VerifyReleaseApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(rules.VERIFYING)]

    @extend_schema(request=None, responses=ReleasedOutput)
    def post(self, request: Request, slot_id: uuid.UUID) -> Response:
        release_and_skip(request, selectors.verification_slot_pk(public_id=slot_id))
        return Response({"slot": str(slot_id), "next": claim_payload(request)})


class AdjudicationListApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(rules.ADJUDICATING)]

    @extend_schema(responses=AdjudicationQueueOutput)
    def get(self, request: Request) -> Response:
        total, items = selectors.adjudication_queue(adjudicator=request.user)
        return Response(
            {
                "waiting": total,
                "questions": [
                    {
                        "question_id": item.question.pk,
                        "table_id": item.question.table_id,
                        "question": item.question.text,
                        "proposed_answer": item.question.gold_answer,
                        "verdicts": [
                            {
                                "annotator": v.annotator.username if v.annotator else None,
                                "rating": v.rating,
                                "answer_correct": v.answer_correct,
                                "corrected_answer": v.corrected_answer,
                                "rewritten_question": v.rewritten_question,
                            }
                            for v in item.verdicts
                        ],
                    }
                    for item in items
                ],
            }
        )


class AdjudicationDecideApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(rules.ADJUDICATING)]

    class Input(serializers.Serializer):
        rating = serializers.ChoiceField(choices=Rating.choices)
        answer = serializers.CharField(required=False, allow_blank=True, default="")
        text = serializers.CharField(required=False, allow_blank=True, default="")

    @extend_schema(
        request=Input,
        responses={200: AdjudicatedOutput, 400: ErrorOutput, 409: ConflictOutput},
    )
    def post(self, request: Request, question_id: str) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        question = services.adjudication_decide(
            adjudicator=request.user, question_id=question_id, **data.validated_data
        )
        return Response(
            {"question_id": question.pk, "status": question.status, "text": question.text}
        )


class VerificationDashboardApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(rules.DASHBOARD)]

    @extend_schema(responses=DashboardOutput)
    def get(self, request: Request) -> Response:
        board = selectors.verification_dashboard(viewer=request.user)
        # Gold figures are for admins only: an adjudicator verifies too, and seeing their own
        # gold count move would tell them which item was gold.
        gold = board.gold is not None
        return Response(
            {
                "decided": board.decided,
                "shares": [
                    {"key": s.key, "count": s.count, "share": s.share, "paper": s.paper}
                    for s in board.shares
                ],
                "krippendorff_alpha": board.alpha,
                "alpha_questions": board.alpha_units,
                "pairs": [
                    {"a": p.a, "b": p.b, "questions": p.questions, "cohen_kappa": p.kappa}
                    for p in board.pairs
                ],
                "verifiers": [
                    {
                        "username": v.username,
                        "verified": v.verified,
                        "last_day": v.last_day,
                        "per_hour": v.per_hour,
                        "removed_at": v.removed_at,
                        "removal_reason": v.reason,
                        **(
                            {
                                "gold_seen": v.gold_seen,
                                "gold_accuracy": v.gold_accuracy,
                                "gold_right_flagged_wrong": v.gold_flagged_right,
                                "gold_wrong_accepted": v.gold_accepted_wrong,
                            }
                            if gold
                            else {}
                        ),
                    }
                    for v in board.verifiers
                ],
                "queues": [
                    {"label": q.label, "done": q.done, "total": q.total, "percent": q.percent}
                    for q in board.queues
                ],
                "questions_by_status": board.status_counts,
                **({"gold_control": gold_summary_payload(board.gold)} if board.gold else {}),
            }
        )


def gold_summary_payload(gold: selectors.GoldControl) -> dict[str, Any]:
    return {
        "pool": gold.pool,
        "serving": gold.serving,
        "gold_percent": gold.gold_percent,
        "wrong_percent": gold.wrong_percent,
        "verdicts": gold.served,
        "verdicts_on_wrong_answers": gold.shown_wrong,
        "passed": gold.passed,
        "max_nonsensical": gold.max_nonsensical,
        "max_right_flagged_wrong": gold.max_wrong_flags,
        "max_wrong_accepted": gold.max_wrong_accepted,
    }


class GoldPoolApi(APIView):
    """The private gold pool, a page at a time, with how often each question was served."""

    permission_classes = [IsAuthenticated, api_rule(rules.GOLD_POOL)]

    class Output(serializers.Serializer):
        id = serializers.CharField()
        table = serializers.CharField(source="table_id")
        text = serializers.CharField()
        gold_answer = serializers.CharField()
        origin = serializers.CharField()
        served = serializers.IntegerField()
        passed = serializers.IntegerField()

    @extend_schema(
        responses=page_serializer(
            "GoldPoolPage", Output, summary=GoldSummaryOutput(help_text="Gold control.")
        )
    )
    def get(self, request: Request) -> Response:
        paginator = CountedPagination()
        page = paginator.paginate_queryset(selectors.gold_pool_questions(), request)
        response = paginator.get_paginated_response(self.Output(page, many=True).data)
        response.data["summary"] = gold_summary_payload(selectors.gold_control_summary())
        return response


class GoldPoolChangeInput(serializers.Serializer):
    question_ids = serializers.ListField(child=serializers.CharField(), allow_empty=False)


class GoldPoolAddApi(APIView):
    """Put questions in the gold pool: all of them, or none (400 with every reason)."""

    permission_classes = [IsAuthenticated, api_rule(rules.GOLD_POOL_CHANGE)]

    @extend_schema(request=GoldPoolChangeInput, responses={200: PoolChangeOutput, 400: ErrorOutput})
    def post(self, request: Request) -> Response:
        data = GoldPoolChangeInput(data=request.data)
        data.is_valid(raise_exception=True)
        change = services.gold_pool_add(admin=request.user, **data.validated_data)
        return Response({"changed": change.changed, "unchanged": change.unchanged})


class GoldPoolRemoveApi(APIView):
    """Take questions out of the gold pool; they become public benchmark questions again."""

    permission_classes = [IsAuthenticated, api_rule(rules.GOLD_POOL_CHANGE)]

    @extend_schema(request=GoldPoolChangeInput, responses={200: PoolChangeOutput, 400: ErrorOutput})
    def post(self, request: Request) -> Response:
        data = GoldPoolChangeInput(data=request.data)
        data.is_valid(raise_exception=True)
        change = services.gold_pool_remove(admin=request.user, **data.validated_data)
        return Response({"changed": change.changed, "unchanged": change.unchanged})


class GoldVerdictsApi(APIView):
    """The latest gold verdicts, each with the answer it showed and how it was graded."""

    permission_classes = [IsAuthenticated, api_rule(rules.GOLD_POOL)]

    @extend_schema(
        parameters=[OpenApiParameter("verifier", str, description="An annotator's username")],
        responses=GoldVerdictsOutput,
    )
    def get(self, request: Request) -> Response:
        verdicts = selectors.gold_verdicts(username=request.query_params.get("verifier", ""))
        return Response(
            {
                "verdicts": [
                    {
                        "submitted_at": v.slot.submitted_at,
                        "annotator": v.slot.annotator.username if v.slot.annotator else None,
                        "question_id": v.slot.question_id,
                        "gold_answer": v.slot.question.gold_answer,
                        "shown_answer": v.slot.gold_shown_answer,
                        "shown_answer_wrong": v.slot.gold_shown_wrong,
                        "rating": v.slot.rating,
                        "answer_correct": v.slot.answer_correct,
                        "corrected_answer": v.slot.corrected_answer,
                        "passed": v.slot.gold_passed,
                        "failure": v.failure,
                    }
                    for v in verdicts
                ]
            }
        )


def run_payload(run: GenerationRun) -> dict[str, Any]:
    return {
        "id": run.pk,
        "model": run.model,
        "endpoint": run.endpoint.name,
        "base_url": run.base_url,
        "use_images": run.use_images,
        "questions_per_table": run.questions_per_table,
        "status": run.status,
        "state": run.state,
        "error": run.error,
        "tables_total": run.tables_total,
        "tables_done": run.tables_done,
        "tables_failed": run.tables_failed,
        "questions_created": run.questions_created,
        "progress": run.progress,
        "created_at": run.created_at,
        "finished_at": run.finished_at,
        "url": reverse("annotate:generation_run", args=[run.pk]),
    }


class GenerationRunsApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(rules.GENERATING)]

    class Input(StrictInput):
        retired = {
            "base_url": "No longer taken: choose a registered `endpoint` by name",
            "api_key_env": "No longer taken: choose a registered `endpoint` by name",
        }
        endpoint = serializers.CharField(help_text="The name of a registered endpoint.")
        model = serializers.CharField()
        table_ids = serializers.ListField(child=serializers.CharField(), allow_empty=True)
        use_images = serializers.BooleanField(required=False, default=False)
        questions_per_table = serializers.IntegerField(required=False, default=8)

    @extend_schema(operation_id="verify_generation_runs_list", responses=GenerationRunsOutput)
    def get(self, request: Request) -> Response:
        runs = selectors.generation_runs()
        return Response({"runs": [run_payload(r) for r in runs]})

    @extend_schema(request=Input, responses={201: GenerationRunOutput, 400: ErrorOutput})
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        run = services.generation_run_create(user=request.user, **data.validated_data)
        return Response(run_payload(run), status=status.HTTP_201_CREATED)


class GenerationRunApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(rules.GENERATING)]

    @extend_schema(responses=GenerationRunOutput)
    def get(self, request: Request, run_id: int) -> Response:
        run = selectors.generation_run_get(run_id=run_id)
        if run is None:
            raise NotFound(f"No generation run {run_id}")
        return Response(run_payload(run))


class GenerationCancelApi(APIView):
    permission_classes = [IsAuthenticated, api_rule(rules.GENERATING)]

    @extend_schema(request=None, responses={200: GenerationRunOutput, 409: ConflictOutput})
    def post(self, request: Request, run_id: int) -> Response:
        if selectors.generation_run_get(run_id=run_id) is None:
            raise NotFound(f"No generation run {run_id}")
        run = services.generation_run_cancel(user=request.user, run_id=run_id)
        return Response(run_payload(run))
