/**
 * Which request created each task (MCP tasks utility, protocol 2025-11-25): a task-augmented
 * request (`tools/call` with `params.task`) is answered at once with a `CreateTaskResult`
 * (`{task: {taskId, status, …}}`), and its real result comes later as the answer to
 * `tasks/result {taskId}` — shaped as the creating method's result. To normalize that answer the
 * decorator must know the method, so it remembers task id → method per upstream connection.
 *
 * The tool a `tools/call` named goes with its task, for the fit layer's rules that match on it.
 *
 * Bounded: at most `max` tasks are remembered; the one touched longest ago is forgotten first
 * (its later `tasks/result` then passes through untouched, as any unknown answer does).
 */
import { DEFAULT_LIMITS } from "../config/defaults.js";

/** The request that created a task: its method, and the tool when it was a `tools/call`. */
export interface TaskOrigin {
  readonly method: string;
  readonly tool?: string;
}

export class TaskOrigins {
  private readonly methods = new Map<string, TaskOrigin>();

  constructor(private readonly max: number = DEFAULT_LIMITS.maxTrackedTasks) {}

  get size(): number {
    return this.methods.size;
  }

  remember(taskId: string, method: string, tool?: string): void {
    this.touch(taskId, tool === undefined ? { method } : { method, tool });
  }

  /** The request that created `taskId`, or undefined when it is not (or no longer) known. */
  originOf(taskId: string): TaskOrigin | undefined {
    const origin = this.methods.get(taskId);
    if (origin !== undefined) this.touch(taskId, origin);
    return origin;
  }

  /** The method that created `taskId`, or undefined when it is not (or no longer) known. */
  methodOf(taskId: string): string | undefined {
    return this.originOf(taskId)?.method;
  }

  private touch(taskId: string, origin: TaskOrigin): void {
    // Re-inserted so the Map's order stays "least recently touched first".
    this.methods.delete(taskId);
    this.methods.set(taskId, origin);
    while (this.methods.size > this.max) this.methods.delete(this.methods.keys().next().value as string);
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

/** Where a message names the task it is about, beside a `tasks/*` method's own `taskId`. */
const RELATED_TASK = "io.modelcontextprotocol/related-task";

/**
 * The task a request or notification is about: the `taskId` of a `tasks/*` request or a task
 * status notification, else the task its `_meta` names as related; undefined when it names none.
 */
export function taskNamedBy(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const { method, params } = message as { method?: unknown; params?: unknown };
  if (typeof method !== "string" || typeof params !== "object" || params === null) return undefined;
  const { taskId, _meta } = params as { taskId?: unknown; _meta?: unknown };
  if (typeof taskId === "string" && (method.startsWith("tasks/") || method.startsWith("notifications/tasks/")))
    return taskId;
  if (typeof _meta !== "object" || _meta === null) return undefined;
  const related = (_meta as Record<string, unknown>)[RELATED_TASK];
  if (typeof related !== "object" || related === null) return undefined;
  const relatedId = (related as { taskId?: unknown }).taskId;
  return typeof relatedId === "string" ? relatedId : undefined;
}
