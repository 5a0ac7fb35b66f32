/**
 * The value of an environment variable a test worker process cannot run without (its
 * spawner sets it): throws, naming it, when it is unset or empty.
 */
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
}
