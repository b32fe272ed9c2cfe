/** This package's version (sent in User-Agent); a test checks it against package.json. */
export const VERSION = '0.1.0';
