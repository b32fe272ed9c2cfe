// A version's locale and time zone (docs/templates.md#money-numbers-and-dates): what the
// formatting filters (money, number, percent, format_date) format in. One home for their
// defaults and their validation, used by the admin plane, the CLI and the portal alike: it
// needs nothing but the JavaScript built-in Intl, so it runs in a browser too.

export const DEFAULT_LOCALE = 'en-US';
export const DEFAULT_TIME_ZONE = 'UTC';

export interface LocaleSettings {
  /** BCP 47 tag, canonical ("de-DE"). */
  locale: string;
  /** IANA time zone name, canonical ("Europe/Berlin"), or "UTC". */
  timeZone: string;
}

/** A problem with one setting: the field it is about and what to change. */
export interface LocaleSettingIssue {
  field: 'locale' | 'timeZone';
  issue: string;
}

/**
 * The canonical form of a locale the formatting filters can use, or undefined when it is not a
 * well-formed BCP 47 tag or the runtime has no data for it (Intl would quietly fall back to
 * another language).
 */
export function canonicalLocale(value: string): string | undefined {
  let canonical: string | undefined;
  try {
    canonical = Intl.getCanonicalLocales(value)[0];
  } catch {
    return undefined;
  }
  if (canonical === undefined) return undefined;
  return Intl.NumberFormat.supportedLocalesOf([canonical]).length === 1 ? canonical : undefined;
}

/** The canonical name of a time zone ("europe/berlin" -> "Europe/Berlin"), or undefined. */
export function canonicalTimeZone(value: string): string | undefined {
  if (value.trim() === '' || value.length > 64) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/**
 * Checks submitted settings: absent or '' takes the default, anything else must be a locale /
 * time zone the filters can format in. Returns the canonical settings and the problems.
 */
export function normalizeLocaleSettings(input: { locale?: unknown; timeZone?: unknown }): {
  settings: LocaleSettings;
  issues: LocaleSettingIssue[];
} {
  const issues: LocaleSettingIssue[] = [];
  const settings: LocaleSettings = { locale: DEFAULT_LOCALE, timeZone: DEFAULT_TIME_ZONE };
  const { locale, timeZone } = input;
  if (locale !== undefined && locale !== null && locale !== '') {
    const canonical = typeof locale === 'string' ? canonicalLocale(locale.trim()) : undefined;
    if (canonical) settings.locale = canonical;
    else
      issues.push({
        field: 'locale',
        issue: `${JSON.stringify(locale)} is not a locale docgen can format in; use a BCP 47 tag such as "en-US", "de-DE", "fr-CH" or "ja-JP"`,
      });
  }
  if (timeZone !== undefined && timeZone !== null && timeZone !== '') {
    const canonical = typeof timeZone === 'string' ? canonicalTimeZone(timeZone.trim()) : undefined;
    if (canonical) settings.timeZone = canonical;
    else
      issues.push({
        field: 'timeZone',
        issue: `${JSON.stringify(timeZone)} is not a time zone; use an IANA name such as "Europe/Berlin", "America/New_York" or "UTC"`,
      });
  }
  return { settings, issues };
}
