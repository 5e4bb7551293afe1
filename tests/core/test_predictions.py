from __future__ import annotations

import gzip
import json
import random

import pytest

from hctqa.core.predictions import (
    PredictionsError,
    check_known,
    parse_predictions,
    read_predictions,
)


def jsonl(*records: object) -> bytes:
    return "\n".join(json.dumps(r) for r in records).encode()


@pytest.mark.parametrize("id_key", ["question_id", "qap_id", "qa_id", "id"])
@pytest.mark.parametrize("answer_key", ["response", "answer", "prediction"])
def test_every_id_and_answer_key_is_accepted(id_key: str, answer_key: str) -> None:
    assert parse_predictions(jsonl({id_key: "q1", answer_key: "42"})) == {"q1": "42"}


def test_a_json_array_and_gzip_are_accepted() -> None:
    array = json.dumps([{"id": "q1", "response": "a"}, {"id": "q2", "response": "b"}]).encode()
    assert parse_predictions(array) == {"q1": "a", "q2": "b"}
    assert parse_predictions(gzip.compress(jsonl({"id": "q1", "response": "a"}))) == {"q1": "a"}


def test_every_member_of_a_concatenated_gzip_is_read() -> None:
    # `cat part1.gz part2.gz > all.gz` is one valid gzip file; gunzip reads both parts.
    data = gzip.compress(jsonl({"id": "q1", "response": "a"}) + b"\n")
    data += gzip.compress(jsonl({"id": "q2", "response": "b"}))
    assert parse_predictions(data) == {"q1": "a", "q2": "b"}
    assert parse_predictions(data + b"\x00" * 8) == {"q1": "a", "q2": "b"}
    assert "bytes after the end of the gzip data are not gzip" in refused(data + b"junk")
    truncated = data + gzip.compress(b"more")[:-4]
    assert "truncated" in refused(truncated)


def test_only_a_newline_ends_a_json_line() -> None:
    # JSON strings may hold these characters raw; str.splitlines() would split on them.
    answer = "a\u2028b\x85c\u2029d"
    line = '{"id": "q1", "response": "' + answer + '"}'
    assert parse_predictions(line.encode() + b"\r\n") == {"q1": answer}


def test_blank_lines_and_a_byte_order_mark_are_fine() -> None:
    data = (
        b"\xef\xbb\xbf"
        + jsonl({"id": "q1", "response": "a"})
        + b"\n\n"
        + jsonl({"id": "q2", "response": ""})
    )
    assert parse_predictions(data) == {"q1": "a", "q2": ""}


def refused(data: bytes, **kwargs: int) -> str:
    with pytest.raises(PredictionsError) as info:
        parse_predictions(data, **kwargs)
    return str(info.value)


def test_not_json_names_the_line() -> None:
    data = jsonl({"id": "q1", "response": "a"}) + b"\n{oops\n"
    assert (
        refused(data)
        == "Line 2: not valid JSON (Expecting property name enclosed in double quotes)"
    )
    assert refused(b'[{"id": "q1",\n "response": }]').startswith("Line 2: not valid JSON")


def test_missing_keys_are_named() -> None:
    assert refused(jsonl({"response": "a"})) == (
        "Line 1: no question id (expected one of question_id, qap_id, qa_id, id)"
    )
    assert refused(jsonl({"id": "q1", "text": "a"})) == (
        "Line 1: no answer (expected one of response, answer, prediction, output)"
    )
    assert (
        refused(jsonl({"id": "q1", "response": 12}))
        == "Line 1: response must be a string or null, not int"
    )
    assert refused(jsonl({"id": "q1", "response": "a"}, ["q2", "b"])) == (
        "Line 2: each prediction must be a JSON object"
    )
    assert refused(b'[{"id": "q1", "response": "a"}, "q2"]') == (
        "Record 2: each prediction must be a JSON object"
    )


def test_duplicate_ids_are_refused_with_a_count() -> None:
    data = jsonl(
        {"id": "q1", "response": "a"},
        {"id": "q1", "response": "b"},
        {"id": "q2", "response": "c"},
        {"id": "q2", "response": "d"},
    )
    assert refused(data) == "2 duplicate question ids, e.g. q1, q2"


def test_unknown_ids_are_refused_with_the_count_and_the_first_few() -> None:
    predictions = {f"x{i}": "a" for i in range(7)} | {"q1": "a"}
    with pytest.raises(PredictionsError) as info:
        check_known(predictions, {"q1"})
    assert str(info.value) == "7 unknown question ids, e.g. x0, x1, x2, x3, x4"


def test_an_unknown_id_given_twice_is_one_unknown_id() -> None:
    data = jsonl(
        {"id": "x1", "response": "a"},
        {"id": "x1", "response": "b"},
        {"id": "x2", "response": "c"},
        {"id": "x2", "response": "d"},
        {"id": "x2", "response": "e"},
    )
    with pytest.raises(PredictionsError) as info:
        parse_predictions(data, known_ids={"q1"})
    assert str(info.value) == "2 unknown question ids, e.g. x1, x2"
    assert len(info.value.problems) == 5  # each line is still listed


def test_an_empty_file_is_refused() -> None:
    assert refused(b"") == "The file is empty"
    assert refused(b"\n  \n") == "The file is empty"
    assert refused(b"[]") == "The file holds no predictions"


def test_a_file_over_the_limit_is_refused_before_reading_it() -> None:
    assert (
        refused(b"x" * 2000, max_bytes=1000)
        == "The file is 2,000 bytes, over the 1,000 bytes limit"
    )


def test_a_small_gzip_that_unpacks_past_the_limit_is_refused() -> None:
    bomb = gzip.compress(b" " * 5_000_000)
    assert len(bomb) < 100_000
    assert (
        refused(bomb, max_bytes=1_000_000)
        == "The file is larger than the 1,000,000 bytes limit once unzipped"
    )
    assert refused(bomb[:-10]) == "The gzip file is truncated"


def test_an_undecodable_encoding_is_refused_with_its_offset() -> None:
    latin1 = '{"id": "q1", "response": "café"}'.encode("latin-1")
    assert refused(latin1) == "The file is not UTF-8 text: undecodable byte 0xe9 at offset 29"


# --- The release's own result files, and "no answer" -----------------------------------------


def test_the_release_result_files_output_key_is_an_answer_and_gt_is_kept_apart() -> None:
    data = jsonl(
        {"qap_id": "q1", "output": "12", "gt": "{12}"},
        {"qap_id": "q2", "output": "7"},
    )
    read = read_predictions(data)
    assert read.answers == {"q1": "12", "q2": "7"}
    assert read.claimed_gold == {"q1": "{12}"}
    assert "gt must be a string, not int" in refused(jsonl({"id": "q1", "output": "", "gt": 1}))


def test_a_json_null_answer_is_read_as_none() -> None:
    data = jsonl({"id": "q1", "response": None}, {"id": "q2", "response": ""})
    assert parse_predictions(data) == {"q1": None, "q2": ""}
    array = json.dumps([{"id": "q1", "answer": None}]).encode()
    assert parse_predictions(array) == {"q1": None}


# --- Size, depth and bounded reading -------------------------------------------------------


def test_an_answer_over_the_limit_is_refused_with_its_question() -> None:
    data = jsonl({"id": "q1", "response": "ok"}, {"id": "q2", "response": "x" * 11})
    assert refused(data, max_answer_chars=10) == (
        "Line 2: the answer to q2 is 11 characters long, over the limit of 10"
    )
    assert parse_predictions(data, max_answer_chars=11)["q2"] == "x" * 11


def test_a_record_too_long_to_hold_is_refused_naming_its_question() -> None:
    # A 3 MB answer: the line is never held whole, and the message still names the question.
    line = b'{"id": "q7", "response": "' + b"a" * 3_000_000 + b'"}'
    message = refused(jsonl({"id": "q1", "response": "a"}) + b"\n" + line, max_answer_chars=100)
    assert message.startswith("Line 2 (question q7): the record is 3,000,0")
    assert "over the 1,048,576 a record may take" in message
    array = b'[{"response": "' + b"a" * 3_000_000 + b'", "id": "q8"}]'
    assert refused(array, max_answer_chars=100).startswith("Record 1: the record is ")


@pytest.mark.parametrize(
    "data",
    [
        b"[" * 100_000,
        b"[" * 100_000 + b"]" * 100_000,
        b'[{"id": "q1", "response": ' + b"[" * 100_000,
        b'{"id": "q1", "response": ' + b"[" * 100_000,
        b'{"id": "q1", "response": "a"}\n' + b'{"a": ' * 50_000,
    ],
)
def test_deeply_nested_json_is_refused_as_such(data: bytes) -> None:
    assert "the JSON is nested too deeply" in refused(data)


def test_reading_stops_at_the_first_hundred_problems() -> None:
    data = jsonl(*({"id": f"x{i:07d}", "response": "a"} for i in range(5_000)))
    with pytest.raises(PredictionsError) as info:
        parse_predictions(data, known_ids={"q1"})
    assert str(info.value) == (
        "At least 100 unknown question ids (reading stopped at line 100), "
        "e.g. x0000000, x0000001, x0000002, x0000003, x0000004"
    )
    assert len(info.value.problems) == 100
    assert info.value.problems[0] == "Line 1: unknown question id x0000000"


def test_every_problem_is_listed_with_its_line() -> None:
    data = jsonl({"id": "q1", "response": "a"}, {"id": "q9", "response": "b"}) + b"\n{oops"
    with pytest.raises(PredictionsError) as info:
        parse_predictions(data, known_ids={"q1"})
    assert str(info.value) == "2 problems; the first: Line 2: unknown question id q9"
    assert info.value.problems == [
        "Line 2: unknown question id q9",
        "Line 3: not valid JSON (Expecting property name enclosed in double quotes)",
    ]


def test_a_stream_is_read_like_the_bytes(tmp_path) -> None:
    path = tmp_path / "p.jsonl.gz"
    path.write_bytes(gzip.compress(jsonl({"id": "q1", "response": "a"})))
    with path.open("rb") as handle:
        assert parse_predictions(handle) == {"q1": "a"}


@pytest.mark.parametrize("seed", range(6))
def test_a_json_array_across_many_chunks_reads_as_json_loads_does(seed: int) -> None:
    # Records of every length, straddling the reader's 64 KB chunks, with all sorts of
    # whitespace and escapes between and inside them.
    rng = random.Random(seed)
    alphabet = 'ab 1,.0"\\\n\t\u2028é😀{}[]'
    records = [
        {
            "qa_id": f"q{i}",
            "answer": "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 50, 3000]))),
            **({"gt": "{1}"} if i % 3 == 0 else {}),
            **({"extra": [1, {"a": [2.5e3, None, True]}]} if i % 5 == 0 else {}),
        }
        for i in range(300)
    ]
    indent = rng.choice([None, 0, 2, "\t"])
    separators = rng.choice([None, (" ,\r\n ", " :\t")])
    text = json.dumps(
        records, indent=indent, separators=separators, ensure_ascii=rng.random() < 0.5
    )
    if rng.random() < 0.5:
        text = "\n  " + text + "  \n"
    read = read_predictions(text.encode())
    assert read.answers == {r["qa_id"]: r["answer"] for r in records}
    assert read.claimed_gold == {r["qa_id"]: "{1}" for r in records if "gt" in r}


def test_a_broken_json_array_names_the_line() -> None:
    body = ",\n".join(json.dumps({"id": f"q{i}", "response": "a" * 500}) for i in range(400))
    assert refused(("[" + body + ",\n{nope}]").encode()) == (
        "Line 401: not valid JSON (Expecting property name enclosed in double quotes)"
    )
    assert refused(("[" + body + "\n{nope}]").encode()) == (
        "Line 401: not valid JSON (Expecting ',' delimiter)"
    )
    assert refused(("[" + body + "]\n\nx").encode()) == (
        "Line 402: not valid JSON (Extra data after the array)"
    )
    assert refused(("[" + body).encode()) == "Line 400: not valid JSON (the array is not closed)"
