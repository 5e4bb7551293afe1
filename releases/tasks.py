"""Background work for releases. Tasks take ids and call one service each."""

from __future__ import annotations

from hctqa.celery import app


# No automatic retry: a failed build records why and leaves nothing behind, and the admin
# cuts it again. A worker that dies mid-build is noticed by its stale heartbeat; the message
# comes back (acks_late) and the next worker claims the build again.
@app.task(acks_late=True)
def build_release(build_id: int) -> str:
    from plumbing.errors import ApplicationError
    from releases.services import release_build_run

    try:
        release = release_build_run(build_id=build_id)
    except ApplicationError as exc:
        return f"failed: {exc.message}"
    return f"built release {release.version}" if release else "not queued"


# No automatic retry: a failed push records why, and the admin pushes again (a commit made
# but not tagged is tagged then). A worker that dies mid-push leaves it to be claimed again
# once CELERY_TASK_TIME_LIMIT has passed.
@app.task(acks_late=True)
def push_release(push_id: int) -> str:
    from plumbing.errors import ApplicationError
    from releases.services import release_push_run

    try:
        push = release_push_run(push_id=push_id)
    except ApplicationError as exc:
        return f"failed: {exc.message}"
    return f"pushed to {push.repo}: {push.commit_url}" if push else "not queued"
