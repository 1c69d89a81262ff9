"""The C allocator's mmap threshold, pinned while mining (docs/mining.md, "The streaming
miner", Memory).

glibc serves a request above its mmap threshold (128 KiB at first) with a mapping of its
own, returned to the system when freed. By default the threshold is dynamic: freeing a
mapped block raises it to that block's size (up to 32 MiB). After the first batch the
miner's activations, a few MiB each, are carved out of the heap instead, and tensors of
different shapes leave holes there that the heap never gives back. The peak then grows
with the number of batches: 656 MiB for 1,000 sentences and 731 MiB for 4,000 in the
memory bench, against 610 and 626 MiB with the threshold pinned.

Setting the threshold explicitly (``mallopt(M_MMAP_THRESHOLD, ...)``) also turns the
dynamic adjustment off. Elsewhere than glibc there is no ``mallopt`` and nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any

M_MMAP_THRESHOLD = -3  # glibc's malloc.h
MMAP_THRESHOLD = 128 * 1024  # glibc's own starting value, kept


@functools.cache
def _mallopt() -> Any:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name).mallopt
    except (OSError, AttributeError):  # no libc to load, or one without mallopt (musl)
        return None


def pin_mmap_threshold() -> bool:
    """Pin glibc's mmap threshold at its starting value; True where it was set."""
    mallopt = _mallopt()
    if mallopt is None:
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
