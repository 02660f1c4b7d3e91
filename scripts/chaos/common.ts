// What the parts of npm run chaos share: a timestamped log line, a pause and a pick at random.
export const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 23)}] ${line}`);
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
