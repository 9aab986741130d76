// The OpenAPI description of the routes (GET /openapi.json) and its browsable page at /docs; the
// routes' schemas (schemas.ts) are its source.
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import * as S from './schemas.ts';

export async function registerApiDocs(app: FastifyInstance): Promise<void> {
  for (const schema of S.sharedSchemas) app.addSchema(schema);
  await app.register(fastifySwagger, {
    // Shared schemas appear under their own names in components.schemas.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json['$id'] === 'string' ? json['$id'] : `def-${i}`,
    },
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Sluice API',
        version: '1',
        description:
          'Streaming SQL with incremental materialized views. 64-bit integers beyond ±2^53 are JSON strings, never rounded.',
      },
      tags: [
        { name: 'statements' },
        { name: 'tables' },
        { name: 'views' },
        { name: 'changelogs' },
        { name: 'catalog' },
        { name: 'connectors' },
        { name: 'operations' },
        { name: 'admin' },
      ],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description:
              'A Sluice token (sluice_<id>_<secret>) when the server runs with authentication; see docs/security.md',
          },
        },
      },
      security: [{ bearer: [] }],
    },
  });
  await app.register(fastifySwaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    theme: { title: 'Sluice API — streaming SQL with incremental materialized views' },
  });
}
