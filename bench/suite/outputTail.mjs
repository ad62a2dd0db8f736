/** The last few KiB a child process wrote: enough to say why a path failed, bounded so a chatty proxy cannot grow it. */
export const OUTPUT_TAIL_BYTES = 4096;

export function tail(limitBytes = OUTPUT_TAIL_BYTES) {
  let kept = "";
  return {
    push(chunk) {
      kept = (kept + chunk.toString("utf8")).slice(-limitBytes);
    },
    text() {
      return kept.trim();
    },
  };
}
