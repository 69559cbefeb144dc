// A line diff of two texts (longest common subsequence), for comparing two
// versions' scripts. Pure; scripts are small, so O(n·m) is fine up to a cap.

export type DiffLine =
  | { kind: "same"; text: string; a: number; b: number }
  | { kind: "removed"; text: string; a: number }
  | { kind: "added"; text: string; b: number };

/** Largest n·m compared line by line; beyond it the texts are shown as replaced. */
export const MAX_CELLS = 4_000_000;

export function diffLines(before: string, after: string): DiffLine[] {
  const a = before === "" ? [] : before.split("\n");
  const b = after === "" ? [] : after.split("\n");
  const n = a.length;
  const m = b.length;
  if (n * m > MAX_CELLS) {
    return [
      ...a.map((text, i): DiffLine => ({ kind: "removed", text, a: i + 1 })),
      ...b.map((text, j): DiffLine => ({ kind: "added", text, b: j + 1 })),
    ];
  }
  // lcs[i][j] = length of the LCS of a[i..] and b[j..]
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    const row = lcs[i]!;
    const next = lcs[i + 1]!;
    for (let j = m - 1; j >= 0; j--) {
      row[j] = a[i] === b[j] ? next[j + 1]! + 1 : Math.max(next[j]!, row[j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ kind: "same", text: a[i]!, a: i + 1, b: j + 1 });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) {
      out.push({ kind: "removed", text: a[i]!, a: i + 1 });
      i++;
    } else {
      out.push({ kind: "added", text: b[j]!, b: j + 1 });
      j++;
    }
  }
  for (; i < n; i++) out.push({ kind: "removed", text: a[i]!, a: i + 1 });
  for (; j < m; j++) out.push({ kind: "added", text: b[j]!, b: j + 1 });
  return out;
}

/** Counts of added and removed lines. */
export function diffStats(lines: DiffLine[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of lines) {
    if (l.kind === "added") added++;
    else if (l.kind === "removed") removed++;
  }
  return { added, removed };
}
