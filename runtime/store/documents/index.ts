/** A soul's searchable long-term store of documents (`useSoulStore`) and read-only document sets (`useBlueprintStore`). */
export * from "./documentTypes.ts";
export { SoulDocuments, DEFAULT_RESULT_LIMIT, EMBED_BATCH, type DocumentsDraft } from "./SoulDocuments.ts";
export { SoulDocumentIndex, type CommittedReader } from "./SoulDocumentIndex.ts";
export { createSoulStoreService, type SoulStoreService, type SoulStoreServiceOptions } from "./SoulStoreService.ts";
export { TextIndex, type TextHit } from "./TextIndex.ts";
export { createBlueprintStores, chunkText, RAG_EXTENSIONS, CHUNK_CHARS, type BlueprintDocuments, type BlueprintStores } from "./BlueprintDocuments.ts";
