"""factory_boy factories for the dataset and users."""

from __future__ import annotations

import factory
from django.contrib.auth.models import User

from accounts.roles import RESEARCHER
from accounts.services import account_approve_for_test_split, email_address_trust, user_role_add
from dataset.models import Collection, Question, Split, Table
from hctqa.core import taxonomy

SIMPLE_CSV = "Region,Male,Female\nNorth,10,12\nSouth,20,22\n"
NESTED_CSV = "Region,2019,__,2020,__\n__,Male,Female,Male,Female\nNorth,1,2,3,4\nSouth,5,6,7,8\n"
# The query properties of a plain lookup question ("What was X in Y?"), complete and consistent.
LOOKUP_PROPERTIES = {
    "row_filter": True,
    "row_filter_lookup": True,
    "row_filter_single_column": True,
    "row_filter_single_row": True,
    "returned_columns": True,
    "returned_columns_plain": True,
    "returned_columns_outputs": 1,
}


class UserFactory(factory.django.DjangoModelFactory[User]):
    class Meta:
        model = User
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.org")
    password = factory.PostGenerationMethodCall("set_password", "a-Long-password-1")

    @factory.post_generation
    def role(self, create: bool, extracted: str | None, **kwargs: object) -> None:
        self.save()
        if create and extracted:
            user_role_add(user=self, role=extracted)

    @factory.post_generation
    def email_confirmed(self, create: bool, extracted: bool | None, **kwargs: object) -> None:
        """Addresses are confirmed unless the test says ``email_confirmed=False`` (tests of
        the confirmation do)."""
        if create and (extracted is None or extracted):
            email_address_trust(user=self)

    @factory.post_generation
    def test_split_approved(self, create: bool, extracted: bool | None, **kwargs: object) -> None:
        """Researchers are approved for test-split submissions unless the test says
        ``test_split_approved=False`` (tests of that approval do)."""
        wanted = extracted is None or extracted
        if create and wanted and self.groups.filter(name=RESEARCHER).exists():
            account_approve_for_test_split(user=self, approved_by=None)


class CollectionFactory(factory.django.DjangoModelFactory[Collection]):
    """A collection; the release's four exist from a migration, but a transactional test
    empties the database, so tests get them (or make them) through here."""

    class Meta:
        model = Collection
        django_get_or_create = ("code",)

    code = factory.Sequence(lambda n: f"coll{n}")
    name = factory.LazyAttribute(lambda c: f"Collection {c.code}")


class TableFactory(factory.django.DjangoModelFactory[Table]):
    class Meta:
        model = Table

    id = factory.Sequence(lambda n: f"psa--9--{n}")
    source = "psa"
    split = Split.TRAIN
    canonical_csv = NESTED_CSV
    table_properties = factory.LazyFunction(
        lambda: {
            **taxonomy.TABLE_PROPERTIES.empty(),
            "multi_level_column": True,
            "balanced_multi_level_column": True,
            "symmetric_multi_level_column": True,
        }
    )


class QuestionFactory(factory.django.DjangoModelFactory[Question]):
    class Meta:
        model = Question

    table = factory.SubFactory(TableFactory)
    id = factory.LazyAttributeSequence(lambda q, n: f"{q.table.id}--M{n}")
    text = factory.Sequence(lambda n: f"What is value number {n}?")
    gold_answer = factory.Sequence(lambda n: f"{{gold-{n}}}")
    origin = Question.Origin.HUMAN
    status = Question.Status.VERIFIED
    query_properties = factory.LazyFunction(taxonomy.QUERY_PROPERTIES.empty)


class ModelQuestionFactory(QuestionFactory):
    """A model-generated, unverified question with its two open verification slots."""

    class Meta:
        skip_postgeneration_save = True

    id = factory.LazyAttributeSequence(lambda q, n: f"{q.table.id}--A{n}")
    origin = Question.Origin.MODEL
    status = Question.Status.UNVERIFIED
    query_properties = factory.LazyFunction(dict)

    @factory.post_generation
    def slots(self, create: bool, extracted: object, **kwargs: object) -> None:
        from annotation.services import verification_slots_open

        if create:
            verification_slots_open(questions=[self])


class SubmissionFactory(factory.django.DjangoModelFactory):
    """A scored public text submission by a researcher. The figures given become its score
    under each rules version in ``rules`` (default: both for text, 2025-05 for vision); a
    submission with no recall has no score."""

    class Meta:
        model = "leaderboard.Submission"

    owner = factory.SubFactory(UserFactory, role="researcher")
    model_name = factory.Sequence(lambda n: f"model-{n}")
    organisation = "Lab"
    parameters_billions = 7
    weights = "open"
    modality = "text"
    table_format = "paper"
    split = "all"
    data_scope = "real"
    visibility = "public"
    status = "scored"
    progress = 100
    n_questions = 100
    coverage = 1.0
    precision = factory.Sequence(lambda n: (n % 90) / 100 + 0.05)
    recall = factory.Sequence(lambda n: (n * 7 % 90) / 100 + 0.05)
    f1 = 0.5
    cc = 0.3
    recall_psa = 0.4
    recall_pak = 0.5
    recall_census = 0.3
    recall_arxiv = 0.6
    rules = None

    @classmethod
    def _create(cls, model_class: type, *args: object, **kwargs: object) -> object:
        from leaderboard.models import SCORE_FIGURES, Score

        figures = {f: kwargs.pop(f) for f in (*SCORE_FIGURES, "breakdowns") if f in kwargs}
        rules = kwargs.pop("rules")
        submission = super()._create(model_class, *args, **kwargs)
        if figures.get("recall") is not None:
            if rules is None:
                rules = ("2025-05", "2025-10") if submission.modality == "text" else ("2025-05",)
            for version in rules:
                Score.objects.create(submission=submission, rules=version, **figures)
        return submission


class InferenceRunFactory(factory.django.DjangoModelFactory):
    """A failed inference run on a researcher's own endpoint (nothing to execute)."""

    class Meta:
        model = "leaderboard.InferenceRun"

    created_by = factory.SubFactory(UserFactory, role="researcher")
    model_name = factory.Sequence(lambda n: f"run-model-{n}")
    base_url = "https://own.example/v1"
    modality = "text"
    table_format = "paper"
    split = "validation"
    data_scope = "real"
    weights = "closed"
    status = "failed"
    config = factory.LazyFunction(dict)
