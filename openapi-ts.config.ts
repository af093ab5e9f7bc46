import { defineConfig } from '@hey-api/openapi-ts';

// `./openapi.yaml`, not `openapi.yaml`: a bare name is read as a registry shorthand.
export default defineConfig({
  input: './openapi.yaml',
  output: { path: 'generated' },
  plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk', '@tanstack/react-query'],
});
