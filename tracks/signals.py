"""What the tracks tell the apps above them (the leaderboard) without importing them."""

from __future__ import annotations

from django.dispatch import Signal

# Sent by a build once its items are stored, inside the build's job (its heartbeat keeps
# beating): ``tracks``, the slugs built; ``report(fraction, stage)``, the build's progress
# bar for what a receiver does. Receivers return how many rows they queued (the board's
# baselines, made again on the new items).
items_built = Signal()
