// The zod schemas the client tests send (openai_zod_client.mjs, ai_sdk_client.mjs,
// langchain_client.mjs): zod 4 writes .int(), .min()/.max(), .uuid(), .date() and
// .regex() as JSON Schema type integer, minimum/maximum, minLength/maxLength,
// minItems/maxItems, format and pattern.
import { z } from 'zod';

export const Order = z.object({
  id: z.uuid(),
  quantity: z.number().int().min(1).max(12),
  price: z.number().min(0).max(1000),
  day: z.iso.date(),
  sku: z.string().regex(/^[A-Z]{3}-\d{4}$/),
  note: z.string().min(2).max(20),
  tags: z.array(z.string().max(8)).min(1).max(3),
});

export const Weather = z.object({
  city: z.string().min(1).max(24),
  unit: z.enum(['C', 'F']),
  days: z.number().int().min(1).max(7),
});

// Whether `value` passes `schema` (zod's own check), with its first issue when not.
export function check(schema, value) {
  const r = schema.safeParse(value);
  return r.success ? { valid: true } : { valid: false, issue: r.error.issues[0] };
}
