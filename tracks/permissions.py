"""Who may build the tracks' items and import ground-truth sets (``plumbing.permissions``).
``None`` as the user of a service is the server's operator, running a command."""

from __future__ import annotations

from plumbing.permissions import Rule

BUILDING_ITEMS = Rule("Only admins build the tracks' items", ("tracks.build_track_items",))
IMPORTING_GROUND_TRUTH = Rule("Only admins import ground-truth sets", ("tracks.build_track_items",))
