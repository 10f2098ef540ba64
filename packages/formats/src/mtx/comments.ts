/**
 * The header comments a Matrix Market reader keeps: every comment line while under both caps
 * (lines and bytes), past them only a count, so a file of 10^8 comment lines costs O(1) memory
 * (it used to exhaust the V8 heap). No node imports.
 * @module
 */

/** Kept comment lines (without '%' and a trailing '\r') and the count of those past the caps. */
export class CommentLog {
  readonly kept: string[] = [];
  omitted = 0;
  private bytes = 0;

  constructor(
    private readonly maxLines: number,
    private readonly maxBytes: number,
  ) {}

  /** Keep bytes [s, e) of `buf` as one comment line, or count it when a cap is reached. O(e − s). */
  add(buf: Uint8Array, s: number, e: number): void {
    const len = e - s;
    if (this.kept.length >= this.maxLines || this.bytes + len > this.maxBytes) {
      this.omitted++;
      return;
    }
    this.bytes += len;
    let text = new TextDecoder().decode(buf.subarray(s, e));
    if (text.endsWith('\r')) text = text.slice(0, -1);
    this.kept.push(text);
  }
}
