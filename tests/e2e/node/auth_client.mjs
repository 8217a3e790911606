// The official OpenAI Node client against `seer serve --api-key KEY`: with the key
// it works as against OpenAI (chat, a streamed completion, the model list); with a
// wrong key it fails with the SDK's authentication error. Prints one JSON object
// with what it saw; tests/e2e/serve_auth_test.cc checks it.
// Usage: node auth_client.mjs BASE_URL MODEL KEY WRONG_KEY
import OpenAI from 'openai';

const [, , baseURL, model, key, wrongKey] = process.argv;
const client = (apiKey) => new OpenAI({ baseURL: `${baseURL}/v1`, apiKey, maxRetries: 0, timeout: 60_000 });
const messages = [{ role: 'user', content: 'Once upon a time' }];
// seer's extension: generate exactly max_tokens (the random test model may hit EOS).
const extra = { ignore_eos: true };
const out = {};

const good = client(key);
const chat = await good.chat.completions.create({ model, messages, max_tokens: 4, ...extra });
out.chat = { object: chat.object, usage: chat.usage };

const stream = await good.completions.create({ model, prompt: 'Once upon a time', max_tokens: 4, stream: true, ...extra });
out.stream = { chunks: 0, finish_reason: null };
for await (const chunk of stream) {
  out.stream.chunks++;
  if (chunk.choices[0]?.finish_reason) out.stream.finish_reason = chunk.choices[0].finish_reason;
}

const models = await good.models.list();
out.models = models.data.map((m) => m.id);

try {
  await client(wrongKey).chat.completions.create({ model, messages, max_tokens: 4, ...extra });
  out.wrong = null;
} catch (e) {
  out.wrong = {
    status: e.status,
    type: e.type,
    code: e.code,
    param: e.param ?? null,
    authentication: typeof OpenAI.AuthenticationError === 'function' && e instanceof OpenAI.AuthenticationError,
    name: e.constructor?.name,
  };
}

console.log(JSON.stringify(out));
