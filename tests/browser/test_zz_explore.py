from __future__ import annotations

import pytest
from playwright.sync_api import Page

from annotation.models import PropertyAnnotation
from tests.browser.pagecheck import axe_violations
from tests.browser.test_annotation_tools import log_in
from tests.factories import ModelQuestionFactory, QuestionFactory, TableFactory, UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]
OUT = "/tmp/people-shots"


def test_explore(live_server, page: Page, settings) -> None:
    settings.VERIFICATION_GOLD_PERCENT = 0
    t = TableFactory(id="psa--7--1")
    QuestionFactory(table=t, id="psa--7--1--M0", text="How many men lived in the North in 2019?")
    ModelQuestionFactory(
        table=t, text="How many women lived in the South in 2020?", gold_answer="{7}"
    )
    ann = UserFactory(username="ann", role="annotator")
    other = UserFactory(username="bob", role="annotator")
    UserFactory(username="judge", role="adjudicator")
    UserFactory(username="rita", role="researcher")
    for u, props in ((ann, {"multi_level_column": True}), (other, {"row_group_label": True})):
        PropertyAnnotation.objects.create(
            table=t, annotator=u, properties=props, version=1, saved_at="2026-11-20T10:00:00Z"
        )
    pages = {
        "ann": [
            "/annotate/",
            "/annotate/properties/psa--7--1/",
            "/annotate/questions/psa--7--1/",
            "/annotate/verify/",
            "/dataset/",
            "/tables/psa--7--1/",
            "/",
        ],
        "judge": [
            "/annotate/agreement/psa--7--1/",
            "/annotate/verification/",
            "/annotate/agreement/",
        ],
        "rita": ["/annotate/"],
    }
    report = []
    for user, paths in pages.items():
        page.context.clear_cookies()
        log_in(page, live_server.url, user)
        for path in paths:
            page.goto(live_server.url + path)
            for w in (1440, 390):
                page.set_viewport_size({"width": w, "height": 900})
                page.wait_for_timeout(100)
                name = f"{user}{path.replace('/', '_')}-{w}.png"
                page.screenshot(path=f"{OUT}/{name}", full_page=True)
                sw = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
                v = axe_violations(page)
                report.append(f"{name}: scroll {sw} axe {[(x['id'], x['nodes'][:2]) for x in v]}")
    open(f"{OUT}/report.txt", "w").write("\n".join(report))
