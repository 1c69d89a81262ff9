"""The miner pins glibc's mmap threshold (mining/core/allocator.py): a block of a few MiB
freed and asked for again is a mapping of its own, not a hole in the heap."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mining.core import allocator

# Frees a 4 MiB mapped block (glibc's dynamic threshold rises to 4 MiB), then asks for
# 1 MiB and prints how many bytes that added to the mapped blocks (mallinfo2's hblkhd).
_PROBE = """
import ctypes, sys
libc = ctypes.CDLL(None)
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in (
        "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split())]
libc.mallinfo2.restype = Info
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
if sys.argv[1] == "pinned":
    from mining.core.allocator import pin_mmap_threshold
    assert pin_mmap_threshold()
libc.free(libc.malloc(4 << 20))
before = libc.mallinfo2().hblkhd
block = libc.malloc(1 << 20)
print(libc.mallinfo2().hblkhd - before)
"""


def _mapped_bytes_of_a_second_block(mode: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_after_the_pin_a_large_block_freed_leaves_later_ones_mapped():
    if allocator._mallopt() is None:
        pytest.skip("no mallopt: not glibc")
    # The control: glibc's default moves the 1 MiB block onto the heap.
    assert _mapped_bytes_of_a_second_block("default") == 0
    assert _mapped_bytes_of_a_second_block("pinned") >= 1 << 20


def test_mining_pins_the_threshold_before_its_first_batch(monkeypatch, store_factory):
    from mining.core import MineConfig, mine_range, miner

    from .conftest import random_sentences, tiny_loaded

    loaded = tiny_loaded("gpt2")
    store = store_factory(loaded, random_sentences(8, seed=1), max_tokens=6)
    events: list[str] = []
    monkeypatch.setattr(miner, "pin_mmap_threshold", lambda: events.append("pin"))
    monkeypatch.setattr(loaded, "forward", lambda *a: events.append("batch"))
    cfg = MineConfig(keep_k=2, top_k=2, max_tokens=6, batch_size=4, sort_window=2)
    mine_range(loaded, store, cfg, 0, len(store))
    assert events[:2] == ["pin", "batch"] and events.count("pin") == 1, events
