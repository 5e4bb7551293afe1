"""R's default random numbers, sampling, rounding and number printing, bit for bit.

The benchmark's generator ran in R (Mersenne-Twister, "Rejection" sampling, R >= 3.6), so a
byte-exact port must draw exactly what R draws: R's seeding (``set.seed``), the generator
(vectorised with numpy) and R's integer sampling on top of it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

import numpy as np

T = TypeVar("T")

_N = 624
_M = 397
_UPPER = np.uint32(0x80000000)
_LOWER = np.uint32(0x7FFFFFFF)
_MATRIX_A = np.uint32(0x9908B0DF)
_I2_32M1 = 2.328306437080797e-10  # 1 / (2^32 - 1), R's fixup for a zero draw
_TO_UNIT = 2.3283064365386963e-10  # 2^-32


def _lcg_jumps() -> tuple[np.ndarray, np.ndarray]:
    """x_k = A_k * x_0 + C_k (mod 2^32) for the 50 + 625 steps of R's seed scrambling."""
    a_k, c_k, a_out, c_out = 1, 0, [], []
    for step in range(1, 50 + _N + 2):
        a_k, c_k = (69069 * a_k) % 2**32, (69069 * c_k + 1) % 2**32
        if step > 51:  # the 51st value is R's `mti` slot; the MT state follows it
            a_out.append(a_k)
            c_out.append(c_k)
    return np.array(a_out, dtype=np.uint64), np.array(c_out, dtype=np.uint64)


_JUMP_A, _JUMP_C = _lcg_jumps()


def _r_seed_state(seed: int) -> np.ndarray:
    """The MT19937 state R's ``set.seed(seed)`` leaves (Initial scrambling + RNG_Init)."""
    x = np.uint64(seed % 2**32)
    return ((_JUMP_A * x + _JUMP_C) % np.uint64(2**32)).astype(np.uint32)


def _twist(mt: np.ndarray) -> np.ndarray:
    """One MT19937 regeneration of the 624-word state, vectorised in dependency-safe chunks."""
    new = np.empty_like(mt)

    def step(lo: int, hi: int, source: np.ndarray) -> None:
        y = (mt[lo:hi] & _UPPER) | (mt[lo + 1 : hi + 1] & _LOWER)
        new[lo:hi] = source ^ (y >> np.uint32(1)) ^ ((y & np.uint32(1)) * _MATRIX_A)

    step(0, _N - _M, mt[_M:_N])
    step(_N - _M, 2 * (_N - _M), new[0 : _N - _M])
    step(2 * (_N - _M), _N - 1, new[_N - _M : _M - 1])
    y = (mt[_N - 1] & _UPPER) | (new[0] & _LOWER)
    new[_N - 1] = new[_M - 1] ^ (y >> np.uint32(1)) ^ ((y & np.uint32(1)) * _MATRIX_A)
    return new


def _temper(mt: np.ndarray) -> list[int]:
    y = mt.copy()
    y ^= y >> np.uint32(11)
    y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
    y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
    y ^= y >> np.uint32(18)
    return y.tolist()


class RRandom:
    """One R session's random stream after ``set.seed(seed)``."""

    def __init__(self, seed: int) -> None:
        self._state = _r_seed_state(seed)
        self._buffer: list[int] = []
        self._pos = _N
        self._blocks = 0

    def _refill(self) -> None:
        self._state = _twist(self._state)
        self._buffer = _temper(self._state)
        self._pos = 0
        self._blocks += 1

    def _word(self) -> int:
        if self._pos >= _N:
            self._refill()
        word = self._buffer[self._pos]
        self._pos += 1
        return word

    @property
    def words_drawn(self) -> int:
        """Raw 32-bit words (R's unif_rand calls) consumed so far."""
        return (self._blocks - 1) * _N + self._pos if self._blocks else 0

    def skip_words(self, count: int) -> None:
        """Throw away ``count`` raw draws (R's unif_rand calls)."""
        for _ in range(count):
            self._word()

    def burn_permutation(self, n: int) -> None:
        """The draws of ``sample.int(n)`` without building it (a tight loop: the nonsensical
        variant spends millions of draws on tables it does not write)."""
        buffer, pos = self._buffer, self._pos
        for m in range(n, 0, -1):
            mask = (1 << (m - 1).bit_length()) - 1
            if mask > 0x7FFF:
                self._pos = pos
                self.unif_index(m)
                buffer, pos = self._buffer, self._pos
                continue
            while True:
                if pos >= _N:
                    self._pos = pos
                    self._refill()
                    buffer, pos = self._buffer, 0
                v = (buffer[pos] >> 16) & mask
                pos += 1
                if v < m:
                    break
        self._pos = pos

    def unif_rand(self) -> float:
        """R's ``unif_rand()``: a double in (0, 1)."""
        word = self._word()
        if word == 0:
            return 0.5 * _I2_32M1
        return word * _TO_UNIT

    def unif_index(self, n: int) -> int:
        """R's ``R_unif_index(n)``: uniform in 0..n-1 by rejection on random bits."""
        if n <= 0:
            return 0
        bits = (n - 1).bit_length()  # ceil(log2(n))
        mask = (1 << bits) - 1
        if bits <= 15:
            # One 16-bit chunk: floor(unif_rand * 65536) is the word's top 16 bits.
            while True:
                v = (self._word() >> 16) & mask
                if v < n:
                    return v
        while True:
            v = 0
            for _ in range(0, bits + 1, 16):
                v = 65536 * v + (self._word() >> 16)
            v &= mask
            if v < n:
                return v

    def sample_int(self, n: int, k: int | None = None) -> list[int]:
        """``sample.int(n, k)`` without replacement: 1-based values."""
        k = n if k is None else k
        if k > n:
            raise ValueError(f"Cannot take a sample of {k} from {n} without replacement")
        pool = list(range(n))
        out = []
        length = n
        buffer, pos = self._buffer, self._pos
        for _ in range(k):
            mask = (1 << (length - 1).bit_length()) - 1
            if mask > 0x7FFF:
                self._pos = pos
                j = self.unif_index(length)
                buffer, pos = self._buffer, self._pos
            else:
                while True:
                    if pos >= _N:
                        self._pos = pos
                        self._refill()
                        buffer, pos = self._buffer, 0
                    j = (buffer[pos] >> 16) & mask
                    pos += 1
                    if j < length:
                        break
            out.append(pool[j] + 1)
            length -= 1
            pool[j] = pool[length]
        self._pos = pos
        return out

    def sample(self, x: Sequence[T], k: int | None = None) -> list[T]:
        """``sample(x, k)`` for a vector ``x`` of length > 1 (a permutation when k is None)."""
        return [x[i - 1] for i in self.sample_int(len(x), k)]

    def sample_number(self, x: int, k: int | None = None) -> list[int]:
        """``sample(x, k)`` for a single number ``x >= 1``: R samples from 1..x."""
        return self.sample_int(int(x), k)

    def sample_letters(self, size: int = 10) -> None:
        """``sample(letters, size, replace=TRUE)``, drawn and discarded."""
        for _ in range(size):
            self.unif_index(26)

    def runif(self, a: float, b: float) -> float:
        if a == b:
            return a
        return a + (b - a) * self.unif_rand()


def r_colon(start: int, end: int) -> list[int]:
    """R's ``start:end`` for whole numbers: decreasing when start > end."""
    if start <= end:
        return list(range(start, end + 1))
    return list(range(start, end - 1, -1))


def sample_r(rng: RRandom, x: Sequence[int], k: int | None = None) -> list[int]:
    """R's ``sample(x, k)`` on a numeric vector, including its single-number rule."""
    if len(x) == 1 and x[0] >= 1:
        return rng.sample_number(x[0], k)
    return rng.sample(list(x), k)


_LOG10_2 = math.log10(2)


def r_round(x: float, digits: int = 2) -> float:
    """R (>= 4.0.0) ``round(x, digits)`` for digits > 0: the closer of the two candidates
    computed in doubles, ties to the even last digit."""
    if not math.isfinite(x) or x == 0.0:
        return x
    if x < 0:
        return -r_round(-x, digits)
    if _LOG10_2 * (0.5 + math.frexp(x)[1] - 1) + digits > 15:
        return x
    pow10 = 10.0**digits
    x10 = pow10 * x
    i10 = math.floor(x10)
    xd = i10 / pow10
    xu = math.ceil(x10) / pow10
    du = xu - x
    dd = x - xd
    if du < dd or (du == dd and i10 % 2 == 1):
        return xu
    return xd


def r_format(x: float | int) -> str:
    """R's ``as.character`` of a number: up to 15 significant digits, no trailing zeros,
    scientific notation only when it is shorter (``1e+05``), and ``0`` for ``-0``."""
    if isinstance(x, int):
        x = float(x)
    if x == 0:
        return "0"
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Inf" if x > 0 else "-Inf"
    negative = x < 0
    mantissa, exponent = f"{abs(x):.14e}".split("e")
    digits = mantissa.replace(".", "").rstrip("0") or "0"
    exp10 = int(exponent)
    nsig = len(digits)
    sign = "-" if negative else ""
    # Fixed notation: digits before and after the point.
    if exp10 >= 0:
        decimals = max(0, nsig - exp10 - 1)
        fixed_width = exp10 + 1 + (decimals + 1 if decimals else 0)
    else:
        decimals = nsig - exp10 - 1
        fixed_width = 1 + decimals + 1
    exp_digits = f"{abs(exp10):02d}"
    sci_width = nsig + (1 if nsig > 1 else 0) + 2 + len(exp_digits)
    if fixed_width <= sci_width:
        return sign + f"{abs(x):.{decimals}f}"
    sci_mantissa = digits[0] + ("." + digits[1:] if nsig > 1 else "")
    return f"{sign}{sci_mantissa}e{'+' if exp10 >= 0 else '-'}{exp_digits}"
