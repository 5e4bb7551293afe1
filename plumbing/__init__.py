"""The platform's shared plumbing: what every app uses and that belongs to none of them.

Errors and their mapping to responses (``errors``, ``api``), API throttles, pagination and
parsers, request limits, redirects, CSV escaping, the task heartbeat (``heartbeat``), the
platform's git commit, the log filters and the filesystem broker. It imports Django and the
pure core, never an app.
"""
