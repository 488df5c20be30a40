import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { openApiDocument } from '../functions/openapi/document';
import { documentChanges } from '../functions/openapi/document-changes';

/**
 * `node --import tsx bin/openapi-diff.ts [git revision]`: what the OpenAPI document the source builds now
 * changes from docs/openapi.json at the revision (default HEAD): each addition, and each removal or change,
 * which a client generated from the old one may trip on. Exits 1 when there is anything but additions.
 */
const revision = process.argv[2] ?? 'HEAD';
const root = join(__dirname, '..');
const before: unknown = JSON.parse(execFileSync('git', ['show', `${revision}:docs/openapi.json`], { cwd: root, encoding: 'utf8' }));
const changes = documentChanges(before, openApiDocument());
for (const change of changes) console.log(`${change.kind.padEnd(7)} ${change.pointer}`);
const breaking = changes.filter((change) => change.kind !== 'added');
console.log(`${changes.length - breaking.length} added, ${breaking.length} removed or changed (against docs/openapi.json at ${revision})`);
process.exitCode = breaking.length > 0 ? 1 : 0;
