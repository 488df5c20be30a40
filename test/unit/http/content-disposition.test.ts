import { attachment } from '../../../functions/http/content-disposition';

describe('Function: attachment (RFC 6266)', () => {
  it.each([
    ['report.pdf', `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`],
    ['naïve résumé.pdf', `attachment; filename="naive resume.pdf"; filename*=UTF-8''na%C3%AFve%20r%C3%A9sum%C3%A9.pdf`],
    ['日本.txt', `attachment; filename="__.txt"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.txt`],
    ['a\\b "c" (1)*.txt', `attachment; filename="a_b _c_ (1)*.txt"; filename*=UTF-8''a%5Cb%20%22c%22%20%281%29%2A.txt`],
  ])('%j', (name, header) => {
    expect(attachment(name)).toBe(header);
  });
});

describe('the ASCII fallback never reads as a path', () => {
  it.each([
    ['\uFF0E\uFF0E\uFF0F\uFF0E\uFF0E\uFF0F.bashrc', '.._.._.bashrc'],
    ['\uFF0E\uFF0E', 'download'],
    ['\uFF0E', 'download'],
    ['\u2024\u2024', 'download'],
  ])('%j falls back to %j', (name, fallback) => {
    const header = attachment(name);
    expect(header).toContain(`filename="${fallback}"`);
    expect(/filename="([^"]*)"/.exec(header)![1]).not.toMatch(/\/|^\.{0,2}$/);
  });
});

