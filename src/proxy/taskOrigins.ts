/**
 * Which request created each task (MCP tasks utility, protocol 2025-11-25): a task-augmented
 * request (`tools/call` with `params.task`) is answered at once with a `CreateTaskResult`
 * (`{task: {taskId, status, …}}`), and its real result comes later as the answer to
 * `tasks/result {taskId}` — shaped as the creating method's result. To normalize that answer the
 * decorator must know the method, so it remembers task id → method per upstream connection.
 *
 * Bounded: at most `max` tasks are remembered; the one touched longest ago is forgotten first
 * (its later `tasks/result` then passes through untouched, as any unknown answer does).
 */
import { DEFAULT_MAX_TRACKED_TASKS } from "../config/schema.js";

export { DEFAULT_MAX_TRACKED_TASKS };

export class TaskOrigins {
  private readonly methods = new Map<string, string>();

  constructor(private readonly max: number = DEFAULT_MAX_TRACKED_TASKS) {}

  get size(): number {
    return this.methods.size;
  }

  remember(taskId: string, method: string): void {
    // Re-inserted so the Map's order stays "least recently touched first".
    this.methods.delete(taskId);
    this.methods.set(taskId, method);
    while (this.methods.size > this.max) this.methods.delete(this.methods.keys().next().value as string);
  }

  /** The method that created `taskId`, or undefined when it is not (or no longer) known. */
  methodOf(taskId: string): string | undefined {
    const method = this.methods.get(taskId);
    if (method !== undefined) this.remember(taskId, method);
    return method;
  }

  clear(): void {
    this.methods.clear();
  }
}

/** The task id of a `CreateTaskResult`, or undefined when `result` is not one. */
export function createdTaskId(result: unknown): string | undefined {
  if (typeof result !== "object" || result === null || Array.isArray(result)) return undefined;
  const task = (result as { task?: unknown }).task;
  if (typeof task !== "object" || task === null) return undefined;
  const id = (task as { taskId?: unknown }).taskId;
  return typeof id === "string" ? id : undefined;
}
