import {
  classesIntersect,
  firstInClass,
  highWaterKey,
  idsFrom,
  residueClassProblem,
} from './residue-class';
import { Segment } from './segment';

describe('residue classes (several databases per tag)', () => {
  it('finds the first ID of a class at or above a start, for every start and class', () => {
    for (let modulus = 1n; modulus <= 5n; modulus++) {
      for (let residue = 0n; residue < modulus; residue++) {
        for (let start = 0n; start < 20n; start++) {
          const first = firstInClass(start, modulus, residue);
          expect(first >= start && first < start + modulus).toBe(true);
          expect(first % modulus).toBe(residue);
        }
      }
    }
  });

  it('counts the IDs of a class in a range exactly', () => {
    for (let modulus = 1n; modulus <= 4n; modulus++) {
      for (let residue = 0n; residue < modulus; residue++) {
        for (let end = 1n; end < 30n; end++) {
          const first = firstInClass(3n, modulus, residue);
          let expected = 0;
          for (let x = 3n; x < end; x++) if (x % modulus === residue) expected++;
          expect(idsFrom(first, end, modulus)).toBe(expected);
        }
      }
    }
  });

  it('tells intersecting classes apart (the gcd rule), checked against brute force', () => {
    for (let m1 = 1; m1 <= 6; m1++) {
      for (let r1 = 0; r1 < m1; r1++) {
        for (let m2 = 1; m2 <= 6; m2++) {
          for (let r2 = 0; r2 < m2; r2++) {
            let brute = false;
            for (let x = 0; x < m1 * m2 && !brute; x++) brute = x % m1 === r1 && x % m2 === r2;
            expect(
              classesIntersect({ modulus: m1, residue: r1 }, { modulus: m2, residue: r2 }),
            ).toBe(brute);
          }
        }
      }
    }
  });

  it('refuses malformed classes', () => {
    expect(residueClassProblem({ modulus: 3, residue: 2 })).toBeNull();
    expect(residueClassProblem({ modulus: 0, residue: 0 })).toMatch(/id_modulus/);
    expect(residueClassProblem({ modulus: 3, residue: 3 })).toMatch(/id_residue/);
    expect(residueClassProblem({ modulus: 2, residue: -1 })).toMatch(/id_residue/);
  });

  it('keeps the mark of residue 0 where one database kept it', () => {
    expect(highWaterKey('order', 0)).toBe('order');
    expect(highWaterKey('order', 2)).toBe('order#2');
  });

  it('builds a strided segment of the class only', () => {
    const range = { tag: 't', maxId: 2001n, baseStep: 1000, appliedStep: 1000 };
    const segment = Segment.fromAllocation({ ...range, modulus: 3, residue: 0 }, 0.9); // [1001, 2001), 0 mod 3
    expect(segment.start).toBe(1002n);
    expect(segment.stride).toBe(3n);
    expect(segment.count).toBe(333);
    const one = Segment.fromAllocation(range, 0.9);
    expect([one.start, one.count, one.stride]).toEqual([1001n, 1000, 1n]);
  });
});
