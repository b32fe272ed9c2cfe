// The payload of an EPC QR code ("GiroCode", EPC069-12 version 002): a SEPA credit transfer a
// banking app reads from the code. Every field is checked the way the standard and the banks
// check it, so that a wrong IBAN fails the render instead of a reader's payment.

import { FilterError, shown } from './filter-input.ts';

export interface EpcPayment {
  name: string;
  iban: string;
  bic: string;
  /** Euros, 0.01 to 999999999.99; 0 or absent: the reader enters it. */
  amount: number | undefined;
  /** Unstructured remittance text, at most 140 characters; or a creditor reference (RF…). */
  reference: string;
  /** Purpose code (4 letters, e.g. "GDDS"), optional. */
  purpose: string;
  /** Text shown to the payer, at most 70 characters, optional. */
  information: string;
}

const FIELDS = ['name', 'iban', 'bic', 'amount', 'reference', 'purpose', 'information'] as const;

/** ISO 7064 MOD 97-10 as IBANs and creditor references use it: the first four characters moved
 * to the end, letters as numbers (A = 10), the whole number mod 97 must be 1. */
function mod97IsOne(code: string): boolean {
  const rearranged = code.slice(4) + code.slice(0, 4);
  let remainder = 0;
  for (const c of rearranged) {
    const digits = c >= 'A' ? String(c.charCodeAt(0) - 55) : c;
    for (const d of digits) remainder = (remainder * 10 + Number(d)) % 97;
  }
  return remainder === 1;
}

/** ISO 13616 IBAN: country, check digits, account; checked with MOD 97-10. */
export function ibanIsValid(iban: string): boolean {
  return /^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban) && mod97IsOne(iban);
}

/** ISO 11649 creditor reference ("RF18 5390 0754 7034"). */
function creditorReferenceIsValid(ref: string): boolean {
  return /^RF\d{2}[A-Z0-9]{1,21}$/.test(ref) && mod97IsOne(ref);
}

const BIC = /^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/;

function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number') return String(value);
  throw new FilterError(`epc_qr: ${shown(value)} is not text`);
}

function amountOf(value: unknown): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value.trim()) : NaN;
  if (!Number.isFinite(n) || n < 0.01 || n > 999_999_999.99)
    throw new FilterError(`epc_qr: amount ${shown(value)} must be a number of euros from 0.01 to 999999999.99`);
  return Math.round(n * 100) / 100;
}

export const EPC_FIELDS = FIELDS;

/**
 * Reads and checks a payment: the fields of `value` (an object; fields it has beyond these are
 * ignored, so a payment object of the template's own can carry more) with `overrides` on top
 * (the filter's named options).
 */
export function epcPaymentOf(value: unknown, overrides: ReadonlyMap<string, unknown>, what: string): EpcPayment {
  const fromValue = value !== null && typeof value === 'object' && !Array.isArray(value);
  if (!fromValue && !(value === undefined || value === null || value === ''))
    throw new FilterError(
      `epc_qr: ${what} is ${shown(value)}; it must be an object with name, iban, bic, amount and reference`,
    );
  const o: Record<string, unknown> = {};
  for (const field of FIELDS) {
    if (overrides.has(field)) o[field] = overrides.get(field);
    else if (fromValue && Object.hasOwn(value, field)) o[field] = (value as Record<string, unknown>)[field];
  }
  const payment: EpcPayment = {
    name: text(o.name),
    iban: text(o.iban).replace(/\s+/g, '').toUpperCase(),
    bic: text(o.bic).replace(/\s+/g, '').toUpperCase(),
    amount: amountOf(o.amount),
    reference: text(o.reference),
    purpose: text(o.purpose).toUpperCase(),
    information: text(o.information),
  };
  if (payment.name === '') throw new FilterError(`epc_qr: the payee's name is missing (field or option "name")`);
  if (payment.iban === '') throw new FilterError(`epc_qr: the payee's IBAN is missing (field or option "iban")`);
  if ([...payment.name].length > 70) throw new FilterError(`epc_qr: name must be at most 70 characters`);
  if (!ibanIsValid(payment.iban))
    throw new FilterError(`epc_qr: iban ${shown(o.iban)} is not a valid IBAN (its check digits do not match)`);
  if (payment.bic !== '' && !BIC.test(payment.bic))
    throw new FilterError(`epc_qr: bic ${shown(o.bic)} is not a BIC (8 or 11 letters and digits, e.g. COBADEFFXXX)`);
  if (payment.purpose !== '' && !/^[A-Z]{4}$/.test(payment.purpose))
    throw new FilterError(`epc_qr: purpose must be a 4-letter purpose code such as "GDDS"`);
  if (/^RF\d/i.test(payment.reference.replace(/\s+/g, ''))) {
    const ref = payment.reference.replace(/\s+/g, '').toUpperCase();
    if (!creditorReferenceIsValid(ref))
      throw new FilterError(
        `epc_qr: reference ${shown(o.reference)} looks like a creditor reference (RF…) but its check digits do not match`,
      );
    payment.reference = ref;
  } else if ([...payment.reference].length > 140) {
    throw new FilterError(`epc_qr: reference must be at most 140 characters`);
  }
  if ([...payment.information].length > 70) throw new FilterError(`epc_qr: information must be at most 70 characters`);
  return payment;
}

/** The text of the code: EPC069-12, version 002, UTF-8, SEPA credit transfer. */
export function epcPayload(p: EpcPayment): string {
  const structured = /^RF\d/.test(p.reference);
  const lines = [
    'BCD',
    '002',
    '1', // UTF-8
    'SCT',
    p.bic,
    p.name,
    p.iban,
    p.amount === undefined ? '' : `EUR${p.amount.toFixed(2)}`,
    p.purpose,
    structured ? p.reference : '',
    structured ? '' : p.reference,
    p.information,
  ];
  // Trailing empty fields may be left out (and are, by the banks' own generators).
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n');
}
