"""Fifty annotators verifying at once against a running server (gunicorn), through the API:
claim, sometimes renew, submit (which hands out the next slot, as the verification page uses
it; sometimes sent twice, as a retried request would be), and a few who walk away holding a
lease. Gold control is on (the server's VERIFICATION_GOLD_PERCENT, 10 by default) with a
pool of release questions, half of them shown with a wrong answer, which the annotators
catch. Prints p95 latency to claim and to submit, then checks the
invariants in the database: no question with more than two verifications, no verdict lost,
no slot stuck.

Meant for PostgreSQL (set DATABASE_URL; a scratch database hctqa_bench is used):

    DATABASE_URL=postgres://hctqa:hctqa@127.0.0.1:5432/hctqa [THINK_SECONDS=3] \\
        [ANNOTATORS=50] [QUESTIONS=800] .venv/bin/python benchmarks/verification_load.py \\
        [--data ../shared/data]
"""

from __future__ import annotations

import json
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter, defaultdict

from _setup import REPO, import_release, setup

# ANNOTATORS and QUESTIONS shrink the run for a quick check on a busy machine.
ANNOTATORS = int(os.environ.get("ANNOTATORS", "50"))
WALK_AWAY = max(1, ANNOTATORS // 10)  # annotators who leave mid-task, holding a lease
QUESTIONS = int(os.environ.get("QUESTIONS", "800"))
GOLD_POOL = 300
LEASE_SECONDS = 4
TIME_LIMIT = 300
# Seconds an annotator spends on a question. 0 (the default) is a stress test: everyone
# clicks as fast as the server answers. THINK_SECONDS=3 is closer to people at work.
THINK_SECONDS = float(os.environ.get("THINK_SECONDS", "0"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Api:
    def __init__(self, base: str, token: str):
        self.base = base
        self.headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}

    def post(self, path: str, body: dict | None = None) -> tuple[int, dict | None, float]:
        data = json.dumps(body or {}).encode()
        request = urllib.request.Request(self.base + path, data=data, headers=self.headers)
        start = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                raw = response.read()
                status = response.status
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            status = exc.code
        elapsed = (time.perf_counter() - start) * 1000
        return status, (json.loads(raw) if raw else None), elapsed


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * 0.95) - 1)]


def main() -> None:
    args = setup(__doc__ or "")
    from django.conf import settings
    from django.db.models import Count, Q
    from django.utils import timezone
    from rest_framework.authtoken.models import Token

    from annotation.models import VerificationSlot
    from annotation.services import (
        Verdict,
        verification_claim,
        verification_slots_open,
        verification_submit,
    )
    from dataset.models import Question, QuestionStatus, Table
    from tests.factories import UserFactory

    if not os.environ.get("DATABASE_URL"):
        print("note: no DATABASE_URL, so this runs on SQLite; the goal is set on PostgreSQL")
    import_release(args.data)
    # Not on test-split tables: generation refuses them by default, and their questions are
    # for admins to verify.
    tables = list(
        Table.objects.filter(source="psa").exclude(split="test").order_by("pk")[: QUESTIONS // 8]
    )
    generated = [
        Question(
            id=f"{t.pk}--A{100 + k}",
            table=t,
            text=f"Generated question {k} on {t.pk}?",
            gold_answer="{1}",
            origin="model",
            status="unverified",
        )
        for t in tables
        for k in range(8)
    ]
    Question.objects.bulk_create(generated)
    verification_slots_open(questions=generated)
    # The gold pool refuses release questions (anyone can look them up); load is load, so
    # the benchmark puts some in directly. Its annotators know the answers and pass.
    # One question per text, so an annotator can tell which gold answer they are shown.
    texts = Question.objects.filter(origin="human", status=QuestionStatus.VERIFIED)
    counts = Counter(texts.values_list("text", flat=True))
    gold_by_text: dict[str, str] = {}
    picked = []
    for pk, text, answer in (
        texts.filter(table__split="train").order_by("pk").values_list("pk", "text", "gold_answer")
    ):
        if counts[text] == 1 and len(picked) < GOLD_POOL:
            picked.append(pk)
            gold_by_text[text] = answer
    Question.objects.filter(pk__in=picked).update(in_gold_pool=True)
    tokens = [
        Token.objects.create(user=UserFactory(username=f"load-{n}", role="annotator")).key
        for n in range(ANNOTATORS)
    ]

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "VERIFICATION_LEASE_SECONDS": str(LEASE_SECONDS)}
    server = subprocess.Popen(
        [
            str(REPO / ".venv/bin/gunicorn"),
            "hctqa.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "4",
            "--log-level",
            "warning",
        ],
        cwd=REPO,
        env=env,
    )
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/api/tables/?page_size=1", timeout=2)
                break
            except OSError:
                time.sleep(0.2)
        results = run_load(base, tokens, gold_by_text)
    finally:
        server.terminate()
        server.wait(timeout=20)

    claims, submits, accepted, conflicts, wall = results
    print(
        f"{len(generated)} model-generated questions, {ANNOTATORS} annotators,"
        f" think time {THINK_SECONDS:g} s, {wall:.1f} s"
    )
    print(
        f"claim          n={len(claims):5}  median {statistics.median(claims):6.1f} ms"
        f"  p95 {p95(claims):6.1f} ms"
    )
    print(
        f"submit + next  n={len(submits):5}  median {statistics.median(submits):6.1f} ms"
        f"  p95 {p95(submits):6.1f} ms"
    )
    print(f"verdicts accepted: {len(accepted)}   refused as conflicts (lost leases): {conflicts}")

    # Leases left by those who walked away run out. No sweep is run: an expired lease must be
    # claimable as it is. Two fresh annotators then take every slot still waiting.
    time.sleep(LEASE_SECONDS + 1)
    stuck = VerificationSlot.objects.filter(
        status="leased", lease_expires_at__gte=timezone.now()
    ).count()
    waiting = VerificationSlot.objects.filter(
        kind="regular", question__status=QuestionStatus.UNVERIFIED
    ).exclude(status="done")
    waiting_before = waiting.count()
    settings.VERIFICATION_GOLD_PERCENT = 0
    drained = 0
    for name in ("after-a", "after-b"):
        late = UserFactory(username=name, role="annotator")
        while (slot := verification_claim(annotator=late)) is not None:
            verification_submit(
                annotator=late, slot_id=slot.pk, verdict=Verdict("good", answer_correct=True)
            )
            drained += 1
    unclaimable = waiting_before - drained
    over = (
        VerificationSlot.objects.filter(kind="regular", status="done")
        .values("question")
        .annotate(n=Count("pk"))
        .filter(n__gt=2)
        .count()
    )
    twice = (
        VerificationSlot.objects.filter(annotator__isnull=False)
        .values("question", "annotator")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
        .count()
    )
    done = {
        (str(public_id), user, rating)
        for public_id, user, rating in VerificationSlot.objects.filter(status="done").values_list(
            "public_id", "annotator__username", "rating"
        )
    }
    lost = [a for a in accepted if a not in done]
    ours = Question.objects.filter(pk__in=[q.pk for q in generated])
    undecided = ours.filter(status=QuestionStatus.UNVERIFIED)
    open_regular = VerificationSlot.objects.filter(kind="regular", status="open").count()
    decided = ours.exclude(status=QuestionStatus.UNVERIFIED).count()
    print(f"questions with more than two verifications: {over}")
    print(f"questions verified twice by one annotator:  {twice}")
    print(f"verifications lost:                         {len(lost)}")
    print(f"leases still held after they should expire: {stuck}")
    print(
        f"slots waiting after the run: {waiting_before}; taken by two fresh annotators: "
        f"{drained}; stuck: {unclaimable}"
    )
    print(
        f"model-generated questions decided: {decided} of {len(generated)}"
        f" ({undecided.count()} waiting, {open_regular} slots open"
        f" after two fresh annotators took what was left)"
    )
    gold = VerificationSlot.objects.filter(kind="gold", status="done").aggregate(
        n=Count("pk"),
        passed=Count("pk", filter=Q(gold_passed=True)),
        wrong=Count("pk", filter=Q(gold_shown_wrong=True)),
    )
    print(
        f"gold questions answered: {gold['n']} ({gold['wrong']} shown with a wrong answer),"
        f" passed {gold['passed']}"
    )
    ok = over == 0 and twice == 0 and not lost and stuck == 0 and unclaimable == 0
    ok = ok and gold["passed"] == gold["n"]
    print("invariants hold" if ok else "INVARIANTS BROKEN")
    sys.exit(0 if ok else 1)


def _answer_key(text: str) -> str:
    from hctqa.core.answers import AnswerFormatError, canonical_answer

    try:
        return canonical_answer(text)
    except AnswerFormatError:
        return text


def run_load(base: str, tokens: list[str], gold_by_text: dict[str, str]):
    claims: list[float] = []
    submits: list[float] = []
    accepted: list[tuple[str, str, str]] = []
    conflicts = [0]
    lock = threading.Lock()
    start = threading.Barrier(len(tokens))
    deadline = time.monotonic() + TIME_LIMIT

    def annotator(n: int, token: str) -> None:
        api = Api(base, token)
        rng = random.Random(n)
        leaves_after = rng.randint(3, 15) if n < WALK_AWAY else None
        done = 0
        # Warm the server's workers (connections, caches) before everyone starts at once.
        urllib.request.urlopen(
            urllib.request.Request(f"{base}/api/annotate/taxonomies/", headers=api.headers),
            timeout=30,
        ).read()
        start.wait()
        # People at work do not all open the page in the same millisecond: with think time,
        # arrivals spread over one think time (the stress test keeps them simultaneous).
        time.sleep(rng.uniform(0, THINK_SECONDS))
        slot = None
        while time.monotonic() < deadline:
            if slot is None:
                status, slot, ms = api.post("/api/verify/claim/")
                with lock:
                    claims.append(ms)
                if status == 204:
                    # Others may still let leases run out; look once more before stopping.
                    time.sleep(LEASE_SECONDS + 0.5)
                    status, slot, ms = api.post("/api/verify/claim/")
                    if status == 204:
                        return
                assert status == 200, (status, slot)
            if leaves_after is not None and done >= leaves_after:
                return  # walks away, holding this lease
            # Reading the question; the open page renews the lease every half lease.
            thinking = rng.uniform(0.5, 1.5) * THINK_SECONDS + rng.uniform(0.0, 0.05)
            while thinking > 0:
                time.sleep(min(thinking, LEASE_SECONDS / 2))
                thinking -= LEASE_SECONDS / 2
                if thinking > 0 or rng.random() < 0.1:
                    api.post(f"/api/verify/slots/{slot['slot']}/renew/")
            is_generated = slot["question"].startswith("Generated question")
            rating = rng.choice(["good"] * 7 + ["ambiguous"] * 2 + ["nonsensical"])
            verdict = {
                "rating": rating,
                "answer_correct": True,
                "rewritten_question": "Which value, exactly?" if rating == "ambiguous" else "",
            }
            if not is_generated:
                # Gold: a careful annotator passes it, catching a deliberately wrong answer.
                rating = "good"
                gold = gold_by_text[slot["question"]]
                right = _answer_key(slot["proposed_answer"]) == _answer_key(gold)
                verdict = {"rating": rating, "answer_correct": right, "corrected_answer": gold}
            path = f"/api/verify/slots/{slot['slot']}/submit/"
            # The submit hands out the next slot too, as the verification page uses it.
            status, body, ms = api.post(path, verdict)
            with lock:
                submits.append(ms)
            if status == 200:
                with lock:
                    accepted.append((slot["slot"], f"load-{n}", rating))
                done += 1
                if rng.random() < 0.05:
                    api.post(path, verdict)  # a retried request: must change nothing
                slot = body["next"]
            elif status == 409:
                with lock:
                    conflicts[0] += 1
                slot = None
            else:
                raise AssertionError((status, body))

    began = time.monotonic()
    threads = [threading.Thread(target=annotator, args=(n, t)) for n, t in enumerate(tokens)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    grouped = defaultdict(int)
    for slot_id, _, _ in accepted:
        grouped[slot_id] += 1
    assert max(grouped.values(), default=1) == 1, "a slot accepted two verdicts"
    return claims, submits, accepted, conflicts[0], time.monotonic() - began


if __name__ == "__main__":
    main()
