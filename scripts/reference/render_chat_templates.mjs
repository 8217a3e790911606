// Renders every chat template under tests/data/chat_templates/<family>/template.jinja
// with every conversation of tests/data/chat_templates/conversations.json using the
// reference implementation, @huggingface/jinja (the renderer of transformers.js), and
// writes the expected outputs next to the template: <case>.txt holds the prompt,
// <case>.error the message when the reference refuses the case (the template raised
// an exception, e.g. "roles must alternate"). Run it through
// scripts/reference/render_chat_templates.sh, which installs the package outside
// the repository.
import { readFileSync, writeFileSync, readdirSync, existsSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { Template } from "@huggingface/jinja";

const root = process.argv[2];
if (!root) {
  console.error("usage: node render_chat_templates.mjs <tests/data/chat_templates>");
  process.exit(2);
}
// The clock pinned where seer's test and render_chat_templates_jinja2.py pin it
// (2026-11-25 12:00 UTC), so the templates that print today's date (strftime_now)
// render the same on any day.
const renderedAt = 1795608000 * 1000;
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...args) {
    super(...(args.length ? args : [renderedAt]));
  }
  static now() {
    return renderedAt;
  }
};
const conversations = JSON.parse(readFileSync(join(root, "conversations.json"), "utf8"));
// The same fixed values seer's test passes (no clock: date_string pins the Llama 3 date).
const common = { bos_token: "<s>", eos_token: "</s>", date_string: "26 Jul 2024" };

let rendered = 0, refused = 0;
for (const family of readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()) {
  const dir = join(root, family);
  const source = readFileSync(join(dir, "template.jinja"), "utf8");
  let template = null, parseError = null;
  try {
    template = new Template(source);
  } catch (e) {
    parseError = String(e.message ?? e);
  }
  for (const [name, conv] of Object.entries(conversations)) {
    for (const ext of [".txt", ".error"]) if (existsSync(join(dir, name + ext))) unlinkSync(join(dir, name + ext));
    const context = { ...common, ...structuredClone(conv) };
    try {
      if (parseError) throw new Error(parseError);
      writeFileSync(join(dir, name + ".txt"), template.render(context));
      ++rendered;
    } catch (e) {
      writeFileSync(join(dir, name + ".error"), String(e.message ?? e) + "\n");
      ++refused;
    }
  }
}
console.log(`rendered ${rendered} cases, ${refused} refused by the template`);
