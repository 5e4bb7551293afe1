from __future__ import annotations

import gzip
import json

import pytest

from hctqa.core.predictions import PredictionsError, check_known, parse_predictions


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
        == "line 2: not valid JSON (Expecting property name enclosed in double quotes)"
    )
    assert refused(b'[{"id": "q1",\n "response": }]').startswith("line 2: not valid JSON")


def test_missing_keys_are_named() -> None:
    assert refused(jsonl({"response": "a"})) == (
        "line 1: no question id (expected one of question_id, qap_id, qa_id, id)"
    )
    assert refused(jsonl({"id": "q1", "text": "a"})) == (
        "line 1: no answer (expected one of response, answer, prediction)"
    )
    assert (
        refused(jsonl({"id": "q1", "response": None}))
        == "line 1: response must be a string, not NoneType"
    )
    assert refused(jsonl({"id": "q1", "response": "a"}, ["q2", "b"])) == (
        "line 2: each prediction must be a JSON object"
    )
    assert refused(b'["q1", "a"]') == "record 1: each prediction must be a JSON object"


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


def test_an_empty_file_is_refused() -> None:
    assert refused(b"") == "the file is empty"
    assert refused(b"\n  \n") == "the file is empty"
    assert refused(b"[]") == "the file holds no predictions"


def test_a_file_over_the_limit_is_refused_before_reading_it() -> None:
    assert (
        refused(b"x" * 2000, max_bytes=1000)
        == "the file is 2,000 bytes, over the 1,000 bytes limit"
    )


def test_a_small_gzip_that_unpacks_past_the_limit_is_refused() -> None:
    bomb = gzip.compress(b" " * 5_000_000)
    assert len(bomb) < 100_000
    assert (
        refused(bomb, max_bytes=1_000_000)
        == "the file is larger than the 1,000,000 bytes limit once unzipped"
    )
    assert refused(bomb[:-10]) == "the gzip file is truncated"


def test_an_undecodable_encoding_is_refused_with_its_offset() -> None:
    latin1 = '{"id": "q1", "response": "café"}'.encode("latin-1")
    assert refused(latin1) == "the file is not UTF-8 text: undecodable byte 0xe9 at offset 29"
