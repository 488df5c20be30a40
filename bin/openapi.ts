import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDocumentText } from '../functions/openapi/document';

/** `npm run openapi`: writes the API's OpenAPI document to docs/openapi.json (a test fails while the two differ). */
const target = join(__dirname, '..', 'docs', 'openapi.json');
writeFileSync(target, openApiDocumentText());
console.log(`wrote ${target}`);
