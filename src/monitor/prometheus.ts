/** One sample of a metric: labels and a value. */
export interface Sample {
  readonly labels?: Readonly<Record<string, string>>;
  readonly value: number | bigint | boolean;
}

/** A metric family in the Prometheus text exposition format (version 0.0.4). */
export interface MetricFamily {
  readonly name: string;
  readonly help: string;
  readonly type: 'gauge' | 'counter';
  readonly samples: readonly Sample[];
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function formatValue(value: number | bigint | boolean): string {
  if (typeof value === 'boolean') return value ? '1' : '0';
  // bigint prints exactly; Prometheus parses it as a float, which is its own limitation.
  return value.toString();
}

/** Renders metric families as Prometheus text. Families without samples are left out. */
export function renderPrometheus(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    if (family.samples.length === 0) continue;
    lines.push(`# HELP ${family.name} ${family.help}`, `# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples) {
      const labels = Object.entries(sample.labels ?? {});
      const rendered = labels.length
        ? `{${labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`
        : '';
      lines.push(`${family.name}${rendered} ${formatValue(sample.value)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
