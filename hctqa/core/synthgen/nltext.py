"""Question text from templates (SYNTHETIC.md §7), following the original R step by step.

A selection is a small table: ``Selection(names, rows)`` with SQL attribute names. The text is
built by rendering every (column row, row row) combination as a sentence with ``##value@@``
markers, merging the sentences in three passes, and cleaning up optional words.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from hctqa.core.synthgen.collation import windows_key
from hctqa.core.synthgen.params import sql_name

OPEN, CLOSE = "##", "@@"
EXPRESSION_WORDS = {"sum": "total", "min": "minimum", "max": "maximum", "avg": "average"}
_KEYWORDS = ("EXPR", "GROUPBY", "ORDERBYDESC", "TOPK", "OPATTR", "OPANDVAL")


@dataclass(frozen=True)
class Selection:
    names: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def drop(self, name: str) -> Selection:
        keep = [i for i, n in enumerate(self.names) if n != name]
        return Selection(
            tuple(self.names[i] for i in keep), tuple(tuple(r[i] for i in keep) for r in self.rows)
        )


@dataclass(frozen=True)
class OrderBy:
    k: int
    direction: str  # ASC | DESC


@dataclass(frozen=True)
class ForWhich:
    attributes: tuple[str, ...]
    operator: str  # ">" or "<"
    value: str


def squish(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def r_strsplit(text: str, sep: str) -> list[str]:
    """R's ``strsplit`` on a literal: an empty input gives nothing, a trailing empty piece is
    dropped."""
    if text == "":
        return []
    parts = text.split(sep)
    if parts[-1] == "":
        parts.pop()
    return parts


@lru_cache(maxsize=4096)
def _dollar(name: str) -> re.Pattern[str]:
    return re.compile(r"\$" + name)


def _re_split(text: str, name: str) -> list[str]:
    """``strsplit(text, "\\\\$name")`` (the name is used as a regular expression, as in R)."""
    if text == "":
        return []
    parts = _dollar(name).split(text)
    if parts[-1] == "":
        parts.pop()
    return parts


def oxford(terms: Sequence[str], conjunction: str) -> str:
    """``a`` / ``a or b`` / ``a, b, or c``, whitespace-squished (R's getOxfordStyleGroup)."""
    word = f" {conjunction.strip()} "
    if len(terms) == 1:
        text = terms[0]
    elif len(terms) == 2:
        text = word.join(terms)
    else:
        text = "".join(f"{t}, " for t in terms[:-1]) + word + terms[-1]
    return squish(text)


def _names_in(segment: str, names: Sequence[str]) -> list[str]:
    return [n for n in names if _dollar(n).search(segment)]


def _valid_names(pattern: str, all_names: Sequence[str]) -> list[str]:
    return list(_valid_names_cached(pattern, tuple(all_names)))


@lru_cache(maxsize=16384)
def _valid_names_cached(pattern: str, all_names: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for name in (sql_name(n) for n in all_names):
        parts = _re_split(pattern, name)
        if not parts or parts[0] != pattern:
            out.append(name)
    return tuple(out)


def _display_name(sql: str, all_names: Sequence[str]) -> str:
    matches = [n for n in all_names if sql_name(n) == sql]
    return matches[0] if matches else sql


def _value_piece(record: dict[str, str], piece: str, all_names: Sequence[str]) -> str:
    """R's getVarValueNLQ with delimiters: ``in_$Year`` → ``in_##2015@@``."""
    valid = _valid_names(piece, all_names)
    current = piece
    missing = 0
    for name in valid:
        parts = _re_split(current, name)
        if name in record:
            start = parts[0] if parts else ""
            end = parts[1] if len(parts) > 1 else ""
            current = start + OPEN + record[name] + CLOSE + end
        else:
            current = "".join(parts)
            missing += 1
    if missing == len(valid):
        return ""
    return current


@lru_cache(maxsize=4096)
def _pieces(words: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[bool, ...]]:
    pieces: list[str] = []
    labels: list[bool] = []
    for part in [p for w in words for p in r_strsplit(w, "__")]:
        sub = r_strsplit(part, "==")
        pieces.extend(sub)
        if len(sub) == 1:
            labels.append(False)
        else:
            labels.extend("$" not in s for s in sub)
    return tuple(pieces), tuple(labels)


def _sentence(record: dict[str, str], words: Sequence[str], all_names: Sequence[str]) -> str:
    """One selection record rendered through the attribute words (geneRowColUnionFromNLPattern
    for a single record)."""
    valid = _valid_names("__".join(words), all_names)
    present = [n for n in valid if n in record]
    record = {n: record[n] for n in present}
    pieces, labels = _pieces(tuple(words))
    start: list[str] = []
    segments: list[str] = []
    seen_attribute = False
    for piece in pieces:
        segment = ""
        if "$" in piece:
            if _names_in(piece, list(record)):
                segment = _value_piece(record, piece, all_names)
                seen_attribute = True
        elif not seen_attribute:
            start.append(piece.replace("_", " "))
        else:
            segment = piece.replace("_", " ")
        segments.append(segment)
    keep = [not lab for lab in labels]
    label_positions = [i for i, lab in enumerate(labels) if lab]
    for i in label_positions:
        before = segments[i - 1] if i > 0 else ""
        after = segments[i + 1] if i + 1 < len(segments) else "NA"
        if before and after:
            # The original marks every label as kept as soon as one qualifies.
            for j in label_positions:
                keep[j] = True
    text = " ".join(s for s, k in zip(segments, keep, strict=True) if k)
    return " ".join(start) + " " + squish(text)


# --- merging -----------------------------------------------------------------------------


def _tokens_pass1(sentence: str) -> list[str]:
    """R's splitAttr1: cut before every ## and after every @@."""
    first = r_strsplit(sentence, OPEN)
    pieces = []
    for piece in first:
        marked = OPEN + piece
        pieces.append(marked if OPEN in marked and CLOSE in marked else piece)
    out = []
    for piece in pieces:
        for sub in r_strsplit(piece, CLOSE):
            marked = sub + CLOSE
            out.append(marked if OPEN in marked and CLOSE in marked else sub)
    return out


def _trim(tokens: Sequence[str]) -> list[str]:
    out = []
    for part in tokens:
        for a in r_strsplit(part, OPEN):
            out.extend(r_strsplit(a, CLOSE))
    return out


def _sorted(items: Sequence[str]) -> list[str]:
    return sorted(items, key=windows_key)


def _unique(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _merge_pass(sentences: Sequence[str]) -> list[str]:
    """R's regroupSentences: merge sentences differing in one marked slot."""
    current = _unique(sentences)
    if len(current) <= 1:
        return list(current)
    merged: list[str] = []
    rounds = 0
    while len(current) > 1:
        rounds += 1
        merged = []
        ref = current[0]
        candidates = current[1:]
        while True:
            ref_tokens = _tokens_pass1(ref)
            diffs: list[tuple[int, int, str]] = []  # (count, last position, part)
            for cand in candidates:
                tokens = _tokens_pass1(cand)
                count, position, part = 0, -1, ""
                for i, t in enumerate(ref_tokens):
                    other = tokens[i] if i < len(tokens) else None
                    if t != other:
                        count += 1
                        position, part = i, other or ""
                diffs.append((count, position, part))
            single = [i for i, d in enumerate(diffs) if d[0] == 1]
            if single:
                freq = Counter(diffs[i][1] for i in single)
                best = max(freq.values())
                slot = min(p for p, c in freq.items() if c == best)
                chosen = [i for i in single if diffs[i][1] == slot]
                tokens = _sorted([ref_tokens[slot]] + [diffs[i][2] for i in chosen])
                new_tokens = list(ref_tokens)
                new_tokens[slot] = OPEN + oxford(_trim(tokens), " or ") + CLOSE
                merged.append("".join(new_tokens))
                rest = [c for i, c in enumerate(candidates) if i not in chosen]
                if not rest:
                    break
                if len(rest) == 1:
                    merged.append(rest[0])
                    break
                ref, candidates = rest[0], rest[1:]
            else:
                merged.append(ref)
                ref = candidates[0]
                if len(candidates) == 1:
                    merged.append(ref)
                    break
                candidates = candidates[1:]
        stop = len(merged) == len(current)
        current = merged
        if rounds > 5:
            stop = True
        current = _unique(current)
        if stop:
            break
    return merged


def _tokens_pass3(sentence: str) -> list[str]:
    """R's splitAttr2: words, with runs from a word holding ## to one holding @@ re-joined."""
    out: list[str] = []
    pending: list[str] = []
    inside = False
    for word in squish(sentence).split(" ") if squish(sentence) else []:
        starts, ends = OPEN in word, CLOSE in word
        if starts and ends:
            out.append(word)
        elif starts:
            inside = True
            pending.append(word)
        elif ends:
            inside = False
            pending.append(word)
            out.append(" ".join(pending))
            pending = []
        elif inside:
            pending.append(word)
        else:
            out.append(word)
    return out


def _collapse(tokens: Sequence[str | None]) -> str | None:
    """R's mergeDelim: one marked chunk from a run of tokens (``None`` is R's NA)."""
    if not tokens:
        return None
    texts = ["NA" if t is None else t for t in tokens]
    if len(texts) > 2:
        middle = [t.replace(OPEN, "").replace(CLOSE, "") for t in texts[1:-1]]
        return " ".join([texts[0].replace(CLOSE, ""), *middle, texts[-1].replace(OPEN, "")])
    if len(texts) == 2:
        return texts[0].replace(CLOSE, "") + " " + texts[1].replace(OPEN, "")
    return texts[0]


def _regroup_chunk(sentences: Sequence[str]) -> str:
    """R's regroupAttr2: join with ' or ' and keep a single ##…@@ around the middle."""
    merged = "ZZZZZ" + " or ".join(sentences) + "ZZZZZ"
    pieces = []
    for part in r_strsplit(merged, OPEN):
        pieces.extend(r_strsplit(part, CLOSE))
    middle = "".join(pieces[1:-1])
    return (pieces[0] + OPEN + middle + CLOSE + pieces[-1]).replace("ZZZZZ", "")


def _equality(a: Sequence[str], b: Sequence[str]) -> list[bool] | None:
    if len(a) != len(b):
        return None
    return [x == y for x, y in zip(a, b, strict=True)]


def _mergeable(pattern: list[bool] | None) -> bool:
    if pattern is None or len(pattern) < 2:
        return False
    steps = [int(b) - int(a) for a, b in zip(pattern, pattern[1:], strict=False)]
    changes = sum(abs(s) for s in steps)
    if changes == 1:
        return True
    if sum(steps) == 0 and changes == 2:
        down = steps.index(-1)
        up = steps.index(1)
        return down < up
    return False


def _last_pass_rotation(sentences: list[str]) -> list[str]:
    current = sentences
    merged: list[str] = []
    rounds = 0
    while len(current) > 1:
        rounds += 1
        merged = []
        ref = current[0]
        candidates = current[1:]
        while True:
            ref_tokens = _tokens_pass3(ref)
            ref_attrs = [t for t in ref_tokens if OPEN in t]
            cand_tokens = [_tokens_pass3(c) for c in candidates]
            patterns = [_equality(ref_attrs, [t for t in ct if OPEN in t]) for ct in cand_tokens]
            mergeable = [i for i, p in enumerate(patterns) if _mergeable(p)]
            if mergeable:
                first = cand_tokens[mergeable[0]]
                width = max(len(ref_tokens), len(first))
                differs = [
                    ref_tokens[i % len(ref_tokens)] != first[i % len(first)] for i in range(width)
                ]
                where = [i for i, d in enumerate(differs) if d]
                lo, hi = min(where), max(where)
                span = list(range(lo, hi + 1))

                def pick(tokens: list[str], span: list[int] = span) -> list[str | None]:
                    return [tokens[i] if i < len(tokens) else None for i in span]

                collapsed = [_collapse(pick(ref_tokens))]
                reference_pattern = patterns[0]
                actual = []
                for j, index in enumerate(mergeable):
                    other = patterns[j] if j < len(patterns) else None
                    if reference_pattern is None or other is None or reference_pattern == other:
                        collapsed.append(_collapse(pick(cand_tokens[index])))
                        actual.append(index)
                chunk = _regroup_chunk(_sorted([c or "NA" for c in collapsed]))
                start = " ".join(ref_tokens[:lo]) if lo > 0 else ""
                end = " ".join(ref_tokens[hi + 1 :]) if hi + 1 < len(ref_tokens) else ""
                merged.append(f"{start} {chunk} {end}")
                rest = [(c, cand_tokens[i]) for i, c in enumerate(candidates) if i not in actual]
                rewritten = []
                for _, tokens in rest:
                    head = [tokens[i] if i < len(tokens) else "NA" for i in range(lo)] or [""]
                    tail = tokens[hi + 1 :] if hi + 1 < len(tokens) else [""]
                    middle = _collapse(pick(tokens))
                    rewritten.append(squish(" ".join([*head, middle or "NA", *tail])))
                if not rewritten:
                    break
                if len(rewritten) == 1:
                    if rewritten[0]:
                        merged.append(rewritten[0])
                    break
                ref, candidates = rewritten[0], rewritten[1:]
            else:
                merged.append(ref)
                ref = candidates[0]
                if len(candidates) == 1:
                    merged.append(ref)
                    break
                candidates = candidates[1:]
        stop = len(merged) == len(current)
        current = merged
        if rounds > 5:
            stop = True
        current = [s for s in (squish(x) for x in _unique(current)) if s]
        if stop:
            break
    return merged


def _last_pass(sentences: list[str]) -> list[str]:
    """R's regroupSentencesLastPass: merge spans of attributes; the best rotation wins."""
    unique = _unique(sentences)
    n = len(unique)
    if n <= 1:
        return sentences
    results = [_last_pass_rotation(unique[z:] + unique[:z]) for z in range(n)]
    fewest = min(len(r) for r in results)
    best = min(
        (i for i, r in enumerate(results) if len(r) == fewest),
        key=lambda i: sum(len(s) for s in results[i]),
    )
    return results[best]


# --- keywords ------------------------------------------------------------------------------


def _choose(part: str, second: bool) -> str:
    options = part.split("/")
    return options[1] if second and len(options) > 1 else options[0]


def _expression_text(expressions: Sequence[str], word: str) -> str:
    out = []
    for part in word.split("_"):
        if "/" in part:
            out.append(_choose(part, len(expressions) > 1))
        elif part == "$EXPR":
            out.append(oxford([EXPRESSION_WORDS[e] for e in expressions], " and "))
        else:
            out.append(part)
    return " ".join(out)


def _group_by_text(names: Sequence[str], word: str, all_names: Sequence[str]) -> str:
    out = []
    for part in word.split("_"):
        if "/" in part:
            out.append(_choose(part, len(names) > 1))
        elif part == "$GROUPBY":
            display = [_display_name(n, all_names) for n in names]
            out.append((" for each " + oxford(display, " and ") + ", ").replace("_", " "))
        else:
            out.append(part)
    return " ".join(out)


def report_text(names: Sequence[str], pattern: str) -> str:
    out = []
    for part in pattern.split("_"):
        if "/" in part:
            out.append(_choose(part, len(names) > 1))
        elif part == "$REPORTATTR":
            out.append((oxford(list(names), " and ") + ".").replace("_", " "))
        else:
            out.append(part)
    return " ".join(out)


def _order_text(order: OrderBy, word: str) -> str:
    out = []
    for part in word.split("_"):
        if "/" in part:
            out.append(_choose(part, order.direction != "DESC"))
        elif part in ("$ORDERBYDESC", "$TOPK"):
            out.append("ordered by" if order.k <= 0 else str(order.k))
        else:
            out.append(part)
    return " ".join(out)


def _for_which_text(for_which: ForWhich, word: str) -> str:
    operator = {">": "greater than", "<": "lower than"}[for_which.operator.strip()]
    out = []
    for part in word.split("_"):
        if "/" in part:
            out.append(_choose(part, len(for_which.attributes) != 1))
        elif part == "$OPATTR":
            out.append(oxford(list(for_which.attributes), " and "))
        elif part == "$OPANDVAL":
            out.append(f"{operator} {for_which.value}")
        else:
            out.append(part)
    return " ".join(out)


def _remove_optional(text: str) -> str:
    """R's removeOptionalDup: ``of_((students))`` stays as "of students" only if "students"
    does not appear elsewhere."""
    pieces = re.split(r"\(\(", text)
    if pieces and pieces[-1] == "":
        pieces.pop()
    options = []
    for piece in pieces:
        if "))" in piece:
            options.append(r_strsplit(piece, "))")[0] if r_strsplit(piece, "))") else "")
    processed = text
    for option in options:
        count = sum(len(re.findall(option, p)) for p in pieces)
        words = processed.split(" ")
        result = ""
        if count > 1:
            marked = re.sub(r"\(\(" + option + r"\)\)", "XXXXX", processed).split(" ")
            for word in marked:
                if "XXXXX" not in word:
                    result = result + " " + word
        else:
            for word in words:
                if not re.search(option, word):
                    result = result + " " + word
                else:
                    result = result + " " + word.replace("_", " ").replace("(", "").replace(")", "")
        processed = result
    return processed.replace("_", " ")


# --- the question -------------------------------------------------------------------------


def question_text(
    pattern: str,
    *,
    columns: Selection | None,
    rows: Selection | None,
    all_names: Sequence[str],
    simplify_nested: Sequence[Sequence[str]],
    expressions: Sequence[str] = (),
    group_by: Sequence[str] = (),
    order_by: OrderBy | None = None,
    for_which: ForWhich | None = None,
) -> str:
    """R's geneNLQselectExpress."""
    names = list(all_names)
    removed: list[str] = []
    for group in simplify_nested:
        sql_group = [sql_name(n) for n in group]
        for side in ("columns", "rows"):
            selection = columns if side == "columns" else rows
            if selection is None:
                continue
            present = [n for n in sql_group if n in selection.names]
            for name in present[:-1]:
                selection = selection.drop(name)
                removed.append(name)
            if side == "columns":
                columns = selection
            else:
                rows = selection
    names = [n for n in names if n not in removed]
    col_names = list(columns.names) if columns else []
    row_names = list(rows.names) if rows else []
    words = squish(pattern).split(" ")
    start: list[tuple[str, str]] = []
    attribute_words: list[str] = []
    end: list[str] = []
    for word in words[:-1]:
        if "$" not in word:
            start.append(("FALSE", word))
            continue
        found = _names_in(word, col_names + row_names + list(_KEYWORDS))
        if len(found) == 1:
            name = found[0]
            if name in col_names or name in row_names:
                attribute_words.append(word)
            elif name == "EXPR":
                start.append(("EXPR", word))
            elif name == "GROUPBY":
                start.append(("GROUPBY", word))
            elif name in ("ORDERBYDESC", "TOPK"):
                start.append(("ORDERBYK", word))
            elif name == "OPATTR":
                start.append(("FORWHICH", word))
            elif name == "OPANDVAL":
                end.append(word)
        elif len(found) > 1 and any(n in col_names or n in row_names for n in found):
            attribute_words.append(word)
    start_text = []
    for kind, word in start:
        if kind == "FALSE":
            start_text.append(word)
        elif kind == "EXPR":
            start_text.append(_expression_text(expressions, word))
        elif kind == "GROUPBY":
            start_text.append(_group_by_text(group_by, word, names))
        elif kind == "ORDERBYK":
            assert order_by is not None
            start_text.append(_order_text(order_by, word))
        else:
            assert for_which is not None
            start_text.append(_for_which_text(for_which, word))
    sentences = []
    col_rows = columns.rows if columns else ((),)
    row_rows = rows.rows if rows else ((),)
    for c in col_rows:
        for r in row_rows:
            record = dict(zip(col_names, c, strict=True))
            record.update(zip(row_names, r, strict=True))
            sentences.append(_sentence(record, attribute_words, names))
    merged = _merge_pass(sentences)
    fused = [s.replace(CLOSE + " " + OPEN, "-----") for s in merged]
    merged = [s.replace("-----", " ") for s in _merge_pass(fused)]
    merged = _last_pass(merged)
    attribute_text = oxford(merged, "or").replace(OPEN, "").replace(CLOSE, "")
    end_text = " ".join(_for_which_text(for_which, w) for w in end) if end and for_which else ""
    question = " ".join(start_text) + "   " + attribute_text + " " + end_text + "?"
    question = squish(question).replace(" ?", "?")
    question = squish(_remove_optional(question))
    return question.replace(" ,", ",").replace(",?", "?")


def for_which_premise(attributes: Sequence[str], pattern: str, all_names: Sequence[str]) -> str:
    """R's geneForWhichPremAttr: "in School type", "of Severity and of Event"."""
    found = []
    for attribute in attributes:
        for word in squish(pattern).split(" "):
            text = _attribute_name_text(word, attribute, all_names)
            if text is not None:
                found.append(text)
    return oxford(found, " and ")


def _attribute_name_text(word: str, attribute: str, all_names: Sequence[str]) -> str | None:
    parts = _re_split(word, attribute)
    if parts and parts[0] == word:
        return None
    display = _display_name(attribute, all_names)
    sub = []
    for part in r_strsplit(word, "__"):
        sub.extend(r_strsplit(part, "=="))
    if sub and sub[0] == word:
        prefix = (parts[0] if parts else "").replace("_", " ")
        return squish(prefix + " " + display)
    if sub and "$" not in sub[0]:
        return squish(sub[0].replace("_", " ") + " " + display)
    for piece in sub:
        piece_parts = _re_split(piece, attribute)
        if not piece_parts or piece_parts[0] != piece:
            prefix = (piece_parts[0] if piece_parts else "").replace("_", " ")
            return squish(prefix + " " + display)
    return None
