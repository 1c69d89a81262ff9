// Names for the API's shapes. They come from the OpenAPI schema (drf-spectacular →
// openapi.yaml → `npm run gen:api` → schema.d.ts); never write them by hand.
import type { components } from './schema';

type Schemas = components['schemas'];

export type User = Schemas['User'];
export type Assignment = Schemas['Assignment'];
export type LoginRequest = Schemas['LoginRequest'];
export type ErrorBody = Schemas['Error'];
