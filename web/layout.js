// Where room markers go on screen: plain geometry on pixel points, no Leaflet.

// Groups points closer than `radius` pixels to a group's first point, in the order given (greedy;
// a grid of radius-sized cells keeps it near linear). Each group: {members, x, y} (x, y: the mean).
export function groupByDistance(points, radius) {
  const grid = new Map();
  const cellOf = (x, y) => Math.floor(x / radius) + ':' + Math.floor(y / radius);
  const groups = [];
  for (const p of points) {
    const group = nearbyGroup(grid, p, radius);
    if (group) {
      group.members.push(p);
      continue;
    }
    const created = { seed: p, members: [p] };
    groups.push(created);
    const key = cellOf(p.x, p.y);
    if (!grid.has(key)) grid.set(key, []);
    grid.get(key).push(created);
  }
  for (const g of groups) {
    g.x = g.members.reduce((s, p) => s + p.x, 0) / g.members.length;
    g.y = g.members.reduce((s, p) => s + p.y, 0) / g.members.length;
  }
  return groups;
}

function nearbyGroup(grid, p, radius) {
  const cx = Math.floor(p.x / radius), cy = Math.floor(p.y / radius);
  for (let dx = -1; dx <= 1; dx++) {
    for (let dy = -1; dy <= 1; dy++) {
      for (const g of grid.get((cx + dx) + ':' + (cy + dy)) || []) {
        if (Math.hypot(g.seed.x - p.x, g.seed.y - p.y) <= radius) return g;
      }
    }
  }
  return null;
}

// Offsets (pixels) that spread n markers from one spot so that none covers another: a column to the
// spot's right (labels run to the right of their pins, so no label covers a pin of its column), and
// further columns, `columnWidth` apart, past `perColumn` rows. `gap`: pixels between rows.
export function spreadOffsets(n, gap, columnWidth, perColumn = 8) {
  const offsets = [];
  for (let i = 0; i < n; i++) {
    const column = Math.floor(i / perColumn), row = i % perColumn;
    const rows = Math.min(perColumn, n - column * perColumn);
    offsets.push({ dx: gap + column * columnWidth, dy: (row - (rows - 1) / 2) * gap });
  }
  return offsets;
}
