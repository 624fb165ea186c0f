"""Write small TZif v2 files (RFC 8536) for tests: synthetic zones with any transitions."""

from __future__ import annotations

import struct


def tzif_bytes(transitions: list[tuple[int, int]], initial_offset: int, footer: str = "") -> bytes:
    """TZif v2 bytes: ``transitions`` as (utc_seconds, offset_after); isdst is 0 throughout."""
    offsets = [initial_offset]
    for _, off in transitions:
        if off not in offsets:
            offsets.append(off)
    abbrs = b"".join(b"Z%d\x00" % i for i in range(len(offsets)))
    ttinfos = b"".join(struct.pack(">lBB", off, 0, 3 * i) for i, off in enumerate(offsets))
    times = [t for t, _ in transitions]
    idx = bytes(offsets.index(off) for _, off in transitions)

    def block(size: str, tsize: int) -> bytes:
        header = struct.pack(
            ">4sc15x6l", b"TZif", b"2", 0, 0, 0, len(times), len(offsets), len(abbrs)
        )
        return header + b"".join(struct.pack(size, t) for t in times) + idx + ttinfos + abbrs

    v1 = block(">l", 4) if all(-(2**31) <= t < 2**31 for t in times) else block(">l", 4)[:0]
    if not v1:  # times out of 32-bit range: an empty v1 block
        v1 = (struct.pack(">4sc15x6l", b"TZif", b"2", 0, 0, 0, 0, 1, 4) + struct.pack(">lBB", initial_offset, 0, 0)
              + b"Z0\x00\x00")
    return v1 + block(">q", 8) + b"\n" + footer.encode() + b"\n"
