"""Issue 29: the dataset's models moved from annotation to the dataset app with their rows
where they were. Upgrading a database of the layout before (with tables, questions, a
collection, the rows that point at them, the permissions people held and the admin's log)
keeps every row and every reference, and moves the content types, so the same people hold
the same rights; going back restores the layout before."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.contrib.contenttypes.models import ContentType

from tests.migration_helpers import latest, migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [
    ("annotation", "0018_collection_ocr_language"),
    ("discussion", "0001_initial"),
    ("ingest", "0005_page_finished_at"),
    ("leaderboard", "0015_rescore_under_linear_disclosure"),
    ("admin", "0003_logentry_add_action_flag_choices"),
    ("dataset", None),
]
MOVED = ("collection", "table", "synthetictable", "question")


def _layout_before() -> dict[str, int]:
    """A database as main had it: the dataset's rows in annotation's state, content types
    and permissions under the app label ``annotation``, people holding them."""
    old = migrate(BEFORE)
    ContentTypeOld = old.get_model("contenttypes", "ContentType")
    PermissionOld = old.get_model("auth", "Permission")
    UserOld = old.get_model("auth", "User")
    Group = old.get_model("auth", "Group")
    LogEntry = old.get_model("admin", "LogEntry")
    Collection = old.get_model("annotation", "Collection")
    Table = old.get_model("annotation", "Table")
    Question = old.get_model("annotation", "Question")
    SyntheticTable = old.get_model("annotation", "SyntheticTable")
    PropertyAnnotation = old.get_model("annotation", "PropertyAnnotation")
    Comment = old.get_model("discussion", "Comment")
    Document = old.get_model("ingest", "Document")

    # As post_migrate left them on main: content types and the permissions on them.
    types = {
        model: ContentTypeOld.objects.get_or_create(app_label="annotation", model=model)[0]
        for model in MOVED
    }
    perms = {}
    for model, codenames in {
        "table": ("change_table", "annotate_table", "view_test_gold"),
        "question": (
            "change_question",
            "view_private_questions",
            "write_question",
            "verify_question",
            "adjudicate_question",
        ),
    }.items():
        for codename in codenames:
            perms[codename] = PermissionOld.objects.get_or_create(
                content_type=types[model], codename=codename, defaults={"name": codename}
            )[0]
    annotators = Group.objects.create(name="annotator-before")
    annotators.permissions.add(perms["annotate_table"], perms["write_question"])
    ann = UserOld.objects.create(username="ann")
    ann.groups.add(annotators)
    boss = UserOld.objects.create(username="boss")
    boss.user_permissions.add(
        perms["view_test_gold"], perms["adjudicate_question"], perms["change_table"]
    )

    collection = Collection.objects.create(code="qnpc-2024", name="QNPC 2024")
    table = Table.objects.create(
        id="qnpc-2024--1--1", source="qnpc-2024", split="test", canonical_csv="a,b\n1,2\n"
    )
    synthetic = Table.objects.create(
        id="synth--1", source="synthetic", split="train", canonical_csv="x\n1\n"
    )
    SyntheticTable.objects.create(
        table=synthetic, family="f", hct_csv="x", hct_html="<table/>", relational_csv="x\nx"
    )
    question = Question.objects.create(
        id="qnpc-2024--1--1--M1",
        table=table,
        text="What is b?",
        gold_answer="{2}",
        origin="human",
        status="verified",
    )
    PropertyAnnotation.objects.create(table=table, annotator=ann, properties={"a": True})
    Comment.objects.create(table=table, question=question, author=ann, body="Check b.")
    Document.objects.create(
        collection=collection,
        number=1,
        kind="pdf",
        file_name="q.pdf",
        sha256="0" * 64,
        size_bytes=10,
        status="queued",
    )
    log = LogEntry.objects.create(
        user=boss,
        content_type=types["table"],
        object_id=table.pk,
        object_repr=table.pk,
        action_flag=2,
        change_message="[]",
    )
    return {
        "table_type": types["table"].pk,
        "question_type": types["question"].pk,
        "log": log.pk,
        "change_table": perms["change_table"].pk,
    }


def _held(username: str) -> set[str]:
    user = User.objects.get(username=username)
    return {
        f"{p.content_type.app_label}.{p.codename}"
        for p in Permission.objects.filter(user=user) | Permission.objects.filter(group__user=user)
    }


def test_upgrading_keeps_rows_references_and_the_rights_people_held() -> None:
    before = _layout_before()
    new = migrate(latest())
    Table = new.get_model("dataset", "Table")
    Question = new.get_model("dataset", "Question")
    table = Table.objects.get(pk="qnpc-2024--1--1")
    assert table.split == "test"
    assert Table.objects.get(pk="synth--1").synthetic.family == "f"
    question = Question.objects.get(pk="qnpc-2024--1--1--M1")
    assert question.table_id == table.pk
    comment = new.get_model("discussion", "Comment").objects.get()
    assert (comment.table_id, comment.question_id) == (table.pk, question.pk)
    assert new.get_model("ingest", "Document").objects.get().collection.code == "qnpc-2024"
    assert new.get_model("annotation", "PropertyAnnotation").objects.get().table_id == table.pk

    # The same content type rows, now the dataset's: the admin's log still names the table.
    moved = ContentType.objects.get(pk=before["table_type"])
    assert (moved.app_label, moved.model) == ("dataset", "table")
    assert ContentType.objects.get(pk=before["question_type"]).app_label == "dataset"
    assert not ContentType.objects.filter(app_label="annotation", model__in=MOVED).exists()
    LogEntry = new.get_model("admin", "LogEntry")
    assert LogEntry.objects.get(pk=before["log"]).content_type_id == before["table_type"]
    assert Permission.objects.get(pk=before["change_table"]).content_type_id == moved.pk

    # The same people hold the same rights, under the names the code now asks for.
    assert _held("ann") == {"annotation.annotate_table", "annotation.write_question"}
    assert _held("boss") == {
        "dataset.view_test_gold",
        "dataset.change_table",
        "annotation.adjudicate_question",
    }
    ann, boss = User.objects.get(username="ann"), User.objects.get(username="boss")
    assert ann.has_perm("annotation.annotate_table") and ann.has_perm("annotation.write_question")
    assert boss.has_perm("dataset.view_test_gold") and boss.has_perm("dataset.change_table")
    assert boss.has_perm("annotation.adjudicate_question")
    assert not ann.has_perm("dataset.view_test_gold")


def test_downgrading_restores_the_layout_before_and_upgrading_again_works() -> None:
    before = _layout_before()
    migrate(latest())
    old = migrate(BEFORE)
    assert old.get_model("annotation", "Question").objects.get().table_id == "qnpc-2024--1--1"
    ContentTypeOld = old.get_model("contenttypes", "ContentType")
    assert ContentTypeOld.objects.get(pk=before["table_type"]).app_label == "annotation"
    PermissionOld = old.get_model("auth", "Permission")
    annotate = PermissionOld.objects.get(codename="annotate_table")
    assert annotate.content_type_id == before["table_type"]
    migrate(latest())
    assert _held("ann") == {"annotation.annotate_table", "annotation.write_question"}
    assert ContentType.objects.get(pk=before["table_type"]).app_label == "dataset"
