// What DeleteTemplate's answer means in words, for the CLI and the portal alike
// (docs/interface.md#templates: a used template is archived instead of deleted).

/** "Invoice has 12 generations, so it was archived instead of deleted." */
export function archivedInsteadOfDeleted(name: string, generationCount: number): string {
  const used =
    generationCount === 0
      ? 'has been used by generations'
      : `has ${generationCount} generation${generationCount === 1 ? '' : 's'}`;
  return `${name} ${used}, so it was archived instead of deleted.`;
}
