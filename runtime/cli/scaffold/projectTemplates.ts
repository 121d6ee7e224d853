/**
 * The rest of a project `ensoul init` writes around the soul: package.json (ES modules,
 * ensoul as a dependency, vitest to test), the cluster config, a test that drives the soul on
 * the offline model, a README and a .gitignore.
 */

export interface ProjectSpec {
  /** The package name and the soul's id. */
  id: string;
  /** The soul's display name. */
  name: string;
  /** What package.json depends on for ensoul: a version range, a tarball, a path. */
  ensoul: string;
  vitest: string;
}

export function projectFiles(p: ProjectSpec): Record<string, string> {
  const pkg = {
    name: p.id,
    private: true,
    type: "module",
    scripts: { start: `ensoul chat ./souls/${p.id}`, dev: `ensoul dev ./souls/${p.id}`, up: "ensoul up", test: "vitest run" },
    dependencies: { ensoul: p.ensoul },
    devDependencies: { vitest: p.vitest },
  };
  return {
    "package.json": `${JSON.stringify(pkg, null, 2)}\n`,
    "ensoul.yaml": `# The cluster \`ensoul up\` starts: your soul, on the in-process bus, memory in ./.ensoul.
cluster: ${p.id}
souls:
  - { id: ${p.id}, blueprint: ./souls/${p.id} }
`,
    [`test/${p.id}.test.ts`]: `/** ${p.name} on the offline model: no API key, no network, the same answer every run. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { createInProcessOutlet, createSoul } from "ensoul";
import { createDefaultRegistry } from "ensoul/providers";
import { openStore } from "ensoul/store";
import soul from "../souls/${p.id}/index.ts";

const dir = mkdtempSync(join(tmpdir(), "${p.id}-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("greets, then moves on to the conversation", async () => {
  const store = openStore({ path: dir });
  const outlet = createInProcessOutlet();
  const said: string[] = [];
  outlet.onProposal((p) => p.kind === "speak" && said.push(p.content));
  const ${p.id.replace(/[^A-Za-z0-9_]/g, "_")} = createSoul({ blueprint: soul, id: "${p.id}", store, outlet, cognition: { registry: createDefaultRegistry({}), defaultModel: "offline:echo" } });
  try {
    await ${p.id.replace(/[^A-Za-z0-9_]/g, "_")}.perceive({ action: "said", content: "Hello! I'm Ada.", name: "Ada" });
    await ${p.id.replace(/[^A-Za-z0-9_]/g, "_")}.idle();
    expect(said).toHaveLength(1);
    expect(said[0]?.length).toBeGreaterThan(0);
    expect(${p.id.replace(/[^A-Za-z0-9_]/g, "_")}.state().process).toBe("conversation");
  } finally {
    await ${p.id.replace(/[^A-Za-z0-9_]/g, "_")}.stop();
    await store.close();
  }
});
`,
    "README.md": `# ${p.name}

A soul made with [ensoul](https://www.npmjs.com/package/ensoul).

\`\`\`sh
npm install
npm start        # chat with ${p.name} in this terminal (the offline model when no ANTHROPIC_API_KEY or GROQ_API_KEY is set)
npm run dev      # the same, reloading the soul's code when a file changes, memory kept
npm test         # drives ${p.name} on the offline model
npm run up       # the cluster in ensoul.yaml (add bridges there: Slack, Discord, HTTP)
\`\`\`

- \`souls/${p.id}/soul.md\`: who ${p.name} is.
- \`souls/${p.id}/*.ts\`: one file per mental process; \`index.ts\` joins them into the soul.
- Memory lives in \`./.ensoul\` (LMDB): the conversation continues the next time.
`,
    ".gitignore": "node_modules/\n.ensoul/\n",
  };
}
