import openapiTS, { COMMENT_HEADER, astToString } from 'openapi-typescript';
import ts from 'typescript';

/**
 * The TypeScript types of the OpenAPI document `document`, as openapi-typescript writes them, with one
 * difference: a `format: binary` string (a file part of the upload form) is a `Blob`, which a generated client
 * (openapi-fetch) can put in a FormData as it is, rather than a string it would have to be cast from.
 */
export async function openApiTypesText(document: object): Promise<string> {
  const nodes = await openapiTS(document as Parameters<typeof openapiTS>[0], {
    transform: (schema) => (schema.type === 'string' && schema.format === 'binary' ? ts.factory.createTypeReferenceNode('Blob') : undefined),
  });
  return `${COMMENT_HEADER}${astToString(nodes)}`;
}
