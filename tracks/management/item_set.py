"""The options that choose a track's item set, shared by track_items and score_track."""

from __future__ import annotations

from argparse import ArgumentParser


def add_item_set_arguments(parser: ArgumentParser) -> None:
    parser.add_argument(
        "--mode",
        default="",
        choices=["", "region", "page"],
        help="extraction: the region or whole-page items only (default: both)",
    )
    parser.add_argument(
        "--data-scope",
        default="real",
        choices=["real", "synthetic"],
        help="qa: the real or synthetic tables' questions (default real)",
    )
