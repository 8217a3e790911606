// Multi-turn conversations with the official OpenAI Node client against `seer serve`
// (docs/pensieve.md). Prints one JSON object with what it saw;
// tests/e2e/conversation_e2e_test.cc checks it.
// Usage: node conversation_client.mjs MODE BASE_URL MODEL [CONVERSATION]
//   hold      two turns of one conversation (only the new message + the id), the new
//             message alone, DELETE twice, then the id again
//   resend    a stateless client: each turn re-sends the whole chat (prefix reuse)
//   open      turn 1 of CONVERSATION, then a long streamed turn 2 dropped after its
//             first content chunk (a client disconnect mid-turn)
//   continue  turn 3 of CONVERSATION, the new message alone, then DELETE
import OpenAI from 'openai';

const [, , mode, baseURL, model, conversation = 'conv-a'] = process.argv;
const client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'not-needed', maxRetries: 0, timeout: 120_000 });
// Greedy, and exactly max_tokens (the random test model may hit EOS).
const greedy = { temperature: 0, ignore_eos: true };
const user = (content) => ({ role: 'user', content });

async function turn(messages, maxTokens, id) {
  const body = { model, messages, max_tokens: maxTokens, logprobs: true, ...greedy };
  if (id) body.conversation = id;
  const r = await client.chat.completions.create(body);
  // Token bytes tell tokens apart where the text holds replacement characters.
  const tokens = r.choices[0].logprobs?.content?.map((t) => t.bytes) ?? null;
  return { content: r.choices[0].message.content, tokens, usage: r.usage };
}

// DELETE /v1/conversations/{id}: the SDK's Conversations API has that very path.
async function remove(id) {
  try {
    const r = await client.conversations.delete(id);
    return { status: 200, object: r.object, deleted: r.deleted, id: r.id };
  } catch (e) {
    return { status: e.status, code: e.code, param: e.param };
  }
}

const out = { mode };
if (mode === 'hold') {
  out.turn1 = await turn([user('Once upon a time')], 8, conversation);
  out.turn2 = await turn([user('What happened next?')], 8, conversation);
  out.alone = await turn([user('What happened next?')], 8);
  out.delete = await remove(conversation);
  out.delete_again = await remove(conversation);
  out.after = await turn([user('What happened next?')], 8, conversation);
  out.cleanup = await remove(conversation);
} else if (mode === 'resend') {
  const chat = [user('Once upon a time')];
  out.turn1 = await turn(chat, 8);
  chat.push({ role: 'assistant', content: out.turn1.content }, user('What happened next?'));
  out.turn2 = await turn(chat, 8);
} else if (mode === 'open') {
  out.turn1 = await turn([user('Once upon a time')], 4, conversation);
  const stream = await client.chat.completions.create({
    model, messages: [user('Tell me a very long story')], max_tokens: 16000, stream: true, conversation, ...greedy,
  });
  out.chunks = 0;
  for await (const chunk of stream) {
    if (chunk.choices[0]?.delta?.content) {
      out.chunks++;
      break;  // leaving the loop aborts the HTTP request
    }
  }
} else if (mode === 'continue') {
  out.turn3 = await turn([user('And then?')], 4, conversation);
  out.alone = await turn([user('And then?')], 4);
  out.delete = await remove(conversation);
} else {
  console.error(`unknown mode '${mode}'`);
  process.exit(2);
}
console.log(JSON.stringify(out));
