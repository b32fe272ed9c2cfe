// Liquid's and Node's error texts in the author's terms. liquidjs reports a missing partial as a
// file-system lookup ("ENOENT: Failed to lookup "x" in "<roots>"") and passes errno-style
// messages of the runtime through; authors should read what is wrong with their template, not
// how the library looked for it. Positions ("line:1, col:5") are kept.

/** The first line of a Liquid or runtime error message, as an author should read it. */
export function authorFacingLiquidMessage(raw: string): string {
  let text = raw.split('\n')[0]!.trim();
  const lookup = /^(?:E[A-Z]+: )?Failed to lookup "([^"]*)" in "[^"]*"(.*)$/.exec(text);
  if (lookup) return `partial ${JSON.stringify(lookup[1])} does not exist${lookup[2]}`;
  // Node-style errno prefixes and the paths that follow them ("ENOENT: no such file…, open '/x'").
  text = text.replace(/^E[A-Z]{2,}: /, '');
  text = text.replace(/, (?:open|stat|lstat|scandir|access|readlink) '[^']*'/g, '');
  return text;
}
