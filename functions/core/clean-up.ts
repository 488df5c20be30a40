/** Runs a clean-up step whose failure must not hide the outcome being reported; what it leaves behind, fsck finds. */
export async function cleanUp(step: () => Promise<unknown>): Promise<void> {
  try {
    await step();
  } catch (error) {
    console.error(JSON.stringify({ level: 'warn', message: 'clean-up failed; orphaned objects may remain', error: String(error) }));
  }
}
