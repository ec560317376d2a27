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

// Offsets (pixels) that spread n markers around a point so that none overlaps another:
// a circle for a few, a spiral for more. `gap`: the least distance between two markers' centres.
export function spreadOffsets(n, gap) {
  if (n <= 1) return [{ dx: 0, dy: 0 }];
  if (n <= 8) {
    const r = Math.max(gap, gap / (2 * Math.sin(Math.PI / n)));
    return Array.from({ length: n }, (_, i) => {
      const a = -Math.PI / 2 + (2 * Math.PI * i) / n;
      return { dx: r * Math.cos(a), dy: r * Math.sin(a) };
    });
  }
  const offsets = [];
  let angle = 0, r = gap;
  for (let i = 0; i < n; i++) {
    offsets.push({ dx: r * Math.cos(angle), dy: r * Math.sin(angle) });
    const step = gap / r; // one gap along the arc
    angle += step;
    r += (gap * step) / (2 * Math.PI); // one gap further out per turn
  }
  return offsets;
}
