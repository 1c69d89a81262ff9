import { describe, expect, it } from 'vitest';

import { parseKeyList, parseLayers, parseLines, parseNumber } from './parse';

describe('a list of keys', () => {
  it('reads layer:index pairs separated by commas, spaces or lines, each once', () => {
    expect(parseKeyList('1:12, 3:400')).toEqual({
      ok: true,
      value: [
        [1, 12],
        [3, 400],
      ],
    });
    expect(parseKeyList(' 1 : 12\n3:400;1:12 ')).toEqual({
      ok: true,
      value: [
        [1, 12],
        [3, 400],
      ],
    });
    expect(parseKeyList('')).toEqual({ ok: true, value: [] });
  });

  it('names the first entry that is not a key (layers count from 1)', () => {
    expect(parseKeyList('1:12, 3-400, x')).toEqual({ ok: false, entry: '3-400' });
    expect(parseKeyList('0:5')).toEqual({ ok: false, entry: '0:5' });
    expect(parseKeyList('L3:5')).toEqual({ ok: false, entry: 'L3:5' });
    expect(parseKeyList('3:')).toEqual({ ok: false, entry: '3:' });
  });
});

describe('a list of layers', () => {
  it('reads layers and ranges, sorted, each once', () => {
    expect(parseLayers('5-7, 3, 6')).toEqual({ ok: true, value: [3, 5, 6, 7] });
    expect(parseLayers('2 – 3')).toEqual({ ok: true, value: [2, 3] });
    expect(parseLayers('  ')).toEqual({ ok: true, value: [] });
  });

  it('names a bad entry', () => {
    expect(parseLayers('3, 0')).toEqual({ ok: false, entry: '0' });
    expect(parseLayers('7-5')).toEqual({ ok: false, entry: '7-5' });
    expect(parseLayers('three')).toEqual({ ok: false, entry: 'three' });
  });
});

describe('a number', () => {
  it('is within its bounds, and whole where it must be', () => {
    expect(parseNumber('0.2', { min: 0, max: 1 })).toBe(0.2);
    expect(parseNumber('-2', { min: -10, max: 10 })).toBe(-2);
    expect(parseNumber('1.5', { min: 0, max: 1 })).toBeNull();
    expect(parseNumber('2.5', { min: 1, max: 100, integer: true })).toBeNull();
    expect(parseNumber('', { min: 0, max: 1 })).toBeNull();
    expect(parseNumber('abc', { min: 0, max: 1 })).toBeNull();
  });
});

describe('lines', () => {
  it('are the non-empty lines, trimmed', () => {
    expect(parseLines('a b \r\n\n  c\n')).toEqual(['a b', 'c']);
  });
});
