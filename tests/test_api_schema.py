"""The API schema (drf-spectacular, /api/schema/) documents every endpoint's real request and
response (issue 33: sixteen write operations shared one ``Input`` component, eleven ingest
views had no response at all, and loading the docs wrote about 30 warnings to the log).

- The schema generates with no warning or error, and is valid OpenAPI 3.
- For every operation, a call is built from the schema: the path, and a body of the fields
  its request schema names (the required ones, and the few whose value must point at
  something that exists, filled in by the case below). The call must succeed with a status
  the schema lists, and what it answers must match the schema for that status *strictly*:
  every field documented is there, nothing undocumented is, with the documented types.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema

from annotation import services as annotation
from annotation.models import GenerationRun, PropertyAnnotation
from endpoints.models import Endpoint
from hctqa.core import taxonomy
from ingest import services as ingest
from leaderboard.models import InferenceRun
from leaderboard.services import scoring
from releases import services as releases
from tests.factories import (
    LOOKUP_PROPERTIES,
    CollectionFactory,
    InferenceRunFactory,
    ModelQuestionFactory,
    QuestionFactory,
    SubmissionFactory,
    TableFactory,
    UserFactory,
)
from tests.leaderboard.conftest import submit

pytestmark = pytest.mark.django_db

# A real government PDF (the ICDAR 2013 EU set): one page, one table.
PDF = "icdar2013-eu/eu-002.pdf"


def generate() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


@pytest.fixture(scope="module")
def schema(django_db_blocker: Any) -> dict[str, Any]:
    with django_db_blocker.unblock():
        return generate()


def operations(spec: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (method, path): op
        for path, item in spec["paths"].items()
        for method, op in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    }


# --- No warning ------------------------------------------------------------------------------


def test_the_schema_generates_without_a_warning_and_is_valid_openapi(client: Client) -> None:
    GENERATOR_STATS.reset()
    spec = generate()
    assert dict(GENERATOR_STATS._warn_cache) == {}
    assert dict(GENERATOR_STATS._error_cache) == {}
    validate_schema(spec)
    # Served to the docs page, it warns of nothing either (each warning went to web.log).
    GENERATOR_STATS.reset()
    assert client.get("/api/schema/").status_code == 200
    assert not GENERATOR_STATS


def test_no_two_operations_share_an_input_component(schema: dict[str, Any]) -> None:
    names = [
        content["schema"]["$ref"]
        for op in operations(schema).values()
        for content in op.get("requestBody", {}).get("content", {}).values()
        if "$ref" in content["schema"]
    ]
    assert "#/components/schemas/Input" not in names
    # A body documented as a bare object says nothing of its fields.
    for (method, path), op in operations(schema).items():
        for status, response in op["responses"].items():
            for content in response.get("content", {}).values():
                body = content["schema"]
                assert "$ref" in body or "properties" in body or "items" in body, (
                    method,
                    path,
                    status,
                )


# --- Strict schemas --------------------------------------------------------------------------


def strict(node: Any, components: dict[str, Any], direction: str) -> Any:
    """An OpenAPI 3.0 schema as a JSON Schema that refuses what it does not document:
    objects take no other property, ``nullable`` becomes a null alternative, and a response
    leaves out write-only fields (a request, read-only ones)."""
    if isinstance(node, list):
        return [strict(n, components, direction) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return strict(components[node["$ref"].rsplit("/", 1)[1]], components, direction)
    node = copy.copy(node)
    nullable = node.pop("nullable", False)
    skip = "writeOnly" if direction == "response" else "readOnly"
    if "properties" in node:
        properties = {
            k: strict(v, components, direction)
            for k, v in node["properties"].items()
            if not (isinstance(v, dict) and v.get(skip))
        }
        node["properties"] = properties
        node["required"] = [k for k in node.get("required", []) if k in properties]
        node.setdefault("additionalProperties", False)
    # drf-spectacular writes a blank-or-URL field as oneOf two string schemas that both take
    # "": either alternative is what it means.
    if "oneOf" in node:
        node["anyOf"] = node.pop("oneOf")
    for key in ("items", "additionalProperties", "allOf", "anyOf"):
        if isinstance(node.get(key), dict | list):
            node[key] = strict(node[key], components, direction)
    return {"anyOf": [node, {"type": "null"}]} if nullable else node


def check_answer(spec: dict[str, Any], op: dict[str, Any], status: int, body: Any) -> None:
    documented = op["responses"].get(str(status))
    assert documented is not None, f"{status} is not among {sorted(op['responses'])}"
    content = documented.get("content")
    if content is None:
        assert body in (None, b"", ""), body
        return
    (described,) = content.values()
    rule = strict(described["schema"], spec["components"]["schemas"], "response")
    jsonschema.validate(body, rule)


# --- Calls built from the schema -------------------------------------------------------------


def example(node: dict[str, Any], components: dict[str, Any]) -> Any:
    """A value of this schema made from the schema alone."""
    if "$ref" in node:
        return example(components[node["$ref"].rsplit("/", 1)[1]], components)
    for key in ("allOf", "oneOf", "anyOf"):
        if key in node:
            return example(node[key][0], components)
    if "enum" in node:
        return node["enum"][0]
    if "default" in node:
        return node["default"]
    kind = node.get("type")
    if kind == "string":
        return {"uuid": str(uuid.uuid4()), "uri": "https://example.org/"}.get(
            node.get("format", ""), "x"
        )
    if kind == "integer":
        return max(node.get("minimum", 1), 1)
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return False
    if kind == "array":
        return [example(node["items"], components)] * node.get("minItems", 0)
    return {}


@dataclass
class Case:
    """What a call needs beyond the schema: who makes it, the path's parameters, and the
    values of the fields that must point at something real."""

    user: Any
    path: dict[str, Any] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    query: dict[str, Any] = field(default_factory=dict)
    needs: tuple[Any, ...] = ()  # made first: what the call reads


def call(client: Client, spec: dict[str, Any], method: str, path: str, case: Case) -> Any:
    op = operations(spec)[(method, path)]
    url = path.format(**case.path)
    client.force_login(case.user)
    kwargs: dict[str, Any] = {}
    body = op.get("requestBody")
    if body is not None:
        content = body["content"]
        kind = "application/json" if "application/json" in content else next(iter(content))
        described = strict(content[kind]["schema"], spec["components"]["schemas"], "request")
        properties = described.get("properties", {})
        unknown = set(case.values) - set(properties)
        assert not unknown, f"{method} {path}: the schema does not document {unknown}"
        data = {
            name: case.values[name]
            if name in case.values
            else example(properties[name], spec["components"]["schemas"])
            for name in properties
            if name in described.get("required", []) or name in case.values
        }
        if kind == "application/json":
            kwargs = {"data": data, "content_type": "application/json"}
        else:
            kwargs = {"data": data}
    response = getattr(client, method)(url, query_params=case.query, **kwargs)
    assert 200 <= response.status_code < 300, (
        method,
        path,
        response.status_code,
        response.content[:2000],
    )
    answer = response.json() if response.content else None
    check_answer(spec, op, response.status_code, answer)
    return answer


class World:
    """One of everything the API reads and writes, made as a case first asks for it."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir

    @cached_property
    def admin(self) -> Any:
        return UserFactory(username="ada", role="admin", is_superuser=True, is_staff=True)

    @cached_property
    def annotator(self) -> Any:
        return UserFactory(username="ann", role="annotator")

    @cached_property
    def adjudicator(self) -> Any:
        return UserFactory(username="judy", role="adjudicator")

    @cached_property
    def researcher(self) -> Any:
        return UserFactory(username="rita", role="researcher")

    @cached_property
    def table(self) -> Any:
        table = TableFactory(id="psa--1--1", split="train")
        for k in range(3):
            QuestionFactory(table=table, id=f"psa--1--1--M{k}", gold_answer=f"{{answer-{k}}}")
        return table

    @cached_property
    def track_submission(self) -> Any:
        """A public test-split submission to the transformation track, scored: a released
        synthetic table of the test split and its item (its figures withheld: one item)."""
        from dataset.services import release_import
        from hctqa.core.release import read_synthetic_zip
        from hctqa.core.splits import split_for_table
        from leaderboard.services.submissions import SubmissionInput, submission_create
        from tracks.models import TrackItem
        from tracks.services.items import items_build

        family = read_synthetic_zip(self.data_dir / "hctqa-synthetic" / "Number_of_students.zip")
        release_import(tables=[t for t in family if split_for_table(t.id) == "test"][:1])
        items_build(tracks=["transformation"])
        item = TrackItem.objects.get(track="transformation")
        line = json.dumps({"id": item.item_id, "prediction": item.gold}).encode()
        data = SubmissionInput(
            model_name="unpivot-like",
            weights="open",
            modality="text",
            table_format="other",
            split="test",
            data_scope="",
            track="transformation",
        )
        owner = UserFactory(username="tess", role="researcher")
        submission = submission_create(
            owner=owner, data=data, predictions=SimpleUploadedFile("t.jsonl", line)
        )
        scoring.submission_score(submission_id=submission.pk)
        submission.refresh_from_db()
        return submission

    @cached_property
    def question(self) -> Any:
        return self.table.questions.order_by("pk").first()

    @cached_property
    def gold(self) -> dict[str, str]:
        return {q.id: q.gold_answer for q in self.table.questions.all()}

    @cached_property
    def disagreement(self) -> Any:
        """A table two annotators labelled differently."""
        table = self.table
        for person, props in ((self.annotator, {"row_nesting": True}), (self.researcher, {})):
            PropertyAnnotation.objects.create(
                table=table,
                annotator=person,
                properties={**taxonomy.TABLE_PROPERTIES.empty(), **props},
                version=1,
                saved_at=timezone.now(),
            )
        return table

    @cached_property
    def slot(self) -> Any:
        ModelQuestionFactory(table=self.table, gold_answer="{12}")
        return annotation.verification_claim(annotator=self.annotator)

    @cached_property
    def disputed(self) -> Any:
        question = ModelQuestionFactory(table=self.table, gold_answer="{12}")
        for person, verdict in (
            (self.annotator, annotation.Verdict("good", True)),
            (UserFactory(role="annotator"), annotation.Verdict("good", False, "{13}")),
        ):
            slot = annotation.verification_claim(annotator=person)
            assert slot.question_id == question.pk
            annotation.verification_submit(annotator=person, slot_id=slot.pk, verdict=verdict)
        return question

    @cached_property
    def worked_example(self) -> Any:
        """A verified human-written question on a training table: question generation shows
        one to the model."""
        return QuestionFactory(table=TableFactory(id="psa--1--2", split="train"))

    @cached_property
    def endpoint(self) -> Endpoint:
        return Endpoint.objects.create(
            name="lab", base_url="https://lab.example/v1", model_names=["lab-7b"]
        )

    @cached_property
    def generation_run(self) -> GenerationRun:
        assert self.worked_example
        return annotation.generation_run_create(
            user=self.admin, endpoint=self.endpoint.name, model="lab-7b", table_ids=[self.table.pk]
        )

    @cached_property
    def submission(self) -> Any:
        submission = submit(self.researcher, self.gold, split="train")
        scoring.submission_score(submission_id=submission.pk)
        submission.refresh_from_db()
        return submission

    @cached_property
    def model_question(self) -> Any:
        """A verified model-generated question: one the gold pool may take."""
        return ModelQuestionFactory(table=self.table, status="verified")

    @cached_property
    def inference_run(self) -> InferenceRun:
        return InferenceRunFactory(created_by=self.researcher, status="cancelled", total=3)

    @cached_property
    def queued_run(self) -> InferenceRun:
        return InferenceRunFactory(created_by=self.researcher, status="queued", total=3)

    @cached_property
    def release(self) -> Any:
        QuestionFactory(table=self.table)
        build = releases.release_build_start(
            user=self.admin, version="2026.11", title="November", enqueue=False
        )
        releases.release_build_run(build_id=build.pk)
        build.refresh_from_db()
        return build

    @cached_property
    def collection(self) -> Any:
        return CollectionFactory(code="eu", name="EU documents")

    @cached_property
    def pdf(self) -> bytes:
        return (self.data_dir / PDF).read_bytes()

    @cached_property
    def document(self) -> Any:
        document = ingest.document_upload(
            user=self.admin,
            collection=self.collection,
            file_name="eu-002.pdf",
            chunks=[self.pdf],
            enqueue=False,
        )
        ingest.document_extract(document_id=document.pk)
        document.refresh_from_db()
        return document

    @cached_property
    def candidate(self) -> Any:
        return self.document.candidates.order_by("number").first()

    def candidate_state(self, client: Client) -> dict[str, Any]:
        client.force_login(self.admin)
        return client.get(f"/api/ingest/candidates/{self.candidate.pk}/").json()["state"]


def properties_of(**set_: object) -> dict[str, object]:
    return {**taxonomy.TABLE_PROPERTIES.empty(), **set_}


# Each operation of the schema, and what its call needs beyond the schema.
CASES: dict[tuple[str, str], Callable[[World, Client], Case]] = {
    ("get", "/api/"): lambda w, c: Case(w.researcher),
    ("get", "/api/annotate/agreement/"): lambda w, c: Case(w.adjudicator),
    ("get", "/api/annotate/agreement/{table_id}/resolve/"): lambda w, c: Case(
        w.adjudicator, {"table_id": w.disagreement.pk}
    ),
    ("post", "/api/annotate/agreement/{table_id}/resolve/"): lambda w, c: Case(
        w.adjudicator,
        {"table_id": w.disagreement.pk},
        {"properties": properties_of(standard_relational_table=True)},
    ),
    ("post", "/api/annotate/answers/check/"): lambda w, c: Case(
        w.annotator, values={"answer": "{12}"}
    ),
    ("get", "/api/annotate/properties/{table_id}/"): lambda w, c: Case(
        w.annotator, {"table_id": w.table.pk}
    ),
    ("put", "/api/annotate/properties/{table_id}/draft/"): lambda w, c: Case(
        w.annotator, {"table_id": w.table.pk}, {"properties": properties_of(), "base_version": 0}
    ),
    ("post", "/api/annotate/properties/{table_id}/save/"): lambda w, c: Case(
        w.annotator,
        {"table_id": w.table.pk},
        {"properties": properties_of(standard_relational_table=True), "base_version": 0},
    ),
    ("post", "/api/annotate/properties/{table_id}/skip/"): lambda w, c: Case(
        w.annotator, {"table_id": w.table.pk}
    ),
    ("get", "/api/annotate/properties/next/"): lambda w, c: Case(
        w.annotator, query={"after": w.table.pk}
    ),
    ("get", "/api/annotate/questions/{table_id}/"): lambda w, c: Case(
        w.annotator, {"table_id": w.table.pk}
    ),
    ("put", "/api/annotate/questions/{table_id}/draft/"): lambda w, c: Case(
        w.annotator,
        {"table_id": w.table.pk},
        {"text": "What is the total?", "gold_answer": "{1}", "query_properties": {}},
    ),
    ("post", "/api/annotate/questions/{table_id}/save/"): lambda w, c: Case(
        w.annotator,
        {"table_id": w.table.pk},
        {
            "text": "How many students were in North?",
            "gold_answer": "{10}",
            "query_properties": LOOKUP_PROPERTIES,
        },
    ),
    ("post", "/api/annotate/questions/{table_id}/skip/"): lambda w, c: Case(
        w.annotator, {"table_id": w.table.pk}
    ),
    ("get", "/api/annotate/questions/next/"): lambda w, c: Case(
        w.annotator, query={"after": w.table.pk}
    ),
    ("get", "/api/annotate/taxonomies/"): lambda w, c: Case(w.annotator),
    ("post", "/api/auth/token/"): lambda w, c: Case(
        w.researcher, values={"username": "rita", "password": "a-Long-password-1"}
    ),
    ("get", "/api/endpoints/"): lambda w, c: Case(w.admin, needs=(w.endpoint,)),
    ("post", "/api/endpoints/"): lambda w, c: Case(
        w.admin, values={"name": "big-lab", "base_url": "https://big-lab.example/v1"}
    ),
    ("get", "/api/endpoints/{name}/"): lambda w, c: Case(w.admin, {"name": w.endpoint.name}),
    ("patch", "/api/endpoints/{name}/"): lambda w, c: Case(
        w.admin, {"name": w.endpoint.name}, {"description": "The lab's GPU host"}
    ),
    ("delete", "/api/endpoints/{name}/"): lambda w, c: Case(w.admin, {"name": w.endpoint.name}),
    ("get", "/api/inference-runs/"): lambda w, c: Case(w.inference_run.created_by),
    ("get", "/api/inference-runs/{id}/"): lambda w, c: Case(
        w.researcher, {"id": w.inference_run.pk}
    ),
    ("post", "/api/inference-runs/{id}/cancel/"): lambda w, c: Case(
        w.researcher, {"id": w.queued_run.pk}
    ),
    ("post", "/api/inference-runs/{id}/resume/"): lambda w, c: Case(
        w.researcher, {"id": w.inference_run.pk}
    ),
    ("post", "/api/inference-runs/create/"): lambda w, c: Case(
        w.researcher,
        values={
            "model_name": "lab-7b",
            "base_url": "https://own.example/v1",
            "split": "train",
            "weights": "closed",
        },
        needs=(w.table,),
    ),
    ("get", "/api/ingest/candidates/{candidate_id}/"): lambda w, c: Case(
        w.admin, {"candidate_id": w.candidate.pk}
    ),
    ("put", "/api/ingest/candidates/{candidate_id}/draft/"): lambda w, c: Case(
        w.admin,
        {"candidate_id": w.candidate.pk},
        {"state": w.candidate_state(c), "base_version": w.candidate.version},
    ),
    ("post", "/api/ingest/candidates/{candidate_id}/extract/"): lambda w, c: Case(
        w.admin, {"candidate_id": w.candidate.pk}, {"bbox": w.candidate.bbox}
    ),
    ("post", "/api/ingest/candidates/{candidate_id}/reject/"): lambda w, c: Case(
        w.admin, {"candidate_id": w.candidate.pk}, {"reason": "A figure, not a table."}
    ),
    ("post", "/api/ingest/candidates/{candidate_id}/save/"): lambda w, c: Case(
        w.admin,
        {"candidate_id": w.candidate.pk},
        {"state": w.candidate_state(c), "base_version": w.candidate.version},
    ),
    ("get", "/api/ingest/collections/"): lambda w, c: Case(w.admin, needs=(w.collection,)),
    ("post", "/api/ingest/collections/"): lambda w, c: Case(
        w.admin, values={"code": "npc", "name": "NPC abstracts"}
    ),
    ("get", "/api/ingest/documents/"): lambda w, c: Case(w.admin, needs=(w.document,)),
    ("post", "/api/ingest/documents/"): lambda w, c: Case(
        w.admin,
        values={
            "collection": w.collection.code,
            "file": [SimpleUploadedFile("eu-002.pdf", w.pdf, "application/pdf")],
        },
    ),
    ("get", "/api/ingest/documents/{document_id}/"): lambda w, c: Case(
        w.admin, {"document_id": w.document.pk}
    ),
    ("post", "/api/ingest/documents/{document_id}/draw/"): lambda w, c: Case(
        w.admin, {"document_id": w.document.pk}, {"bbox": [60, 100, 400, 300]}
    ),
    ("post", "/api/ingest/preview/"): lambda w, c: Case(
        w.admin, values={"state": w.candidate_state(c)}
    ),
    ("get", "/api/ingest/quality/"): lambda w, c: Case(w.admin),
    ("get", "/api/leaderboard/"): lambda w, c: Case(
        w.researcher, needs=(SubmissionFactory(split="all"),)
    ),
    ("get", "/api/questions/"): lambda w, c: Case(w.researcher, needs=(w.table,)),
    ("get", "/api/questions/{question_id}/"): lambda w, c: Case(
        w.researcher, {"question_id": w.question.pk}
    ),
    ("get", "/api/releases/"): lambda w, c: Case(w.researcher, needs=(w.release,)),
    ("get", "/api/releases/{version}/"): lambda w, c: Case(
        w.researcher, {"version": w.release.release.version}
    ),
    ("get", "/api/releases/builds/{id}/"): lambda w, c: Case(w.admin, {"id": w.release.pk}),
    ("post", "/api/releases/create/"): lambda w, c: Case(
        w.admin, values={"version": "2026.12", "title": "December"}, needs=(w.table,)
    ),
    ("get", "/api/submissions/"): lambda w, c: Case(w.submission.owner),
    ("get", "/api/submissions/{id}/"): lambda w, c: Case(w.researcher, {"id": w.submission.pk}),
    ("post", "/api/submissions/{id}/delete/"): lambda w, c: Case(
        w.researcher, {"id": w.submission.pk}
    ),
    ("post", "/api/submissions/{id}/rescore/"): lambda w, c: Case(
        w.researcher, {"id": w.submission.pk}
    ),
    ("get", "/api/submissions/{id}/results/"): lambda w, c: Case(
        w.researcher, {"id": w.submission.pk}
    ),
    ("get", "/api/submissions/{id}/item-results/"): lambda w, c: Case(
        w.track_submission.owner, {"id": w.track_submission.pk}
    ),
    ("get", "/api/tracks/"): lambda w, c: Case(w.researcher, needs=(w.track_submission,)),
    ("get", "/api/tracks/{track}/board/"): lambda w, c: Case(
        w.researcher, {"track": "transformation"}, needs=(w.track_submission,)
    ),
    ("post", "/api/submissions/{id}/visibility/"): lambda w, c: Case(
        w.researcher, {"id": w.submission.pk}, {"visibility": "private"}
    ),
    ("post", "/api/submissions/create/"): lambda w, c: Case(
        w.researcher,
        values={
            "model_name": "lab-7b",
            "weights": "closed",
            "modality": "text",
            "table_format": "paper",
            "split": "train",
            "predictions": SimpleUploadedFile(
                "answers.jsonl",
                "\n".join(
                    f'{{"question_id": "{q}", "response": "{a.strip("{}")}"}}'
                    for q, a in w.gold.items()
                ).encode(),
            ),
        },
    ),
    ("get", "/api/tables/"): lambda w, c: Case(w.researcher, needs=(w.table,)),
    ("get", "/api/tables/{table_id}/"): lambda w, c: Case(w.researcher, {"table_id": w.table.pk}),
    ("get", "/api/tables/{table_id}/formats/{fmt}/"): lambda w, c: Case(
        w.researcher, {"table_id": w.table.pk, "fmt": "csv"}
    ),
    ("get", "/api/verify/adjudication/"): lambda w, c: Case(w.adjudicator, needs=(w.disputed,)),
    ("post", "/api/verify/adjudication/{question_id}/decide/"): lambda w, c: Case(
        w.adjudicator, {"question_id": w.disputed.pk}, {"rating": "good", "answer": "{12}"}
    ),
    ("post", "/api/verify/claim/"): lambda w, c: Case(
        w.annotator, needs=(ModelQuestionFactory(table=w.table),)
    ),
    ("get", "/api/verify/dashboard/"): lambda w, c: Case(w.admin, needs=(w.disputed,)),
    ("get", "/api/verify/generation-runs/"): lambda w, c: Case(w.admin, needs=(w.generation_run,)),
    ("post", "/api/verify/generation-runs/"): lambda w, c: Case(
        w.admin,
        values={"endpoint": w.endpoint.name, "model": "lab-7b", "table_ids": [w.table.pk]},
        needs=(w.worked_example,),
    ),
    ("get", "/api/verify/generation-runs/{run_id}/"): lambda w, c: Case(
        w.admin, {"run_id": w.generation_run.pk}
    ),
    ("post", "/api/verify/generation-runs/{run_id}/cancel/"): lambda w, c: Case(
        w.admin, {"run_id": w.generation_run.pk}
    ),
    ("get", "/api/verify/gold-pool/"): lambda w, c: Case(w.admin),
    ("post", "/api/verify/gold-pool/add/"): lambda w, c: Case(
        w.admin, values={"question_ids": [w.model_question.pk]}
    ),
    ("post", "/api/verify/gold-pool/remove/"): lambda w, c: Case(
        w.admin,
        values={
            "question_ids": annotation.gold_pool_add(
                admin=w.admin, question_ids=[w.model_question.pk]
            ).changed
        },
    ),
    ("get", "/api/verify/gold-verdicts/"): lambda w, c: Case(w.admin),
    ("post", "/api/verify/slots/{slot_id}/release/"): lambda w, c: Case(
        w.annotator, {"slot_id": w.slot.public_id}
    ),
    ("post", "/api/verify/slots/{slot_id}/renew/"): lambda w, c: Case(
        w.annotator, {"slot_id": w.slot.public_id}
    ),
    ("post", "/api/verify/slots/{slot_id}/submit/"): lambda w, c: Case(
        w.annotator, {"slot_id": w.slot.public_id}, {"rating": "good", "answer_correct": True}
    ),
}


def test_every_operation_of_the_schema_has_a_case(schema: dict[str, Any]) -> None:
    assert set(operations(schema)) == set(CASES)


@pytest.fixture
def world(data_dir: Path, settings: Any, tmp_path: Path) -> World:
    settings.INGEST_FILES_ROOT = tmp_path / "ingest"
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.RELEASES_ROOT = tmp_path / "releases"
    settings.RELEASE_BUILD_PROCESSES = 1
    settings.VERIFICATION_GOLD_PERCENT = 0
    return World(data_dir)


@pytest.mark.parametrize(("method", "path"), sorted(CASES), ids=lambda v: v)
def test_a_call_built_from_the_schema_succeeds_and_answers_as_documented(
    schema: dict[str, Any], world: World, client: Client, method: str, path: str
) -> None:
    case = CASES[(method, path)](world, client)
    client.logout()
    call(client, schema, method, path, case)


def test_the_upload_schema_names_the_upload_forms_fields(schema: dict[str, Any]) -> None:
    from leaderboard.forms import SubmissionForm, TrackSubmissionForm

    documented = schema["components"]["schemas"]["SubmissionCreateInput"]["properties"]
    # QA's form, and a track's: its mode, and the track the API names (the page's URL does).
    forms = set(SubmissionForm.base_fields) | set(TrackSubmissionForm.base_fields)
    assert set(documented) == forms | {"track"}
