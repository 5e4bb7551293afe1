"""Inference runs: the benchmark's questions sent to an OpenAI-compatible endpoint, and the
answers turned into a scored submission. ``runs`` starts, cancels and resumes them;
``prompts`` builds what they send; ``execution`` sends it and saves the answers; ``sweep``
finds the runs whose worker died.

- **Nothing is lost.** The answers that arrive are committed together, within
  ``INFERENCE_SAVE_MS`` (a second) of arriving. Running again sends only the questions with
  no saved reply, so a run whose worker was killed resumes where it stopped, having lost at
  most its last second of answers, which it asks again.
- **One executor per run.** Starting claims the run with a conditional UPDATE and a lease
  token; every save and heartbeat checks the token, so two workers never work on one run.
- **Cache.** A reply is kept under SHA-256(model, endpoint, prompt hash, decoding
  parameters, credential); the same request under the same credential in any later run is
  answered from it, not sent. The credential is a registered endpoint with its key (shared
  by the people who may use it) or a person with their own key (theirs alone), keys as a
  keyed hash (``endpoints.keys.credential_digest``).
- **Daily limit.** A run on test questions (split test or all) takes one of its owner's
  daily test-split submissions when it is started, like an upload; cancelled and failed
  runs keep it used. Resuming a run, and the submission it produces, take no other.
- **Keys.** A run on a registered endpoint sends that endpoint's key, read on the worker;
  a run on the researcher's own endpoint sends only the key they gave, sealed in the run
  while it may still send. Every write that ends a run erases it in the same update (a
  check constraint refuses one that does not); resuming asks for it again.
"""

from leaderboard.services.inference.execution import (
    Progress,
    ProgressCallback,
    inference_run_execute,
)
from leaderboard.services.inference.runs import (
    InferenceRunInput,
    inference_run_cancel,
    inference_run_create,
    inference_run_resume,
)
from leaderboard.services.inference.sweep import InferenceSweepResult, inference_run_sweep

__all__ = [
    "InferenceRunInput",
    "InferenceSweepResult",
    "Progress",
    "ProgressCallback",
    "inference_run_cancel",
    "inference_run_create",
    "inference_run_execute",
    "inference_run_resume",
    "inference_run_sweep",
]
