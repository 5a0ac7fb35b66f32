/** Settings of the dynamic step. */
export interface StepPolicyOptions {
  /** Target lifetime of a segment (Leaf: 15 minutes). */
  readonly stepDurationMs: number;
  /** Upper bound of the step (Leaf: 1,000,000). */
  readonly maxStep: number;
}

/**
 * Leaf's dynamic step: a segment that lasted less than the target doubles the step (up to
 * `maxStep`), one that lasted between one and two targets keeps it, a longer one halves it,
 * never below the row's base step.
 */
export function nextStep(
  currentStep: number,
  baseStep: number,
  elapsedMs: number,
  options: StepPolicyOptions,
): number {
  let step: number;
  if (elapsedMs < options.stepDurationMs) {
    step = currentStep * 2 > options.maxStep ? currentStep : currentStep * 2;
  } else if (elapsedMs < options.stepDurationMs * 2) {
    step = currentStep;
  } else {
    step = Math.floor(currentStep / 2);
  }
  // An operator may have raised the row's step above the dynamic one: the base always wins.
  return Math.max(step, baseStep);
}
