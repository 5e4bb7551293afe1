"""Statistics beyond the paper's tables: paired bootstrap comparisons of two systems, and the
regression of recall on table properties (paper Table 4 / Table 9)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from hctqa.core.taxonomy import TABLE_PROPERTIES, Taxonomy
from hctqa.core.wording import counted

# --- Paired bootstrap ----------------------------------------------------------------------


@dataclass(frozen=True)
class PairedComparison:
    n: int
    mean_a: float
    mean_b: float
    difference: float  # mean_a - mean_b
    ci_low: float
    ci_high: float
    p_value: float
    resamples: int


def paired_bootstrap(
    a: Sequence[float], b: Sequence[float], *, resamples: int = 2000, seed: int = 0
) -> PairedComparison:
    """Is system A better than B on the same questions?

    Questions are resampled with replacement, keeping each question's pair of scores
    together. The 95% interval is the percentile interval of the resampled difference; the
    two-sided p-value is the share of resampled differences, centred on zero, at least as far
    from zero as the observed one (Berg-Kirkpatrick et al., 2012), with add-one smoothing so
    it is never reported as exactly 0.
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError("Both systems need one score per shared question")
    n = len(x)
    if n == 0:
        raise ValueError("The two submissions share no questions")
    diffs = x - y
    observed = float(diffs.mean())
    rng = np.random.default_rng(seed)
    samples = np.empty(resamples)
    chunk = max(1, min(resamples, 2_000_000 // n))  # bounded memory: ~16 MB of indices
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        index = rng.integers(0, n, size=(size, n), dtype=np.int32)
        samples[start : start + size] = diffs[index].mean(axis=1)
    low, high = np.percentile(samples, [2.5, 97.5])
    extreme = int(np.sum(np.abs(samples - observed) >= abs(observed)))
    return PairedComparison(
        n=n,
        mean_a=float(x.mean()),
        mean_b=float(y.mean()),
        difference=observed,
        ci_low=float(low),
        ci_high=float(high),
        p_value=(extreme + 1) / (resamples + 1),
        resamples=resamples,
    )


# --- Regression of recall on table properties ----------------------------------------------


@dataclass(frozen=True)
class Coefficient:
    code: str
    label: str
    coef: float
    std_error: float
    t: float
    p_value: float
    tables_with: int


@dataclass(frozen=True)
class Regression:
    n: int
    r_squared: float
    intercept: float
    coefficients: tuple[Coefficient, ...]
    dropped: tuple[str, ...]  # properties no table (or every table) has


def regression_properties(taxonomy: Taxonomy = TABLE_PROPERTIES) -> list[str]:
    """The regressors: leaf properties and childless roots. Parents are unions of their
    children (collinear with them), and Standard Relational Table is the baseline."""
    parents = {p.parent for p in taxonomy.properties if p.parent}
    return [
        p.code
        for p in taxonomy.properties
        if p.code not in parents and p.code not in taxonomy.exclusive and p.kind == "flag"
    ]


def regress_on_table_properties(
    outcome: Mapping[str, float], properties: Mapping[str, Mapping[str, object]]
) -> Regression:
    """OLS of an outcome per table (mean recall) on the table's properties.

    ``outcome`` and ``properties`` are keyed by table id; tables missing from either are left
    out. p-values are two-sided, from Student's t with n - k degrees of freedom.
    """
    from scipy import stats  # Only this function needs scipy; keep the core import light.

    tables = sorted(set(outcome) & set(properties))
    codes = regression_properties()
    matrix = np.array(
        [[1.0 if properties[t].get(c) is True else 0.0 for c in codes] for t in tables]
    )
    y = np.array([outcome[t] for t in tables], dtype=np.float64)
    n = len(tables)
    if n == 0:
        raise ValueError("No table has both scores and properties")
    counts = matrix.sum(axis=0) if n else np.zeros(len(codes))
    keep = [i for i, c in enumerate(counts) if 0 < c < n]
    dropped = tuple(codes[i] for i in range(len(codes)) if i not in keep)
    x = np.column_stack([np.ones(n), matrix[:, keep]]) if keep else np.ones((n, 1))
    k = x.shape[1]
    if n <= k:
        raise ValueError(f"Too few tables ({n}) for {counted(k - 1, 'property', 'properties')}")
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    residuals = y - x @ beta
    dof = n - k
    sigma2 = float(residuals @ residuals) / dof
    covariance = sigma2 * np.linalg.pinv(x.T @ x)
    std_errors = np.sqrt(np.clip(np.diag(covariance), 0, None))
    total = float(((y - y.mean()) ** 2).sum())
    r_squared = 1 - float(residuals @ residuals) / total if total > 0 else 0.0
    coefficients = []
    for position, i in enumerate(keep, start=1):
        se = float(std_errors[position])
        t = float(beta[position]) / se if se > 0 else math.inf
        p = float(2 * stats.t.sf(abs(t), dof)) if math.isfinite(t) else 0.0
        coefficients.append(
            Coefficient(
                code=codes[i],
                label=_long_label(codes[i]),
                coef=float(beta[position]),
                std_error=se,
                t=t,
                p_value=p,
                tables_with=int(counts[i]),
            )
        )
    return Regression(
        n=n,
        r_squared=r_squared,
        intercept=float(beta[0]),
        coefficients=tuple(coefficients),
        dropped=dropped,
    )


def _long_label(code: str) -> str:
    prop = TABLE_PROPERTIES.get(code)
    if prop.parent is None:
        return prop.label
    return f"{TABLE_PROPERTIES.get(prop.parent).label}: {prop.label}"


# --- Breakdowns ----------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupMean:
    key: str
    label: str
    mean: float
    n: int


def group_means(
    scores: Mapping[str, float], groups: Mapping[str, Sequence[str]], labels: Mapping[str, str]
) -> list[GroupMean]:
    """Mean score of each group of question ids (groups with no scored question left out)."""
    out = []
    for key, members in groups.items():
        values = [scores[q] for q in members if q in scores]
        if values:
            out.append(
                GroupMean(key, labels.get(key, key), math.fsum(values) / len(values), len(values))
            )
    return out
