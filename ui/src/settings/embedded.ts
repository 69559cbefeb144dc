// What the Embedded model card says about the context size (issue 32: it
// comes from the model and the machine, and shows in Settings), apart from
// the component so it can be tested.
import type { EmbeddedContext } from "../generated";

const tokens = (n: number) => `${n.toLocaleString("en-US")} tokens`;

/** The file's name without its folder. */
function fileName(path: string): string {
  return path.split(/[\\/]/).pop() || path;
}

/** The sentence on the embedded back end's context, and whether it is a problem. */
export function contextLine(context: EmbeddedContext | null): { text: string; problem: boolean } {
  if (!context) {
    return { text: "No back end uses an embedded model yet; its context size shows here once one does.", problem: false };
  }
  const who = `${fileName(context.model)} (back end “${context.provider}”)`;
  if (context.tokens === null) {
    return { text: `The context size of ${who} is not known: ${context.problem ?? "its file does not say"}.`, problem: true };
  }
  let why: string;
  if (context.from_setting) why = "set on the back end";
  else if (context.trained !== null && context.tokens < context.trained)
    why = `it was trained on ${tokens(context.trained)}; this computer's free memory allows ${tokens(context.tokens)}`;
  else why = "the context it was trained on; this computer has the memory for it";
  return { text: `${who} runs with a context of ${tokens(context.tokens)} (${why}).`, problem: false };
}
