import { formatBytes, formatDuration, renderProgressLine } from '../../src/cli/progress';

const MiB = 1024 * 1024;

describe('Function: formatBytes', () => {
  it('uses binary units with one decimal', () => {
    expect([0, 1023, 1024, 1536, 10 * MiB, 3 * 1024 * MiB].map(formatBytes)).toEqual(['0 B', '1023 B', '1.0 KiB', '1.5 KiB', '10.0 MiB', '3.0 GiB']);
  });
});

describe('Function: formatDuration', () => {
  it('is m:ss, or h:mm:ss from an hour', () => {
    expect([0, 7.4, 65, 3599, 3661].map(formatDuration)).toEqual(['0:00', '0:07', '1:05', '59:59', '1:01:01']);
  });
});

describe('Function: renderProgressLine', () => {
  it('shows the bar, files, bytes, the rate so far and the time left at that rate', () => {
    const line = renderProgressLine({ filesTotal: 2000, filesDone: 500, filesFailed: 0, bytesTotal: 40 * MiB, bytesDone: 10 * MiB }, 5000, 100);
    expect(line).toBe(`[${'#'.repeat(8)}${'-'.repeat(22)}] 500/2000 files  10.0 MiB/40.0 MiB  2.0 MiB/s  ETA 0:15`);
  });

  it('counts failed files as handled and says how many failed', () => {
    const line = renderProgressLine({ filesTotal: 10, filesDone: 7, filesFailed: 3, bytesTotal: 70, bytesDone: 70 }, 1000, 120);
    expect(line).toContain('10/10 files 3 failed');
    expect(line).toContain('ETA 0:00');
  });

  it('has no rate or ETA before any byte, and drops the bar on a narrow terminal', () => {
    const progress = { filesTotal: 3, filesDone: 0, filesFailed: 0, bytesTotal: 100, bytesDone: 0 };
    expect(renderProgressLine(progress, 0, 100)).toMatch(/0 B\/s {2}ETA -:--$/);
    const narrow = renderProgressLine(progress, 0, 30);
    expect(narrow).not.toContain('[');
    expect(narrow.length).toBeLessThanOrEqual(30);
  });
});
