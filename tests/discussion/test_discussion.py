"""Discussion threads on tables and questions: read and written by annotators, adjudicators and
admins only; a question's thread only by those who may see the question and its gold answer;
@mentions tell those who may read the thread; text escaped, length- and rate-limited; posted as
a plain form or through htmx."""

from __future__ import annotations

import ast
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import IntegrityError, connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import Account, Notification, OutgoingEmail
from dataset.models import Question
from discussion.models import Comment
from discussion.selectors import mentioned_names, parts
from discussion.services import comment_post
from plumbing.errors import ApplicationError
from tests.factories import ModelQuestionFactory, QuestionFactory, TableFactory, UserFactory

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[2]
PAYLOAD = "<script>alert(1)</script><img src=x onerror=alert(2)>"


@pytest.fixture
def boss():
    return UserFactory(username="boss", role="admin")


@pytest.fixture
def table():
    return TableFactory(id="psa--1--1", split="train")


def _client(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def test_an_annotator_posts_on_a_tables_thread_with_a_plain_form(ann, bob, table) -> None:
    client = _client(ann)
    response = client.post(
        "/discussion/tables/psa--1--1/", {"body": f"Row 3 looks merged, @bob? {PAYLOAD}"}
    )
    comment = Comment.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/discussion/tables/psa--1--1/?page=1#c-{comment.pk}"
    assert comment.author == ann and comment.question is None
    page = client.get("/discussion/tables/psa--1--1/").text
    assert PAYLOAD not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert '<span class="mention">@bob</span>' in page
    # Bob is told, with a link to the comment.
    told = Notification.objects.get(recipient=bob)
    assert told.text.startswith("ann mentioned you on table psa--1--1: “Row 3 looks merged")
    assert told.url == f"/discussion/tables/psa--1--1/?page=1#c-{comment.pk}"


def test_posting_through_htmx_swaps_the_thread_in_place(ann, table) -> None:
    client = _client(ann)
    headers = {"HX-Request": "true"}
    response = client.post("/discussion/tables/psa--1--1/", {"body": "First!"}, headers=headers)
    assert response.status_code == 200
    html = response.text
    assert html.lstrip().startswith('<section class="thread" id="thread"')
    assert "First!" in html and "Comment added." in html and "<html" not in html
    # A refused one comes back in the thread with its reason, the text kept.
    response = client.post("/discussion/tables/psa--1--1/", {"body": "x" * 2001}, headers=headers)
    assert response.status_code == 200
    assert "A comment is at most 2,000 characters; this one has 2,001" in response.text
    assert "x" * 2001 in response.text and Comment.objects.count() == 1


def test_a_refused_plain_post_keeps_the_text(ann, table) -> None:
    response = _client(ann).post("/discussion/tables/psa--1--1/", {"body": "   "})
    assert response.status_code == 400 and "Write something first" in response.text
    assert not Comment.objects.exists()


def test_never_the_public_never_researchers(ann, table) -> None:
    comment_post(author=ann, table=table, question=None, body="Internal note 7781")
    anonymous = _client(None).get("/discussion/tables/psa--1--1/")
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    rita = _client(UserFactory(role="researcher"))
    refused = rita.get("/discussion/tables/psa--1--1/")
    assert refused.status_code == 403 and "Internal note 7781" not in refused.text
    assert rita.post("/discussion/tables/psa--1--1/", {"body": "hi"}).status_code == 403
    # The table page links the discussion for annotators only.
    assert "discussion-link" not in rita.get("/tables/psa--1--1/").text
    assert "discussion-link" not in _client(None).get("/tables/psa--1--1/").text
    page = _client(ann).get("/tables/psa--1--1/").text
    assert 'href="/discussion/tables/psa--1--1/"' in page and "1 comment on the table" in page
    assert Comment.objects.count() == 1


def test_a_test_split_questions_thread_follows_its_gold(ann, boss) -> None:
    test_table = TableFactory(id="pak--1--1", source="pak", split="test")
    question = QuestionFactory(table=test_table, id="pak--1--1--M0", gold_answer="{42}")
    comment_post(author=boss, table=test_table, question=question, body="Gold is 42, @ann")
    # Ann may not see this gold answer: not its thread, not told of the mention.
    assert not Notification.objects.filter(recipient=ann).exists()
    client = _client(ann)
    assert client.get("/discussion/questions/pak--1--1--M0/").status_code == 404
    assert client.post("/discussion/questions/pak--1--1--M0/", {"body": "?"}).status_code == 404
    with pytest.raises(ApplicationError, match="not open to you"):
        comment_post(author=ann, table=test_table, question=question, body="?")
    # The table's own thread is open to her, with a warning; its questions' threads are not
    # listed, nor counted.
    page = client.get("/discussion/tables/pak--1--1/").text
    assert "do not write its gold answers here" in page and "pak--1--1--M0" not in page
    assert "Gold is 42" not in client.get("/tables/pak--1--1/").text
    admin_page = _client(boss).get("/discussion/questions/pak--1--1--M0/").text
    assert "Gold is 42" in admin_page and '<code class="gold">{42}</code>' in admin_page


def test_private_questions_threads_are_for_those_who_see_them(ann, boss, table) -> None:
    judge = UserFactory(username="judge", role="adjudicator")
    model_question = ModelQuestionFactory(table=table)  # unverified: admins' only
    pool = QuestionFactory(table=table, id="psa--1--1--M9")
    Question.objects.filter(pk=pool.pk).update(in_gold_pool=True)
    for question in (model_question, pool):
        comment_post(
            author=boss, table=table, question=question, body=f"@judge about {question.pk}"
        )
        for user in (ann, judge):
            assert _client(user).get(f"/discussion/questions/{question.pk}/").status_code == 404
        assert _client(boss).get(f"/discussion/questions/{question.pk}/").status_code == 200
    assert not Notification.objects.filter(recipient=judge).exists()
    # Their threads are neither listed nor counted for the others.
    for user in (ann, judge):
        page = _client(user).get("/discussion/tables/psa--1--1/").text
        assert model_question.pk not in page and pool.pk not in page
        assert "on its questions" not in _client(user).get("/tables/psa--1--1/").text


def test_mentions_tell_who_may_read_and_say_who_was_not_told(ann, bob, boss, table) -> None:
    UserFactory(username="rita", role="researcher")
    Account.objects.filter(user=bob).update(email_on_mention=True)
    client = _client(ann)
    response = client.post(
        "/discussion/tables/psa--1--1/",
        {"body": "@BOB and @boss, see row 2. @rita @nobody @ann."},
        follow=True,
    )
    assert "Told: BOB, boss." in response.text
    assert "Not told (no such account, or this thread is not open to them): rita, nobody." in (
        response.text
    )
    assert set(Notification.objects.values_list("recipient__username", flat=True)) == {
        "bob",
        "boss",
    }
    # Email only for the one who asked for it.
    email = OutgoingEmail.objects.get()
    assert email.to_address == "bob@example.org"
    assert "ann wrote on table psa--1--1:\n\n@BOB and @boss, see row 2." in email.body


def test_no_mention_email_to_an_unconfirmed_address(ann, table) -> None:
    UserFactory(username="carl", role="annotator", email_confirmed=False)
    Account.objects.filter(user__username="carl").update(email_on_mention=True)
    response = _client(ann).post("/discussion/tables/psa--1--1/", {"body": "@carl see row 2"})
    assert response.status_code == 302
    assert Notification.objects.filter(recipient__username="carl").count() == 1
    assert not OutgoingEmail.objects.exists()


def test_mentioned_names_come_back_as_typed_whoever_exists(ann, table) -> None:
    """The answer tells no more than the author wrote: no account's real spelling, and the
    same words for a name no one has as for someone who may not read the thread."""
    UserFactory(username="Admin7", role="admin")
    UserFactory(username="res7", role="researcher")
    posted = comment_post(
        author=ann, table=table, question=None, body="hi @ADMIN7 @nosuch7 @RES7 @Ann"
    )
    assert (posted.told, posted.not_told) == (["ADMIN7"], ["nosuch7", "RES7"])
    page = _client(ann).post(
        "/discussion/tables/psa--1--1/", {"body": "again @admin7 @NOSUCH7 @Res7"}, follow=True
    )
    assert "Told: admin7. Not told (no such account, or this thread is not open to them): " in (
        page.text
    )
    assert "NOSUCH7, Res7." in page.text and "Admin7" not in page.text


def test_a_thread_mentions_a_person_once_until_they_read(ann, bob, boss, table) -> None:
    Account.objects.filter(user=bob).update(email_on_mention=True)
    question = QuestionFactory(table=table)
    posted = [
        comment_post(author=a, table=table, question=None, body=f"@bob look #{n}")
        for n, a in enumerate([ann, boss, ann, ann])
    ]
    told = Notification.objects.get(recipient=bob)
    assert told.read_at is None and told.text.endswith("“@bob look #3”")
    assert told.url == f"/discussion/tables/psa--1--1/?page=1#c-{posted[-1].comment.pk}"
    assert OutgoingEmail.objects.count() == 1
    # Another thread is another mention.
    comment_post(author=ann, table=table, question=question, body="@bob here too")
    assert Notification.objects.filter(recipient=bob).count() == 2
    # Once read, the next mention is new, and emailed again.
    Notification.objects.filter(recipient=bob).update(read_at=timezone.now())
    comment_post(author=ann, table=table, question=None, body="@bob and now?")
    assert Notification.objects.filter(recipient=bob, read_at__isnull=True).count() == 1
    assert OutgoingEmail.objects.count() == 3


@pytest.mark.parametrize("hidden", ["\x00", "\u202e", "\u200b", "\x1b[31m", "\ufeff"], ids=repr)
def test_hidden_characters_in_a_comment_are_refused(ann, bob, table, hidden) -> None:
    client = _client(ann)
    response = client.post("/discussion/tables/psa--1--1/", {"body": f"@bob ok{hidden}gnp"})
    assert response.status_code == 400
    assert "invisible or direction-changing characters (U+" in response.text
    assert not Comment.objects.exists() and not Notification.objects.exists()


def test_line_breaks_and_tabs_stay_in_a_comment(ann, table) -> None:
    posted = comment_post(author=ann, table=table, question=None, body="a\r\n\tb\nc")
    assert posted.comment.body == "a\r\n\tb\nc"


def test_at_most_ten_mentions(ann, table) -> None:
    body = " ".join(f"@user{k}" for k in range(11))
    with pytest.raises(ApplicationError, match="Mention at most 10 people"):
        comment_post(author=ann, table=table, question=None, body=body)
    assert not Comment.objects.exists()


def test_rate_limited_per_person(ann, bob, table, settings) -> None:
    settings.COMMENTS_PER_HOUR = 2
    for n in range(2):
        comment_post(author=ann, table=table, question=None, body=f"comment {n}")
    with pytest.raises(ApplicationError, match="2 comments in the last hour"):
        comment_post(author=ann, table=table, question=None, body="one more")
    comment_post(author=bob, table=table, question=None, body="someone else may")
    Comment.objects.filter(author=ann).update(created_at=timezone.now() - timedelta(hours=2))
    comment_post(author=ann, table=table, question=None, body="an hour later")


def test_the_database_keeps_comments_short_and_not_empty(ann, table) -> None:
    for body in ("", "y" * 2001):
        with pytest.raises(IntegrityError), transaction.atomic():
            Comment.objects.create(table=table, author=ann, body=body)


def test_a_question_must_be_on_its_table(ann, table) -> None:
    other = QuestionFactory(table=TableFactory())
    with pytest.raises(ApplicationError, match="not open to you"):
        comment_post(author=ann, table=table, question=other, body="wrong table")


def test_mentions_are_found_as_people_write_them() -> None:
    assert mentioned_names("@ann, @bob. mail@example.org (@c.d) @ann") == ["ann", "bob", "c.d"]
    assert [(p.text, p.mention) for p in parts("Hi @ann. Bye")] == [
        ("Hi ", False),
        ("@ann", True),
        (". Bye", False),
    ]


def test_a_thread_costs_the_same_queries_however_many_comments(ann, bob, table) -> None:
    question = QuestionFactory(table=table)
    client = _client(ann)
    url = f"/discussion/questions/{question.pk}/"
    client.get(url)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    comment_post(author=bob, table=table, question=question, body="one")
    one = queries()
    for n in range(80):
        comment_post(author=ann if n % 2 else bob, table=table, question=question, body=f"#{n}")
    assert queries() == one


def test_a_mention_shows_no_excerpt_once_its_thread_is_closed_to_the_reader(
    ann, bob, boss, table
) -> None:
    question = QuestionFactory(table=table)
    comment_post(author=boss, table=table, question=question, body="@bob SECRET-4411 here")
    comment_post(author=boss, table=table, question=None, body="@bob the table's own")
    client = _client(bob)
    page = client.get("/accounts/notifications/").text
    assert page.count("SECRET-4411") == 1 and "the table&#x27;s own" in page
    Question.objects.filter(pk=question.pk).update(in_gold_pool=True)  # admins' from now on
    page = client.get("/accounts/notifications/").text
    assert "SECRET-4411" not in page and "About a page no longer open to you." in page
    assert "the table&#x27;s own" in page
    assert "SECRET-4411" in _client(boss).get(f"/discussion/questions/{question.pk}/").text


def test_a_long_thread_comes_in_pages_the_newest_last(ann, bob, table, settings) -> None:
    settings.COMMENTS_PER_HOUR = 0
    Comment.objects.bulk_create(
        Comment(table=table, author=ann, body=f"note {n:03}") for n in range(120)
    )
    client = _client(bob)
    url = "/discussion/tables/psa--1--1/"
    last = client.get(url).text
    assert 'Comments <span class="count">(120)</span>' in last
    assert "note 119" in last and "note 100" in last and "note 099" not in last
    assert "Page 3 of 3" in last and 'href="?page=2#thread" rel="prev"' in last
    first = client.get(f"{url}?page=1").text
    assert "note 000" in first and "note 049" in first and "note 050" not in first
    assert 'href="?page=2#thread" rel="next"' in first
    assert "note 119" in client.get(f"{url}?page=99").text  # past the end: the last
    # A mention leads to the comment's own page, which keeps it as the thread grows.
    posted = comment_post(author=ann, table=table, question=None, body="@bob see this")
    told = Notification.objects.get(recipient=bob)
    assert told.url == f"{url}?page=3#c-{posted.comment.pk}"
    Comment.objects.bulk_create(Comment(table=table, author=ann, body="more") for _ in range(40))
    assert f'id="c-{posted.comment.pk}"' in client.get(told.url.split("#")[0]).text
    # The plain form's post leads there too.
    response = client.post(url, {"body": "and one more"})
    newest = Comment.objects.order_by("-pk").first()
    assert response["Location"] == f"{url}?page=4#c-{newest.pk}"


def test_annotation_never_imports_discussion() -> None:
    """Dependencies flow one way: the discussion app is built on annotation (its pages show
    the link through a template tag), never the reverse."""
    importers = []
    for folder in ("annotation", "hctqa", "leaderboard", "releases", "ingest", "endpoints"):
        for path in (REPO / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                if any(n == "discussion" or n.startswith("discussion.") for n in names):
                    importers.append(str(path.relative_to(REPO)))
    assert importers == []
