import type { UploadProgress } from '../drive';

/** `n` bytes for people: B, KiB, MiB, GiB, TiB with one decimal above bytes. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** Seconds as `m:ss` (or `h:mm:ss`). */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}

/**
 * One line of progress for a terminal, fitted to `width` columns: a bar of the bytes, files done of all,
 * bytes, the mean rate so far and the time left at that rate.
 */
export function renderProgressLine(progress: UploadProgress, elapsedMs: number, width: number): string {
  const files = progress.filesDone + progress.filesFailed;
  const fraction = progress.bytesTotal > 0 ? Math.min(1, progress.bytesDone / progress.bytesTotal) : progress.filesTotal > 0 ? files / progress.filesTotal : 1;
  const rate = elapsedMs > 0 ? (progress.bytesDone * 1000) / elapsedMs : 0;
  const left = progress.bytesTotal - progress.bytesDone;
  const eta = rate > 0 ? formatDuration(left / rate) : '-:--';
  const failed = progress.filesFailed > 0 ? ` ${progress.filesFailed} failed` : '';
  const text = ` ${files}/${progress.filesTotal} files${failed}  ${formatBytes(progress.bytesDone)}/${formatBytes(progress.bytesTotal)}  ${formatBytes(Math.round(rate))}/s  ETA ${eta}`;
  const barWidth = Math.max(0, Math.min(30, width - text.length - 3));
  if (barWidth < 5) return text.trimStart().slice(0, width);
  const filled = Math.round(fraction * barWidth);
  return `[${'#'.repeat(filled)}${'-'.repeat(barWidth - filled)}]${text}`;
}

/** A line redrawn in place on a terminal, at most ten times a second. */
export class ProgressLine {
  private last = 0;
  private shown = false;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly started: number,
  ) {}

  update(progress: UploadProgress, force = false): void {
    const now = Date.now();
    if (!force && now - this.last < 100) return;
    this.last = now;
    this.stream.write(`\r${renderProgressLine(progress, now - this.started, this.stream.columns || 80)}\x1b[K`);
    this.shown = true;
  }

  /** Clears the line, so that another line can be printed above the bar. */
  clear(): void {
    if (this.shown) this.stream.write('\r\x1b[K');
  }

  /** Leaves the last state on screen and moves to a new line. */
  done(progress: UploadProgress): void {
    this.update(progress, true);
    this.stream.write('\n');
    this.shown = false;
  }
}
