import { startSeparated } from './environment';
import { load } from './load';
import { SCENARIOS, seedShared } from './scenarios';
async function main() {
  const env = await startSeparated();
  await seedShared(env);
  const name = process.argv[2];
  const s = SCENARIOS.find((x) => x.name === name)!;
  const side = process.argv[3] as 'drive' | 'floor';
  const stats = await load(16, { maxOps: 400, seconds: 6, warmup: 5 }, (i) => s[side](env, i, 16));
  console.log(side, JSON.stringify(stats));
  await env.close();
}
main();
