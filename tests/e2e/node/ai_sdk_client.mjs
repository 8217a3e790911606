// The Vercel AI SDK (`ai` with @ai-sdk/openai-compatible) against `seer serve` with a
// random-weight model at temperature 1: generateObject and generateText with
// Output.object on a zod schema (the SDK validates with zod), a tool call with
// toolChoice 'required' (the SDK parses the input with the tool's zod schema and runs
// it), and streamText against generateText on the same seed. Prints one JSON object
// of what the SDK parsed; tests/e2e/client_libraries_test.cc checks it.
// Usage: node ai_sdk_client.mjs BASE_URL MODEL SEEDS
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateObject, generateText, Output, streamText, tool } from 'ai';

import { check, Order, Weather } from './schemas.mjs';

const [, , baseURL, modelName, seedsArg] = process.argv;
const seeds = Number(seedsArg ?? 3);
const seer = createOpenAICompatible({
  name: 'seer', baseURL: `${baseURL}/v1`, apiKey: 'not-needed', supportsStructuredOutputs: true, includeUsage: true,
});
const model = seer.chatModel(modelName);
const common = {
  model, temperature: 1, maxRetries: 0, maxOutputTokens: 4000,
  providerOptions: { seer: { user: 'e2e-user', strictJsonSchema: true } },
};
const out = { generate_object: [], output_object: [], tools: [], stream: null };

for (let seed = 0; seed < seeds; seed++) {
  const r = await generateObject({ ...common, seed, schema: Order, schemaName: 'order', prompt: 'Write an order as JSON.' });
  out.generate_object.push({ finish_reason: r.finishReason, object: r.object, ...check(Order, r.object) });

  const t = await generateText({ ...common, seed, output: Output.object({ schema: Order }), prompt: 'Write an order.' });
  out.output_object.push({ finish_reason: t.finishReason, object: t.output, ...check(Order, t.output) });

  const calls = [];
  const w = await generateText({
    ...common, seed, toolChoice: 'required', prompt: 'What is the weather in Paris?',
    tools: {
      get_weather: tool({
        description: 'The weather in a city', inputSchema: Weather,
        execute: async (input) => { calls.push(input); return { temperature: 21 }; },
      }),
    },
  });
  out.tools.push({
    finish_reason: w.finishReason,
    calls: w.toolCalls.map((c) => ({ name: c.toolName, input: c.input, ...check(Weather, c.input) })),
    results: w.toolResults.map((r) => r.output),
    executed: calls.length,
  });
}

// Unconstrained text: the stream assembles into what the same seed gives whole.
const textSettings = { ...common, seed: 11, maxOutputTokens: 24, prompt: 'Tell me a story.' };
const whole = await generateText(textSettings);
const streamed = streamText(textSettings);
let text = '', chunks = 0;
for await (const delta of streamed.textStream) { text += delta; chunks++; }
out.stream = {
  text, chunks, whole: whole.text, finish_reason: await streamed.finishReason,
  usage: await streamed.usage, whole_usage: whole.usage,
};

console.log(JSON.stringify(out));
