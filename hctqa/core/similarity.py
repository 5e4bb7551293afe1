"""Near-duplicate questions: two questions whose content words are (almost) the same set.

Words are lower-cased letters and digits; a short list of function words ("what", "the",
"in"...) is dropped, so rewording the frame ("How many..." / "What was the number of...")
changes little, while changing a year, a region or a measure changes a content word and so
the score. The score is the Jaccard index of the two word sets.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

# At or above this, a new question is taken for a rewording of an existing one.
NEAR_DUPLICATE = 0.8

STOP_WORDS = frozenset(
    {
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "for",
        "to",
        "from",
        "by",
        "with",
        "and",
        "or",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "how",
        "many",
        "much",
        "does",
        "do",
        "did",
        "has",
        "have",
        "had",
        "there",
        "their",
        "its",
        "this",
        "that",
        "these",
        "those",
        "it",
        "than",
        "then",
        "give",
        "report",
        "list",
        "show",
        "tell",
        "me",
        "number",
        "value",
        "values",
        "total",
    }
)

_WORD = re.compile(r"[^\W_]+(?:[.,]\d+)*")


def content_words(text: str) -> frozenset[str]:
    normal = unicodedata.normalize("NFKC", text).casefold()
    return frozenset(w for w in _WORD.findall(normal) if w not in STOP_WORDS)


def similarity(a: str, b: str) -> float:
    """1.0 for the same content words, 0.0 for none shared."""
    wa, wb = content_words(a), content_words(b)
    if not wa and not wb:
        return 1.0 if " ".join(a.casefold().split()) == " ".join(b.casefold().split()) else 0.0
    return len(wa & wb) / len(wa | wb)


@dataclass(frozen=True)
class NearDuplicate:
    question_id: str
    text: str
    score: float


def near_duplicates(
    text: str, existing: Iterable[tuple[str, str]], *, threshold: float = NEAR_DUPLICATE
) -> list[NearDuplicate]:
    """The existing questions (id, text) at least ``threshold`` alike, most alike first."""
    found = [
        NearDuplicate(qid, other, score)
        for qid, other in existing
        if (score := similarity(text, other)) >= threshold
    ]
    return sorted(found, key=lambda d: (-d.score, d.question_id))
