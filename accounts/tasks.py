"""Background work for accounts: sending the queued emails. Tasks take ids."""

from __future__ import annotations

from django.conf import settings

from accounts.mail import RETRY_CAP, RETRY_FIRST, EmailDeferred
from hctqa.celery import app


# On the "default" queue. A connection takes at most EMAIL_TIMEOUT per step, and the task a
# few steps' worth; a failure waits a minute, then twice as long each time (the same waits
# the sweeper keeps to), up to EMAIL_MAX_ATTEMPTS tries in all.
@app.task(
    acks_late=True,
    autoretry_for=(EmailDeferred,),
    retry_backoff=int(RETRY_FIRST.total_seconds()),
    retry_backoff_max=int(RETRY_CAP.total_seconds()),
    retry_jitter=False,
    max_retries=max(0, settings.EMAIL_MAX_ATTEMPTS - 1),
    soft_time_limit=3 * settings.EMAIL_TIMEOUT,
    time_limit=3 * settings.EMAIL_TIMEOUT + 10,
)
def send_email(email_id: int) -> str:
    from accounts.mail import email_send

    return email_send(email_id=email_id)


@app.task(acks_late=True)
def send_waiting_emails() -> dict[str, int]:
    from accounts.mail import emails_sweep

    sweep = emails_sweep()
    return {"queued": len(sweep.queued), "taken_back": sweep.taken_back}


@app.task(acks_late=True)
def send_approval_digests() -> int:
    """The admins' digest of the waiting approval requests, at most one an hour each."""
    from accounts.services import approval_digests_queue

    return approval_digests_queue()
