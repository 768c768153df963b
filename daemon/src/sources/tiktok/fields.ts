// Reading fields of untrusted, loosely shaped payloads (decoded protobuf objects) without casts.

import { cutText } from '../../../../shared/text.js';

/** A non-null object (not an array). */
export function isRecord(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An own property of an object, or undefined: inherited and accessor-free lookups only. */
export function own(value: unknown, key: string): unknown {
  if (!isRecord(value) || !Object.hasOwn(value, key)) return undefined;
  const descriptor = Object.getOwnPropertyDescriptor(value, key);
  // A getter is never run: decoded payloads are plain data.
  return descriptor && 'value' in descriptor ? descriptor.value : undefined;
}

/** Follows a path of own properties: `at(msg, 'common', 'msgId')`. */
export function at(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) current = own(current, key);
  return current;
}

/** The first value of `candidates` that is a non-empty string. */
export function firstString(...candidates: unknown[]): string | undefined {
  for (const candidate of candidates)
    if (typeof candidate === 'string' && candidate.length > 0) return candidate;
  return undefined;
}

/**
 * The first candidate that is a finite, non-negative integer. Protobuf 64-bit fields arrive as
 * decimal strings (`"1234"`), 32-bit ones as numbers; both count.
 */
export function firstCount(...candidates: unknown[]): number | undefined {
  for (const candidate of candidates) {
    const n =
      typeof candidate === 'number'
        ? candidate
        : typeof candidate === 'string' && /^\d{1,15}$/.test(candidate)
          ? Number(candidate)
          : Number.NaN;
    if (Number.isSafeInteger(n) && n >= 0) return n;
  }
  return undefined;
}

/** The first element of an array of strings, if any. */
export function firstOf(value: unknown): string | undefined {
  return Array.isArray(value) ? firstString(value[0]) : undefined;
}

/** Cuts a string to at most `max` UTF-16 units without splitting a surrogate pair. */
export const truncate = cutText;
