"""Draws Maskflow's application icon (a masked cell grid on an indigo tile)
at every size the bundles need, as RGBA PNGs plus icon.ico. Pure Python:
run `python3 icons/make_icons.py` after changing the design."""
import math
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def pixel(x, y, n):
    """RGBA of pixel (x, y) in an n×n icon, from a 0..1 design space."""
    u, v = (x + 0.5) / n, (y + 0.5) / n
    # rounded square tile
    r = 0.22
    dx, dy = max(abs(u - 0.5) - (0.5 - r), 0), max(abs(v - 0.5) - (0.5 - r), 0)
    if math.hypot(dx, dy) > r:
        return (0, 0, 0, 0)
    t = (u + v) / 2
    base = (int(79 + (99 - 79) * t), int(70 + (102 - 70) * t), int(229 + (241 - 229) * t))
    # a 3x3 grid of cells; masked cells are hatched, one cell is plain white
    gx, gy = (u - 0.2) / 0.6, (v - 0.2) / 0.6
    if 0 <= gx < 1 and 0 <= gy < 1:
        cx, cy = int(gx * 3), int(gy * 3)
        fx, fy = gx * 3 - cx, gy * 3 - cy
        if 0.12 < fx < 0.88 and 0.12 < fy < 0.88:
            if (cx + cy) % 2 == 0:
                return (255, 255, 255, 255)
            return (199, 210, 254, 255) if int((fx + fy) * 6) % 2 else base + (255,)
    return base + (255,)


def png(n):
    rows = b"".join(
        b"\x00" + bytes(c for x in range(n) for c in pixel(x, y, n)) for y in range(n)
    )
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", n, n, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def main():
    for name, n in [("32x32.png", 32), ("128x128.png", 128), ("128x128@2x.png", 256), ("icon.png", 512)]:
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(png(n))
    data = png(256)
    ico = struct.pack("<HHH", 0, 1, 1) + struct.pack("<BBBBHHII", 0, 0, 0, 0, 1, 32, len(data), 22) + data
    with open(os.path.join(HERE, "icon.ico"), "wb") as f:
        f.write(ico)


if __name__ == "__main__":
    main()
