"""The generator on a small family: every template, gold from SQL, determinism, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hctqa.core.synthgen.output import OutputError, write_generation
from hctqa.core.synthgen.params import ParamsError, check_family_templates, read_params
from hctqa.core.synthgen.pipeline import (
    ALL_KINDS,
    TargetError,
    generate,
    generate_targeted,
    table_data,
)
from hctqa.core.synthgen.questions import Database, format_result
from tests.synthetic_params import write_small_params


@pytest.fixture(scope="module")
def small_params(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_small_params(data_dir / "hctqa-synthetic", tmp_path_factory.mktemp("params"))


@pytest.fixture(scope="module")
def small_generation(small_params: Path):
    return generate(read_params(small_params))


def test_every_question_template_is_generated(small_generation) -> None:
    assert set(small_generation.questions_per_template()) == set(range(1, 16))
    for table in small_generation.tables:
        templates = [q.template for q in table.questions]
        aggregated = table.relational.spec.col_agg == "right"
        assert templates == [t for t in range(1, 16) if t != 5 or aggregated]
        assert all(q.texts and q.texts[0].endswith((".", "?")) for q in table.questions)


def test_every_gold_answer_is_what_its_sql_returns(small_generation) -> None:
    checked = 0
    for table in small_generation.tables:
        data = table_data(table.relational)
        db = Database(data.sql_names, data.rows, data.values)
        for question in table.questions:
            assert format_result(db.run(question.sql)) == question.answer, question.sql
            checked += 1
        db.close()
    assert checked == small_generation.question_count > 0


def test_the_same_parameters_give_the_same_bytes(small_params: Path, small_generation) -> None:
    again = generate(read_params(small_params))
    assert [t.id for t in again.tables] == [t.id for t in small_generation.tables]
    for a, b in zip(again.tables, small_generation.tables, strict=True):
        assert all(a.file_bytes(k) == b.file_bytes(k) for k in ALL_KINDS), a.id


def test_files_have_crlf_line_ends_and_the_released_shape(small_generation) -> None:
    table = small_generation.tables[0]
    qanda = table.file_bytes("QandA.json")
    assert qanda.startswith(b'{\r\n"filename": "' + table.id.encode() + b'_DB.csv",\r\n')
    assert b"\n" not in qanda.replace(b"\r\n", b"")
    assert json.loads(qanda)["questions"][0]["name"] == "template 1"
    assert table.file_bytes("DB_NONSEM.csv").endswith(b"\r\n\r\n")  # R's extra line end
    assert b"AA" in table.file_bytes("DB_NONSEM.csv")


def test_properties_are_read_off_the_structure(small_generation) -> None:
    for table in small_generation.tables:
        spec = table.relational.spec
        props = table.properties
        assert props["global_column_aggregation"] is (spec.col_agg == "right")
        assert props["multi_level_column"] is (len(table.relational.col_names) > 1)
        if spec.row_format == "indent":
            assert props["local_row_group_aggregation"] is True


def test_targeted_generation_finds_the_layouts_with_the_properties(small_params: Path) -> None:
    wanted = ["local_column_group_aggregation", "row_nesting"]
    generation = generate_targeted(read_params(small_params), wanted, 3)
    assert len(generation.tables) == 3
    assert all(t.properties[p] for t in generation.tables for p in wanted)
    assert all(t.questions and "QandA_NONSEM.json" in t.files for t in generation.tables)


def test_targeted_generation_says_when_no_layout_can(small_params: Path) -> None:
    with pytest.raises(TargetError, match="No layout .* produces Split header cell"):
        generate_targeted(read_params(small_params), ["split_header_cell"], 2)


def test_writing_refuses_a_non_empty_folder_unless_forced(small_generation, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(OutputError, match="not empty"):
        write_generation(small_generation, tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
    count = write_generation(small_generation, tmp_path, force=True)
    assert count == 10 * len(small_generation.tables)
    assert (tmp_path / "keep.txt").read_text() == "mine"


def test_a_missing_or_malformed_parameter_file_is_named(small_params: Path, tmp_path: Path) -> None:
    for name in ("PARAM_semantics.json", "PARAM_NLquestionTemplates.json"):
        (tmp_path / name).write_bytes((small_params / name).read_bytes())
    with pytest.raises(ParamsError, match="PARAM_tableTemplates.json: missing"):
        read_params(tmp_path)
    (tmp_path / "PARAM_tableTemplates.json").write_text('{"replica": 2,')
    with pytest.raises(ParamsError, match="PARAM_tableTemplates.json: not valid JSON at line 1"):
        read_params(tmp_path)


def test_an_unknown_code_names_the_file_and_key(small_params: Path, tmp_path: Path) -> None:
    tables = json.loads((small_params / "PARAM_tableTemplates.json").read_text())
    tables["tables"][1]["rowCodes"][1] = "Planets"
    write_small_params(small_params, tmp_path, tables=tables["tables"])
    with pytest.raises(ParamsError, match=r"tables\[1\]\.rowCodes\[1\]: unknown code 'Planets'"):
        read_params(tmp_path)


def test_a_family_without_templates_or_with_an_unknown_attribute_is_refused(
    small_params: Path, tmp_path: Path
) -> None:
    write_small_params(small_params, tmp_path)
    questions = json.loads((small_params / "PARAM_NLquestionTemplates.json").read_text())
    kept = [q for q in questions if q["tableName"] != "Number of accidents"]
    (tmp_path / "PARAM_NLquestionTemplates.json").write_text(json.dumps(kept))
    params = read_params(tmp_path)
    with pytest.raises(ParamsError, match="no question templates for the family 'Number of"):
        generate(params, ["Number_of_accidents"])
    food = next(q for q in questions if q["tableName"].startswith("Food"))
    food["template_3"] = ["What is the amount of_$Planet in_$Year ?"]
    (tmp_path / "PARAM_NLquestionTemplates.json").write_text(json.dumps([food]))
    params = read_params(tmp_path)
    with pytest.raises(ParamsError, match=r"template_3: \$Planet is not an attribute"):
        check_family_templates(params, params.family("Food_import-export_in_tons"))


def test_the_quick_save_check_agrees_with_the_pivot(small_params: Path) -> None:
    from hctqa.core.synthgen.tables import (
        layout_warning,
        quick_warning,
        relational_table,
        table_specs,
    )

    params = read_params(small_params)
    checked = 0
    for spec in table_specs(params):
        for replica in (1, 2):
            table = relational_table(params, spec, replica)
            assert quick_warning(table) == layout_warning(table), table.id
            checked += 1
    assert checked == 80
