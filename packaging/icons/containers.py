"""Windows ``.ico`` and macOS ``.icns`` containers written from PNG images.

Both formats accept PNG-compressed entries (ICO since Windows Vista, ICNS since macOS 10.7), so a
container is a small header plus the PNG bytes we already render: no image library is needed to build
them, and the same code reads them back for the tests.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

#: ICNS entry type for each pixel size. Retina ``@2x`` types reuse the bigger image.
ICNS_TYPES: dict[str, int] = {
    "icp4": 16,
    "icp5": 32,
    "icp6": 64,
    "ic07": 128,
    "ic08": 256,
    "ic09": 512,
    "ic10": 1024,
    "ic11": 32,
    "ic12": 64,
    "ic13": 256,
    "ic14": 512,
}


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    if not data.startswith(PNG_SIGNATURE) or data[12:16] != b"IHDR":
        raise ValueError("not a PNG image")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def build_ico(pngs: Mapping[int, bytes]) -> bytes:
    """An ICO holding one PNG entry per size (sizes up to 256)."""
    sizes = sorted(pngs)
    if not sizes or sizes[-1] > 256:
        raise ValueError("ICO entries must be 1..256 pixels")
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    directory = b""
    payload = b""
    for size in sizes:
        data = pngs[size]
        if png_size(data) != (size, size):
            raise ValueError(f"the {size}px entry is not {size}x{size}")
        dim = 0 if size == 256 else size  # 0 means 256 in an ICO directory
        directory += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(data), offset + len(payload))
        payload += data
    return header + directory + payload


def read_ico(data: bytes) -> dict[int, bytes]:
    """The PNG entries of an ICO written by :func:`build_ico`, keyed by size."""
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    if reserved != 0 or kind != 1:
        raise ValueError("not an ICO file")
    entries: dict[int, bytes] = {}
    for index in range(count):
        dim, _, _, _, _, _, length, offset = struct.unpack("<BBBBHHII", data[6 + 16 * index: 22 + 16 * index])
        entries[dim or 256] = data[offset: offset + length]
    return entries


def build_icns(pngs: Mapping[int, bytes]) -> bytes:
    """An ICNS with every type in :data:`ICNS_TYPES` whose pixel size is available."""
    body = b""
    for kind, size in ICNS_TYPES.items():
        data = pngs.get(size)
        if data is None:
            continue
        if png_size(data) != (size, size):
            raise ValueError(f"the {size}px entry is not {size}x{size}")
        body += kind.encode("ascii") + struct.pack(">I", 8 + len(data)) + data
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def read_icns(data: bytes) -> dict[str, bytes]:
    """The entries of an ICNS file, keyed by their four-letter type."""
    if data[:4] != b"icns" or struct.unpack(">I", data[4:8])[0] != len(data):
        raise ValueError("not an ICNS file")
    entries: dict[str, bytes] = {}
    pos = 8
    while pos < len(data):
        kind = data[pos: pos + 4].decode("ascii")
        (length,) = struct.unpack(">I", data[pos + 4: pos + 8])
        entries[kind] = data[pos + 8: pos + length]
        pos += length
    return entries
