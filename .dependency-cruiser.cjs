/**
 * The import rules of DESIGN.md, checked by dependency-cruiser (test/unit/house/imports.test.ts
 * runs it in the suite; `npx depcruise --config .dependency-cruiser.cjs api actors runtime souls bridges`
 * runs it by hand). Each rule's name is what a wrong import reports.
 *
 * The layers: souls -> actors -> the runtime kernel (cognition, providers, bus, store, http,
 * log, metrics).
 * Bridges import actors and the kernel. Only runtime/node, runtime/cli and runtime/inspect
 * compose everything. api/ holds the package's entry points (package.json `exports`): it may
 * re-export any folder's index.ts, and nothing imports it.
 */
const KERNEL = "^runtime/(cognition|providers|bus|store|http|log|metrics|faults)/";
const COMPOSERS = "^runtime/(node|cli|inspect)/";
/** A top-level part: `actors/soul`, `runtime/bus`, `souls/claudius`, `bridges/slack`. */
const PART = "^(actors|runtime|souls|bridges)/([^/]+)/";

module.exports = {
  forbidden: [
    {
      name: "no-cycle-between-files",
      comment: "Two files that import each other (directly or round a loop) are one concept split badly: move what both need below both.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-cycle-between-folders",
      comment: "A folder that imports a folder that imports it back: put what both need in a folder below both.",
      severity: "error",
      scope: "folder",
      from: {},
      to: { circular: true },
    },
    {
      name: "kernel-imports-no-actor-soul-bridge-or-composer",
      comment: "The kernel (cognition, providers, bus, store) is the bottom layer.",
      severity: "error",
      from: { path: KERNEL },
      to: { path: ["^actors/", "^souls/", "^bridges/", COMPOSERS] },
    },
    {
      name: "cognition-imports-no-store-or-bus",
      comment: "Cognition is pure: prompts and memory, no storage, no transport.",
      severity: "error",
      from: { path: "^runtime/cognition/" },
      to: { path: "^runtime/(store|bus)/" },
    },
    {
      name: "log-imports-nothing-of-ensoul",
      comment: "The log is the lowest layer: everything that prints (the bus first) goes through it, so it can import none of them.",
      severity: "error",
      from: { path: "^runtime/log/" },
      to: { path: "^(actors|runtime|souls|bridges)/", pathNot: "^runtime/log/" },
    },
    {
      name: "faults-import-nothing-of-ensoul",
      comment: "Fault injection is at the bottom with the log: every I/O boundary of every layer names its point, so it can import none of them.",
      severity: "error",
      from: { path: "^runtime/faults/" },
      to: { path: "^(actors|runtime|souls|bridges)/", pathNot: "^runtime/faults/" },
    },
    {
      name: "actors-import-only-actors-and-kernel",
      comment: "Actors sit below souls, bridges and the composers.",
      severity: "error",
      from: { path: "^actors/" },
      to: { path: ["^souls/", "^bridges/", COMPOSERS] },
    },
    {
      name: "souls-import-no-bridge-or-composer",
      comment: "A soul blueprint is hosted; it never knows its host or the platforms.",
      severity: "error",
      from: { path: "^souls/" },
      to: { path: ["^bridges/", COMPOSERS] },
    },
    {
      name: "bridges-import-actors-and-kernel-only",
      comment: "A bridge carries perceptions and speech for any soul: it imports no soul and no composer.",
      severity: "error",
      from: { path: "^bridges/" },
      to: { path: ["^souls/", COMPOSERS] },
    },
    {
      name: "nothing-imports-the-package-entries",
      comment: "api/ is the published package's entry points (package.json exports): it sits above everything, and ensoul's own code imports the folders, never api/.",
      severity: "error",
      from: { pathNot: "^api/" },
      to: { path: "^api/" },
    },
    {
      name: "package-entries-import-folders-through-their-index",
      comment: "An entry of api/ re-exports a folder's public surface (its index.ts), so the package promises nothing the folder does not.",
      severity: "error",
      from: { path: "^api/" },
      to: { path: "^(actors|runtime|souls|bridges)/", pathNot: "/index\\.ts$" },
    },
    {
      name: "import-other-folders-through-their-index",
      comment: "Across folders, import a folder's public surface (its index.ts), never a file behind it.",
      severity: "error",
      from: { path: PART },
      to: { path: "^(actors|runtime|souls|bridges)/", pathNot: ["^$1/$2/", "/index\\.ts$"] },
    },
  ],
  options: {
    // TypeScript 7 ships no JavaScript compiler API; swc parses the sources.
    parser: "swc",
    // Type-only imports are dependencies too: a cycle of types is still a cycle.
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: ["node_modules", "^test/", "^dist/"] },
    tsConfig: { fileName: "tsconfig.json" },
  },
};
