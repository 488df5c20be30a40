import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDocument, openApiDocumentText } from '../functions/openapi/document';
import { openApiTypesText } from '../lib/openapi-types';

/**
 * `npm run openapi`: writes the API's OpenAPI document to docs/openapi.json and its TypeScript types to
 * client/src/generated/drive-api.ts (tests fail while either differs from what the source builds). With
 * `--print-types` it writes nothing and prints the types (openapi-typescript is an ES module, which a test
 * runs here rather than in Jest).
 */
async function main(): Promise<void> {
  const types = await openApiTypesText(openApiDocument());
  if (process.argv.includes('--print-types')) {
    process.stdout.write(types);
    return;
  }
  const root = join(__dirname, '..');
  const documentFile = join(root, 'docs', 'openapi.json');
  writeFileSync(documentFile, openApiDocumentText());
  console.log(`wrote ${documentFile}`);
  const typesFile = join(root, 'client', 'src', 'generated', 'drive-api.ts');
  writeFileSync(typesFile, types);
  console.log(`wrote ${typesFile}`);
}

void main();
