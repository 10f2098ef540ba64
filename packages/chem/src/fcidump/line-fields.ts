/** Splitting an FCIDUMP body line into whitespace-separated fields. @module */

const isSpace = (c: number) => c === 32 || c === 9 || c === 13 || c === 11 || c === 12;

/** Whitespace-separated fields of a line with their 1-based columns. */
export function fields(s: string): { text: string; col: number }[] {
  const out: { text: string; col: number }[] = [];
  let i = 0;
  while (i < s.length) {
    while (i < s.length && isSpace(s.charCodeAt(i))) i++;
    if (i === s.length) break;
    const start = i;
    while (i < s.length && !isSpace(s.charCodeAt(i))) i++;
    out.push({ text: s.slice(start, i), col: start + 1 });
  }
  return out;
}
