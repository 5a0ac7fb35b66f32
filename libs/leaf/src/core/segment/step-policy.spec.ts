import { nextStep } from './step-policy';

const options = { stepDurationMs: 15 * 60_000, maxStep: 1_000_000 };
const MIN = 60_000;

describe('nextStep', () => {
  it('doubles when the segment lasted less than 15 minutes', () => {
    expect(nextStep(1000, 1000, 14 * MIN, options)).toBe(2000);
  });

  it('does not double past maxStep', () => {
    expect(nextStep(600_000, 1000, MIN, options)).toBe(600_000);
    expect(nextStep(500_000, 1000, MIN, options)).toBe(1_000_000);
  });

  it('keeps the step between 15 and 30 minutes', () => {
    expect(nextStep(4000, 1000, 15 * MIN, options)).toBe(4000);
    expect(nextStep(4000, 1000, 30 * MIN - 1, options)).toBe(4000);
  });

  it('halves after 30 minutes, never below the base step', () => {
    expect(nextStep(4000, 1000, 30 * MIN, options)).toBe(2000);
    expect(nextStep(1500, 1000, 60 * MIN, options)).toBe(1000);
    expect(nextStep(1000, 1000, 60 * MIN, options)).toBe(1000);
  });

  it('follows a raised base step', () => {
    expect(nextStep(2000, 5000, 20 * MIN, options)).toBe(5000);
  });
});
