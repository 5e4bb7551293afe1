"""The property regression: recall regressed on table properties over the board."""

from __future__ import annotations

from django.db import models

from hctqa.core.wording import counted


class PropertyRegression(models.Model):
    """Recall regressed on table properties over all scored public submissions (real tables),
    refreshed whenever a submission changes."""

    computed_at = models.DateTimeField()
    submissions = models.PositiveIntegerField()
    tables = models.PositiveIntegerField()
    r_squared = models.FloatField()
    intercept = models.FloatField()
    coefficients = models.JSONField(default=list)
    dropped = models.JSONField(default=list)
    left_out = models.JSONField(
        default=list, help_text="Rows below the coverage or sanity rule: id, model_name, why."
    )

    class Meta:
        get_latest_by = "computed_at"

    def __str__(self) -> str:
        return (
            f"regression over {counted(self.submissions, 'submission')} "
            f"at {self.computed_at:%Y-%m-%d %H:%M}"
        )
