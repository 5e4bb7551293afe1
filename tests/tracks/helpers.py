"""Submitting to the tracks in tests: a file of predictions, a submission through the
service, scored by the worker's own service."""

from __future__ import annotations

import gzip
import json
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile

from tracks.models import TrackItem


def gold_predictions(track: str, split: str, mode: str = "") -> dict[str, Any]:
    items = TrackItem.objects.filter(track=track, split=split)
    if mode:
        items = items.filter(mode=mode)
    return dict(items.values_list("item_id", "gold"))


def track_file(predictions: dict[str, Any], *, gzipped: bool = False) -> SimpleUploadedFile:
    lines = "\n".join(json.dumps({"id": k, "prediction": v}) for k, v in predictions.items())
    data = lines.encode()
    name = "predictions.jsonl"
    if gzipped:
        data, name = gzip.compress(data), name + ".gz"
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def track_input(track: str, *, split: str = "validation", mode: str = "", **fields: Any):
    from leaderboard.services import SubmissionInput

    values = {
        "model_name": f"{track}-system",
        "weights": "open",
        "modality": "text",
        "table_format": "other",
        "split": split,
        "data_scope": "",
        "track": track,
        "mode": mode or ("region" if track == "extraction" else ""),
        **fields,
    }
    return SubmissionInput(**values)


def submit_track(owner, track: str, predictions: dict[str, Any], *, score: bool = True, **fields):
    from leaderboard import services

    submission = services.submission_create(
        owner=owner, data=track_input(track, **fields), predictions=track_file(predictions)
    )
    if score:
        services.submission_score(submission_id=submission.pk)
        submission.refresh_from_db()
    return submission
