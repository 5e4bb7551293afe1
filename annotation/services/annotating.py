"""Writes to the dataset."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from annotation import permissions as rules
from annotation.models import (
    AnnotationSkip,
    AnnotationSource,
    AnnotationTool,
    PropertyAnnotation,
    QuestionAuthoring,
    QuestionDraft,
)
from annotation.selectors.annotating import question_change_allowed
from dataset.models import Question, Table
from dataset.selectors import questions_visible
from dataset.services import NewQuestion, questions_add
from hctqa.core import taxonomy
from hctqa.core.answers import (
    AnswerFormatError,
    answer_fits_question,
    canonical_answer,
    parse_answer,
)
from hctqa.core.query_templates import TEMPLATES
from hctqa.core.similarity import near_duplicates
from plumbing.errors import ApplicationError, ConflictError

# --- Annotation work -----------------------------------------------------------------------

# Active time reported by a client is capped per request: a tab left open overnight is not
# hours of annotation.
_MAX_ELAPSED_MS = 30 * 60 * 1000


def _seconds(elapsed_ms: int) -> int:
    return max(0, min(int(elapsed_ms), _MAX_ELAPSED_MS)) // 1000


def _normalized(tax: taxonomy.Taxonomy, values: Mapping[str, object], field: str) -> dict[str, Any]:
    try:
        return taxonomy.normalize(tax, values)
    except taxonomy.PropertyError as exc:
        raise ApplicationError(str(exc), field=field) from None


def _consistent(tax: taxonomy.Taxonomy, values: dict[str, Any], field: str) -> None:
    problems = taxonomy.check(tax, values)
    if problems:
        raise ApplicationError(" ".join(p.message for p in problems), field=field)
    if not any(v is True for v in values.values()):
        hint = (
            " (Standard relational table when none of the others applies)"
            if tax is taxonomy.TABLE_PROPERTIES
            else ""
        )
        raise ApplicationError(f"Choose at least one property{hint}", field=field)


def _annotation_state(row: PropertyAnnotation) -> dict[str, Any]:
    return {
        "version": row.version,
        "properties": row.properties,
        "saved_at": row.saved_at.isoformat() if row.saved_at else None,
    }


@dataclass(frozen=True)
class DraftResult:
    accepted: bool  # False: a newer draft was already kept
    version: int


def _locked_annotation(annotator: Any, table: Table) -> PropertyAnnotation:
    row, _ = PropertyAnnotation.objects.get_or_create(
        table=table, annotator=annotator, source=AnnotationSource.ANNOTATOR
    )
    return PropertyAnnotation.objects.select_for_update().get(pk=row.pk)


@transaction.atomic
def property_draft_save(
    *,
    annotator: Any,
    table: Table,
    properties: Mapping[str, object],
    base_version: int,
    client_ms: int,
    elapsed_ms: int = 0,
) -> DraftResult:
    """Keep an unsaved annotation. Refused (409) when the annotation was saved since the
    draft began; ignored when a draft written later is already kept."""
    rules.PROPERTY_TOOL.check(annotator)
    values = _normalized(taxonomy.TABLE_PROPERTIES, properties, "properties")
    row = _locked_annotation(annotator, table)
    if base_version != row.version:
        raise ConflictError(
            "This annotation was saved in another tab or window since you opened it",
            current=_annotation_state(row),
        )
    if (
        row.has_unsaved_draft
        and row.draft_client_ms is not None
        and client_ms <= row.draft_client_ms
    ):
        return DraftResult(accepted=False, version=row.version)
    row.draft = values
    row.draft_base_version = base_version
    row.draft_client_ms = client_ms
    row.draft_saved_at = timezone.now()
    row.seconds_spent += _seconds(elapsed_ms)
    row.save()
    return DraftResult(accepted=True, version=row.version)


@transaction.atomic
def property_annotation_save(
    *,
    annotator: Any,
    table: Table,
    properties: Mapping[str, object],
    base_version: int,
    elapsed_ms: int = 0,
) -> PropertyAnnotation:
    """Save an annotator's table properties. Contradictory sets are refused; so is a save
    based on an older version, unless it saves what is already there (a retried request)."""
    rules.PROPERTY_TOOL.check(annotator)
    values = _normalized(taxonomy.TABLE_PROPERTIES, properties, "properties")
    _consistent(taxonomy.TABLE_PROPERTIES, values, "properties")
    row = _locked_annotation(annotator, table)
    if row.version != base_version:
        if row.version > 0 and row.properties == values:
            return row
        raise ConflictError(
            "This annotation was saved in another tab or window since you opened it",
            current=_annotation_state(row),
        )
    row.properties = values
    row.version += 1
    row.saved_at = timezone.now()
    row.draft = None
    row.draft_base_version = None
    row.draft_client_ms = None
    row.seconds_spent += _seconds(elapsed_ms)
    row.save()
    AnnotationSkip.objects.filter(
        annotator=annotator, table=table, tool=AnnotationTool.PROPERTIES
    ).delete()
    return row


@transaction.atomic
def annotation_skip(*, annotator: Any, table: Table, tool: str) -> None:
    """Move a table to the back of this annotator's queue for one tool."""
    tool_rule = rules.PROPERTY_TOOL if tool == AnnotationTool.PROPERTIES else rules.QUESTION_TOOL
    tool_rule.check(annotator)
    if tool not in AnnotationTool.values:
        raise ApplicationError(f"Tool should be one of {', '.join(AnnotationTool.values)}")
    skip, created = AnnotationSkip.objects.get_or_create(
        annotator=annotator, table=table, tool=tool
    )
    if not created:
        skip.save(update_fields=["created_at"])  # skipped again: back of the queue again


@transaction.atomic
def table_properties_resolve(
    *, adjudicator: Any, table: Table, properties: Mapping[str, object]
) -> PropertyAnnotation:
    """Decide a table's properties where annotations disagree; they become the table's."""
    rules.ADJUDICATION_TOOL.check(adjudicator)
    values = _normalized(taxonomy.TABLE_PROPERTIES, properties, "properties")
    _consistent(taxonomy.TABLE_PROPERTIES, values, "properties")
    locked = Table.objects.select_for_update().get(pk=table.pk)
    # As with verified questions: a party to the disagreement does not decide it.
    if PropertyAnnotation.objects.filter(
        table=locked, annotator=adjudicator, source=AnnotationSource.ANNOTATOR, version__gt=0
    ).exists():
        raise PermissionDenied("You annotated this table yourself: another adjudicator resolves it")
    now = timezone.now()
    row, created = PropertyAnnotation.objects.get_or_create(
        table=locked,
        source=AnnotationSource.RESOLUTION,
        defaults={"annotator": adjudicator, "properties": values, "version": 1, "saved_at": now},
    )
    if not created:
        row.annotator = adjudicator
        row.properties = values
        row.version += 1
        row.saved_at = now
        row.save()
    locked.table_properties = values
    locked.save(update_fields=["table_properties", "updated_at"])
    return row


# --- Writing questions ---------------------------------------------------------------------


def _lock_table(table: Table) -> Table:
    return Table.objects.select_for_update().only("id").get(pk=table.pk)


@transaction.atomic
def question_draft_save(
    *,
    annotator: Any,
    table: Table,
    client_key: uuid.UUID,
    text: str,
    gold_answer: str,
    query_properties: Mapping[str, object],
    template: str = "",
    client_ms: int,
    elapsed_ms: int = 0,
) -> DraftResult:
    """Keep a question being written. A draft for a question already saved is refused
    (409), and a draft written earlier than the one kept is ignored."""
    rules.QUESTION_TOOL.check(annotator)
    values = _normalized(taxonomy.QUERY_PROPERTIES, query_properties, "query_properties")
    # The table's lock orders this draft against a save of the same question: a draft that
    # arrives just after the save sees it and is refused, instead of outliving it.
    _lock_table(table)
    saved = (
        QuestionAuthoring.objects.filter(client_key=client_key)
        .values_list("question_id", flat=True)
        .first()
    )
    if saved:
        raise ConflictError("This question was already saved", current={"question_id": saved})
    draft = (
        QuestionDraft.objects.select_for_update().filter(annotator=annotator, table=table).first()
    )
    if draft is not None and client_ms <= draft.client_ms:
        return DraftResult(accepted=False, version=0)
    seconds = _seconds(elapsed_ms)
    if draft is None:
        QuestionDraft.objects.create(
            annotator=annotator,
            table=table,
            client_key=client_key,
            text=text,
            gold_answer=gold_answer,
            query_properties=values,
            template=template,
            client_ms=client_ms,
            seconds_spent=seconds,
        )
    else:
        if draft.client_key != client_key:
            draft.seconds_spent = 0  # another question in progress replaces this one
        draft.client_key = client_key
        draft.text = text
        draft.gold_answer = gold_answer
        draft.query_properties = values
        draft.template = template
        draft.client_ms = client_ms
        draft.seconds_spent += seconds
        draft.save()
    return DraftResult(accepted=True, version=0)


def _question_fields(
    text: str, gold_answer: str, query_properties: Mapping[str, object]
) -> tuple[str, str, dict[str, Any]]:
    """The question's text, canonical gold answer and query properties, checked."""
    question_text = " ".join(text.split())
    if not question_text:
        raise ApplicationError("Write the question", field="text")
    if len(question_text) > 1000:
        raise ApplicationError("A question is at most 1,000 characters", field="text")
    try:
        canonical = canonical_answer(gold_answer)
    except AnswerFormatError as exc:
        raise ApplicationError(str(exc), field="gold_answer") from None
    values = _normalized(taxonomy.QUERY_PROPERTIES, query_properties, "query_properties")
    _consistent(taxonomy.QUERY_PROPERTIES, values, "query_properties")
    mismatch = answer_fits_question(parse_answer(canonical), yes_no=bool(values.get("yes_no")))
    if mismatch:
        raise ApplicationError(mismatch, field="gold_answer")
    return question_text, canonical, values


def _refuse_near_duplicate(
    annotator: Any, table: Table, text: str, *, besides: str | None = None
) -> None:
    existing = (
        questions_visible(user=annotator)
        .filter(table=table)
        .exclude(pk=besides or "")
        .values_list("id", "text")
    )
    alike = near_duplicates(text, existing)
    if alike:
        first = alike[0]
        raise ApplicationError(
            f"This question is nearly the same as {first.question_id} "
            f"({round(100 * first.score)}% alike): “{first.text}”. Reword it, or save again "
            "to keep it anyway",
            field="near_duplicate",
            details=[f"{d.question_id}: {d.text}" for d in alike],
        )


@transaction.atomic
def question_write(
    *,
    annotator: Any,
    table: Table,
    client_key: uuid.UUID,
    text: str,
    gold_answer: str,
    query_properties: Mapping[str, object],
    template: str = "",
    elapsed_ms: int = 0,
    confirm_near_duplicate: bool = False,
) -> Question:
    """Save a human-written question with its gold answer and query properties.

    Idempotent on ``client_key``: a retried save returns the question already saved. A
    near-duplicate of a question the table already has (that this annotator can see) is
    refused with a warning, unless ``confirm_near_duplicate`` says to keep it anyway.
    """
    rules.QUESTION_TOOL.check(annotator)
    locked = _lock_table(table)  # one new id at a time per table; retries wait for the first
    done = (
        QuestionAuthoring.objects.filter(client_key=client_key).select_related("question").first()
    )
    if done is not None:
        if done.annotator_id != annotator.pk or done.question.table_id != table.pk:
            raise ConflictError(
                "This question key belongs to another question; reload the page",
                current={"question_id": None},
            )
        return done.question
    question_text, canonical, values = _question_fields(text, gold_answer, query_properties)
    if template and template not in {t.code for t in TEMPLATES}:
        raise ApplicationError(f"Unknown template {template!r}", field="template")
    if not confirm_near_duplicate:
        _refuse_near_duplicate(annotator, locked, question_text)

    (question,) = questions_add(
        table=locked,
        kind="M",
        questions=[
            NewQuestion(
                text=question_text,
                gold_answer=canonical,
                origin=Question.Origin.HUMAN,
                # Written by an annotator who checked it against the table, as in the paper.
                status=Question.Status.VERIFIED,
                query_properties=values,
            )
        ],
    )
    draft = QuestionDraft.objects.filter(
        annotator=annotator, table=locked, client_key=client_key
    ).first()
    QuestionAuthoring.objects.create(
        question=question,
        annotator=annotator,
        template=template,
        seconds_spent=(draft.seconds_spent if draft else 0) + _seconds(elapsed_ms),
        client_key=client_key,
    )
    if draft is not None:
        draft.delete()
    AnnotationSkip.objects.filter(
        annotator=annotator, table=locked, tool=AnnotationTool.QUESTIONS
    ).delete()
    return question


@transaction.atomic
def question_change(
    *,
    annotator: Any,
    question_id: str,
    text: str,
    gold_answer: str,
    query_properties: Mapping[str, object],
    base_version: int,
    confirm_near_duplicate: bool = False,
) -> QuestionAuthoring:
    """Change a question this annotator wrote, while that is still allowed. A change based on
    an older version is refused (409) unless it changes nothing (a retried request)."""
    rules.QUESTION_TOOL.check(annotator)
    authoring = (
        QuestionAuthoring.objects.select_for_update()
        .select_related("question")
        .filter(question_id=question_id, annotator=annotator)
        .first()
    )
    if authoring is None:
        raise ApplicationError("You did not write this question", field="question")
    question = authoring.question
    if not question_change_allowed(authoring):
        raise ApplicationError(
            f"Question {question.id} can no longer be changed: questions can be changed for "
            f"{settings.ANNOTATION_CHANGE_WINDOW_HOURS} hours after they are written; flag it "
            "for an adjudicator instead"
        )
    if authoring.version != base_version:
        # A stale page is told so first, whatever it sent; unless it sent what is saved.
        try:
            fields = _question_fields(text, gold_answer, query_properties)
        except ApplicationError:
            fields = None
        if fields == (question.text, question.gold_answer, question.query_properties):
            return authoring
        raise ConflictError(
            "This question was changed in another tab or window since you opened it",
            current={
                "version": authoring.version,
                "text": question.text,
                "gold_answer": question.gold_answer,
            },
        )
    question_text, canonical, values = _question_fields(text, gold_answer, query_properties)
    if (question_text, canonical, values) == (
        question.text,
        question.gold_answer,
        question.query_properties,
    ):
        return authoring
    if not confirm_near_duplicate and question_text != question.text:
        _refuse_near_duplicate(annotator, question.table, question_text, besides=question.pk)
    question.text = question_text
    question.gold_answer = canonical
    question.query_properties = values
    question.save(update_fields=["text", "gold_answer", "query_properties", "updated_at"])
    authoring.version += 1
    authoring.changed_at = timezone.now()
    authoring.save(update_fields=["version", "changed_at"])
    return authoring
