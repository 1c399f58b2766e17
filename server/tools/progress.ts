/** One self-rewriting status line on a terminal; silent when output goes to a file or a pipe. */
export class Progress {
  private last = 0;
  private shown = false;

  constructor(private readonly out: NodeJS.WriteStream) {}

  update(text: string): void {
    if (!this.out.isTTY) return;
    const now = Date.now();
    if (now - this.last < 200) return;
    this.last = now;
    this.shown = true;
    this.out.write(`\r\x1b[K${text}`);
  }

  done(): void {
    if (this.shown) this.out.write('\r\x1b[K');
  }
}
