"""The demo dataset: a handful of generated HCTs covering nesting, row groups and aggregates.

Generated here, never copied from the release, so a fresh machine can show every page.
"""

from __future__ import annotations

from hctqa.core.release import ReleaseQuestion, ReleaseTable, SyntheticFiles
from hctqa.core.synthetic import Dimension, GeneratedTable, HCTSpec, generate

DEMO_FAMILY = "demo"
DEMO_SOURCE = "demo"

_SPECS = (
    HCTSpec(
        table_id="synthetic--demo-students",
        value_name="number of students",
        row_dims=(Dimension("School type", ("Government", "Private", "Community")),),
        col_dims=(Dimension("Nationality", ("Qatari", "Non-Qatari")),),
        seed=11,
    ),
    HCTSpec(
        table_id="synthetic--demo-employment",
        value_name="number of employees",
        row_dims=(
            Dimension("Sector", ("Public", "Private")),
            Dimension("Occupation", ("Managers", "Technicians", "Clerks")),
        ),
        col_dims=(Dimension("Year", ("2021", "2022")), Dimension("Gender", ("Male", "Female"))),
        total_column=True,
        seed=23,
        high=4999,
    ),
    HCTSpec(
        table_id="synthetic--demo-population",
        value_name="population",
        row_dims=(
            Dimension("Region", ("North", "South")),
            Dimension("District", ("Al Khor", "Al Shamal", "Al Wakra")),
        ),
        col_dims=(Dimension("Gender", ("Male", "Female")),),
        row_groups=True,
        total_row=True,
        total_column=True,
        seed=37,
        low=1000,
        high=99999,
    ),
    HCTSpec(
        table_id="synthetic--demo-accidents",
        value_name="number of accidents",
        row_dims=(
            Dimension("Severity", ("Slight", "Serious", "Fatal")),
            Dimension("Event", ("Fire", "Traffic")),
        ),
        col_dims=(Dimension("Year", ("2019", "2020")), Dimension("Quarter", ("Q1", "Q2"))),
        subtotal_columns=True,
        total_column=True,
        total_row=True,
        seed=41,
    ),
    HCTSpec(
        table_id="synthetic--demo-hospitals",
        value_name="number of beds",
        row_dims=(Dimension("Hospital", ("Hamad General", "Al Wakra", "Al Khor", "Cuban")),),
        col_dims=(
            Dimension("Year", ("2022", "2023")),
            Dimension("Ward", ("Medical", "Surgical", "Intensive care")),
        ),
        total_row=True,
        seed=53,
    ),
    HCTSpec(
        table_id="synthetic--demo-exports",
        value_name="export value in million QAR",
        row_dims=(
            Dimension("Destination", ("Asia", "Europe")),
            Dimension("Product", ("Crude oil", "LNG", "Fertilisers", "Polymers")),
        ),
        col_dims=(Dimension("Year", ("2020", "2021", "2022")),),
        row_groups=True,
        seed=67,
        high=9999,
    ),
)


def _as_release(generated: GeneratedTable) -> ReleaseTable:
    table_id = generated.spec.table_id
    return ReleaseTable(
        id=table_id,
        # Made up to try the platform: their own source, so their scores never sit beside
        # the benchmark's (see snapshots.SCORING_SCOPES).
        source=DEMO_SOURCE,
        canonical_csv=generated.canonical_csv,
        table_properties=generated.table_properties,
        questions=tuple(
            ReleaseQuestion(
                id=f"{table_id}--T{q.template}",
                text=q.text,
                gold_answer=q.gold_answer,
                origin="synthetic",
                query_properties=q.query_properties,
                template_number=q.template,
            )
            for q in generated.questions
        ),
        synthetic=SyntheticFiles(
            family=DEMO_FAMILY,
            hct_csv=generated.canonical_csv,
            hct_html="",
            relational_csv=generated.relational_csv,
        ),
    )


def demo_tables() -> list[ReleaseTable]:
    """The demo tables in the importer's record shape. Deterministic: same output every run."""
    return [_as_release(generate(spec)) for spec in _SPECS]
