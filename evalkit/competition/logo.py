"""The competition's logo, drawn by evalkit: a podium of three ranked bars under a lens, as a PNG.

Pure Python (zlib + struct, no imaging library): a 256 x 256 RGB image whose
colour comes from the competition's title, so two competitions built from
one task still look apart. Codabench requires a logo (``image``) it can
decode as PNG, JPEG, GIF or WebP.
"""
from __future__ import annotations

import colorsys
import hashlib
import struct
import zlib

SIZE = 256


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width: int, height: int, rows: list[bytes]) -> bytes:
    """A truecolour PNG (8 bits per channel, no alpha) from ``rows`` of ``3 * width`` bytes each."""
    raw = b"".join(b"\x00" + row for row in rows)  # filter type 0 on every scanline
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, 9)) + _chunk(b"IEND", b"")


def _colour(hue: float, lightness: float, saturation: float) -> tuple[int, int, int]:
    r, g, b = colorsys.hls_to_rgb(hue % 1.0, lightness, saturation)
    return int(r * 255), int(g * 255), int(b * 255)


def draw_logo(title: str) -> bytes:
    """The logo for ``title`` as PNG bytes (deterministic)."""
    hue = int.from_bytes(hashlib.sha256(title.encode("utf-8")).digest()[:2], "big") / 65536
    top, bottom = _colour(hue, 0.42, 0.55), _colour(hue + 0.08, 0.22, 0.6)
    bar, lens = (255, 255, 255), _colour(hue + 0.5, 0.75, 0.7)
    # podium bars (x0, x1, top y): second, first, third place; a baseline under them
    bars = ((52, 100, 132), (108, 156, 84), (164, 212, 160))
    cx, cy, r_out, r_in = 176, 76, 40, 30
    rows = []
    for y in range(SIZE):
        t = y / (SIZE - 1)
        back = tuple(int(a + (b - a) * t) for a, b in zip(top, bottom))
        row = bytearray(bytes(back) * SIZE)
        for x0, x1, y0 in bars:
            if y0 <= y < 212:
                row[3 * x0: 3 * x1] = bytes(bar) * (x1 - x0)
        if 212 <= y < 220:
            row[3 * 40: 3 * 224] = bytes(bar) * 184
        for x in range(cx - r_out, cx + r_out + 1):
            d2 = (x - cx) ** 2 + (y - cy) ** 2
            if r_in * r_in <= d2 <= r_out * r_out:
                row[3 * x: 3 * x + 3] = bytes(lens)
        # the lens's handle: a thick diagonal from its rim towards the lower right
        for x in range(cx + 26, min(cx + 62, SIZE)):
            if abs((y - cy) - (x - cx)) <= 6 and y - cy >= 26:
                row[3 * x: 3 * x + 3] = bytes(lens)
        rows.append(bytes(row))
    return png(SIZE, SIZE, rows)
