"""Who may cut, follow and publish releases (``plumbing.permissions``). ``None`` as the user
of a service is the server's operator, running a command."""

from __future__ import annotations

from plumbing.permissions import Rule

CUTTING = Rule("Only admins cut releases", ("releases.add_release",))
PUBLISHING = Rule("Only admins publish releases", ("releases.add_release",))
# A build under way: its page, its API, the list's notice of it.
FOLLOWING_BUILDS = Rule("Only admins see release builds", ("releases.add_release",))
FULL_EDITION = Rule(
    "The full edition, with the test split's gold answers, is for admins",
    ("releases.download_full_release",),
)
