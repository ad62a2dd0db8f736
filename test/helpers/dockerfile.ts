/** This repository's Dockerfile, parsed: its stages' instructions, for the tests that run what it says. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./paths.js";

export interface Instruction {
  readonly op: string;
  readonly args: string;
}

/** Dockerfile instructions (continuation lines joined, comments dropped), split into stages. */
export function parseDockerfile(text: string): Instruction[][] {
  const joined = text.replace(/\\\n/g, " ");
  const stages: Instruction[][] = [];
  for (const line of joined.split("\n")) {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    const [, op, args] = /^(\S+)\s+(.*)$/.exec(trimmed)!;
    const instruction = { op: op!.toUpperCase(), args: args! };
    if (instruction.op === "FROM") stages.push([]);
    stages[stages.length - 1]!.push(instruction);
  }
  return stages;
}

/** The JSON array of an exec-form instruction (`["node", "x"]`). */
export function execForm(args: string): string[] {
  const value = JSON.parse(args) as unknown;
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) throw new Error(`not exec form: ${args}`);
  return value as string[];
}

export const DOCKERFILE_STAGES = parseDockerfile(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
export const FINAL_STAGE = DOCKERFILE_STAGES[DOCKERFILE_STAGES.length - 1]!;

/** The last instruction `op` of the final stage (the one in force in the image). */
export const finalInstruction = (op: string): Instruction | undefined => FINAL_STAGE.filter((i) => i.op === op).at(-1);

/** The image's `ENV name=value` (the final stage's last setting). */
export function imageEnv(name: string): string | undefined {
  let value: string | undefined;
  for (const i of FINAL_STAGE) {
    if (i.op !== "ENV") continue;
    const m = new RegExp(`(?:^|\\s)${name}=(\\S+)`).exec(i.args);
    if (m !== null) value = m[1];
  }
  return value;
}
