"""The whole generator: families in, the released files out (in memory).

``generate`` runs stage 2 over every spec (the save rules carry over between tables and
families), stage 3 per chosen family (``set.seed(1)`` each) and stage 4 over every kept table
of all families (``set.seed(0)`` once), and returns each chosen table's ten files as text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from hctqa.core.release import synthetic_properties_from_html
from hctqa.core.synthgen import nonsense
from hctqa.core.synthgen.collation import windows_key
from hctqa.core.synthgen.params import Family, Params, ParamsError, check_family_templates, sql_name
from hctqa.core.synthgen.questions import Question, TableData, qanda_json, table_questions
from hctqa.core.synthgen.rrandom import RRandom, r_format
from hctqa.core.synthgen.tables import (
    Relational,
    TableSpec,
    db_csv,
    db_html,
    hct_html,
    pivot,
    quick_warning,
    relational_table,
    table_specs,
)

Progress = Callable[[str, int, int], None]

FILE_KINDS = ("DB.csv", "DB.html", "HCT.csv", "HCT.html", "QandA.json")
NONSEM_KINDS = (
    "DB_NONSEM.csv",
    "DB_NONSEM.html",
    "HCT_NONSEM.csv",
    "HCT_NONSEM.html",
    "QandA_NONSEM.json",
)
ALL_KINDS = FILE_KINDS + NONSEM_KINDS

# The release's Number_of_students NONSEM codes were drawn after 13 tables of the original
# run that cannot be rebuilt (SYNTHETIC.md §9); skipping this many uniform draws before the
# family's first table reproduces them.
RELEASE_NONSEM_OFFSETS: Mapping[str, int] = {"Number_of_students": 3596}


@dataclass
class GeneratedTable:
    id: str
    family: str  # prefix, e.g. Number_of_students
    layout: str  # e.g. "levels 2_1, aggregates right/bottom, new rows"
    relational: Relational
    questions: list[Question] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # kind -> text with LF line ends
    _properties: dict[str, bool | int | None] | None = None

    @property
    def properties(self) -> dict[str, bool | int | None]:
        """Table properties, read off the HCT by the function import_synthetic uses."""
        if self._properties is None:
            self._properties = synthetic_properties_from_html(self.files["HCT.html"], self.id)
        return self._properties

    def file_bytes(self, kind: str) -> bytes:
        """A file as released: CRLF line ends (the original ran on Windows)."""
        return self.files[kind].replace("\n", "\r\n").encode("utf-8")

    def file_name(self, kind: str) -> str:
        return f"{self.id}_{kind}"


@dataclass
class Generation:
    families: list[str]
    tables: list[GeneratedTable]
    attempts: int = 0
    duplicates: int = 0
    warnings: int = 0
    carry_over_drops: int = 0
    # Every family the run scanned: tables kept, and the questions they get (14 each, plus
    # template 5 where columns have totals), whether or not their files were made.
    kept_per_family: dict[str, list[int]] = field(default_factory=dict)

    def tables_per_family_and_layout(self) -> dict[str, Counter[str]]:
        out: dict[str, Counter[str]] = {f: Counter() for f in self.families}
        for t in self.tables:
            out[t.family][t.layout] += 1
        return out

    def questions_per_template(self) -> Counter[int]:
        return Counter(q.template for t in self.tables for q in t.questions)

    @property
    def question_count(self) -> int:
        return sum(len(t.questions) for t in self.tables)


def _layout(spec: TableSpec) -> str:
    return f"levels {spec.levels}, aggregates {spec.col_agg}/{spec.row_agg}, {spec.row_format} rows"


def _noop(stage: str, done: int, total: int) -> None:
    return None


def _names(params: Params, family: Family) -> list[str]:
    return [n for c in family.row_codes + family.col_codes for n in params.codes[c].names]


def table_data(table: Relational) -> TableData:
    """What stage 3 reads back from DB.csv and the signature."""
    return TableData(
        table_id=table.id,
        sql_names=tuple(sql_name(a.name) for a in table.attributes),
        rows=tuple(table.rows),
        values=tuple(float(r_format(v)) for v in table.values),
        col_names=tuple(sql_name(n) for n in table.col_names),
        row_names=tuple(sql_name(n) for n in table.row_names),
        aggregated_columns=table.spec.col_agg == "right",
        agg_fun=table.spec.family.agg_fun,
    )


def _needed_families(params: Params, chosen: list[Family]) -> list[Family]:
    """Families whose stage 2 the chosen ones depend on: everything before the last one needed
    in ``tables`` order (the save rules carry over), including families whose names sort
    before a chosen one (their tables take NONSEM draws first)."""
    order = list(params.families)
    last_key = max(windows_key(f.prefix + "_set") for f in chosen)
    needed = set(chosen) | {f for f in order if windows_key(f.prefix + "_set") < last_key}
    last = max(order.index(f) for f in needed)
    return order[: last + 1]


def family_questions(params: Params, tables: list[GeneratedTable]) -> None:
    """Stage 3 for one family's kept tables (in place)."""
    if not tables:
        return
    family = tables[0].relational.spec.family
    templates = check_family_templates(params, family)
    names = _names(params, family)
    rng = RRandom(1)
    for table in sorted(tables, key=lambda t: windows_key(t.id + "_SIG_HCT.json")):
        table.questions = table_questions(rng, table_data(table.relational), templates, names)
        table.files["QandA.json"] = qanda_json(table.id, table.questions)


def generate(
    params: Params,
    families: Iterable[str] | None = None,
    *,
    progress: Progress | None = None,
    nonsense_offsets: Mapping[str, int] | None = None,
    question_runner: Callable[[Params, list[list[GeneratedTable]]], None] | None = None,
    select: Callable[[GeneratedTable], bool] | None = None,
    limit: int | None = None,
    first: int | None = None,
    workers: int = 1,
) -> Generation:
    """Generate the chosen families (all by default) with the released files of every table.

    ``question_runner`` may run stage 3 of the families in parallel (it must fill in each
    table's questions and QandA.json); by default they run one after the other.

    With ``select`` (and ``limit``), only the first kept tables it accepts are finished: their
    questions and nonsensical files are drawn over those tables alone (targeted generation;
    deterministic, but not the release's draws).

    With ``workers`` > 1 the nonsensical files are written by that many processes (the draws
    stay in this one, in order).

    With ``first``, only each family's first tables (in the order questions are drawn) are
    finished; their files are exactly those of a full run (a quick sample of a family).
    """
    progress = progress or _noop
    chosen = [params.family(name) for name in families] if families else list(params.families)
    for family in chosen:
        check_family_templates(params, family)
    chosen_prefixes = {f.prefix for f in chosen}
    scan = _needed_families(params, chosen)
    specs = [s for s in table_specs(params) if s.family in scan]
    result = Generation(families=[f.prefix for f in chosen], tables=[])
    kept_all: list[tuple[str, int, int]] = []  # (id, rows, attributes) for the NONSEM stream
    signatures: set[str] = set()
    do_not_save = False
    total = sum(s.replica for s in specs)
    done = 0
    for spec in specs:
        render = spec.family.prefix in chosen_prefixes
        for replica in range(1, spec.replica + 1):
            done += 1
            table = relational_table(params, spec, replica)
            result.attempts += render
            signature = table.signature_db
            if signature in signatures:
                result.duplicates += render
                continue
            signatures.add(signature)
            db_saved = not do_not_save
            if render:
                pivot(table)
            else:
                table.warning = quick_warning(table)
            do_not_save = bool(table.warning)
            result.warnings += render and bool(table.warning)
            if not table.warning and not db_saved:
                result.carry_over_drops += render
            if db_saved and not table.warning:
                kept_all.append((table.id, len(table.rows), len(table.attributes)))
                counts = result.kept_per_family.setdefault(spec.family.prefix, [0, 0])
                counts[0] += 1
                counts[1] += 14 + (spec.col_agg == "right")
                if render:
                    html = hct_html(table)
                    result.tables.append(
                        GeneratedTable(
                            id=table.id,
                            family=spec.family.prefix,
                            layout=_layout(spec),
                            relational=table,
                            files={
                                "DB.csv": db_csv(table),
                                "DB.html": db_html(table),
                                "HCT.csv": table.hct_csv,
                                "HCT.html": html,
                            },
                        )
                    )
            if done % 50 == 0 or done == total:
                progress("tables", done, total)
    if first is not None:
        sample: list[GeneratedTable] = []
        for prefix in result.families:
            own = [t for t in result.tables if t.family == prefix]
            sample.extend(sorted(own, key=lambda t: windows_key(t.id + "_SIG_HCT.json"))[:first])
        result.tables = sample
    if select is not None:
        chosen_tables = [t for t in result.tables if select(t)][:limit]
        keep = {t.id for t in chosen_tables}
        result.tables = chosen_tables
        kept_all = [k for k in kept_all if k[0] in keep]
        result.families = [f for f in result.families if any(t.family == f for t in chosen_tables)]
        if not chosen_tables:
            return result
    if not result.tables:
        raise ParamsError("PARAM_tableTemplates.json", "tables", "no table could be generated")
    by_family: dict[str, list[GeneratedTable]] = {p: [] for p in result.families}
    for t in result.tables:
        by_family[t.family].append(t)
    groups = [by_family[p] for p in result.families if by_family[p]]
    if question_runner is not None:
        question_runner(params, groups)
    else:
        for i, group in enumerate(groups):
            family_questions(params, group)
            progress("questions", i + 1, len(groups))
    if all("QandA.json" in t.files for t in result.tables):
        _nonsense(result, kept_all, nonsense_offsets or {}, progress, workers)
    return result


def _nonsense_files(job: tuple[dict[str, str], list[tuple[str, str]]]) -> dict[str, str]:
    files, pairs = job
    compiled = nonsense.compile_pairs(pairs)
    return {
        kind.replace(".", "_NONSEM.", 1): nonsense.apply(files[kind], compiled) for kind in files
    }


def _nonsense(
    result: Generation,
    kept_all: list[tuple[str, int, int]],
    offsets: Mapping[str, int],
    progress: Progress,
    workers: int = 1,
) -> None:
    tables = {t.id: t for t in result.tables}
    rng = RRandom(0)
    skipped: set[str] = set()
    ordered = sorted(kept_all, key=lambda k: windows_key(k[0] + "_QandA.json"))
    jobs: list[tuple[GeneratedTable, list[tuple[str, str]]]] = []
    for table_id, rows, attributes in ordered:
        family = table_id.rsplit("_set", 1)[0]
        if family in offsets and family not in skipped:
            rng.skip_words(offsets[family])
            skipped.add(family)
        table = tables.get(table_id)
        if table is None:
            rng.burn_permutation(nonsense.draws_for((rows + 2) * attributes))
            continue
        data = table_data(table.relational)
        jobs.append((table, nonsense.dictionary(rng, data.sql_names, data.rows)))
    payloads = [({k: t.files[k] for k in FILE_KINDS}, pairs) for t, pairs in jobs]
    if workers > 1 and len(jobs) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=workers) as pool:
            outputs = pool.map(_nonsense_files, payloads, chunksize=16)
            for i, ((table, _), files) in enumerate(zip(jobs, outputs, strict=True), start=1):
                table.files.update(files)
                if i % 100 == 0 or i == len(jobs):
                    progress("nonsense", i, len(jobs))
        return
    for i, ((table, _), payload) in enumerate(zip(jobs, payloads, strict=True), start=1):
        table.files.update(_nonsense_files(payload))
        if i % 100 == 0 or i == len(jobs):
            progress("nonsense", i, len(jobs))


class TargetError(ValueError):
    """No layout of the parameter files produces the requested table properties."""


def generate_targeted(
    params: Params,
    required: Iterable[str],
    count: int,
    *,
    progress: Progress | None = None,
) -> Generation:
    """``count`` tables having every one of the ``required`` table properties, taken from the
    layouts and families that produce them (in the generator's own order)."""
    from hctqa.core import taxonomy

    required = list(required)
    known = set(taxonomy.TABLE_PROPERTIES.empty())
    unknown = [p for p in required if p not in known]
    if unknown:
        raise TargetError(f"Unknown table properties: {', '.join(unknown)}")
    if count < 1:
        raise TargetError("Ask for at least one table")
    seen: Counter[str] = Counter()

    def select(table: GeneratedTable) -> bool:
        seen.update(k for k, v in table.properties.items() if v is True)
        return all(table.properties.get(p) is True for p in required)

    generation = generate(params, None, progress=progress, select=select, limit=count)
    if not generation.tables:
        never = [p for p in required if not seen[p]]
        if never:
            raise TargetError(
                "No layout in the parameter files produces " + ", ".join(_label(p) for p in never)
            )
        raise TargetError(
            "Each property occurs, but no layout produces them all in one table: "
            + ", ".join(_label(p) for p in required)
        )
    return generation


def _label(code: str) -> str:
    from hctqa.core import taxonomy

    by_code = {p.code: p for p in taxonomy.TABLE_PROPERTIES.properties}
    prop = by_code[code]
    parent = getattr(prop, "parent", None)
    if parent and parent in by_code:
        return f"{by_code[parent].label}: {prop.label}"
    return prop.label


def _family_questions_job(
    params: Params, tables: list[GeneratedTable]
) -> dict[str, tuple[list[Question], str]]:
    family_questions(params, tables)
    return {t.id: (t.questions, t.files["QandA.json"]) for t in tables}


def parallel_questions(
    workers: int, progress: Progress | None = None
) -> Callable[[Params, list[list[GeneratedTable]]], None]:
    """A ``question_runner`` that draws each family's questions in its own process (each
    family has its own ``set.seed(1)`` stream, so the result is the same as in one process)."""
    from concurrent.futures import ProcessPoolExecutor, as_completed

    def run(params: Params, groups: list[list[GeneratedTable]]) -> None:
        by_id = {t.id: t for group in groups for t in group}
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [
                pool.submit(_family_questions_job, params, group)
                for group in sorted(groups, key=len, reverse=True)
            ]
            for done, future in enumerate(as_completed(futures), start=1):
                for table_id, (questions, qanda) in future.result().items():
                    by_id[table_id].questions = questions
                    by_id[table_id].files["QandA.json"] = qanda
                if progress:
                    progress("questions", done, len(futures))

    return run
