import { type Static, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { AgentEvent, AgentState } from "../types.js";
import type { ArgumentText, EndFrame, UpdateFrame } from "./message-delta.js";
import { nestsDeeperThan, tooDeepText } from "../util/json-depth.js";

export type { ArgumentText, EndFrame, MessagePatchOperation, UpdateFrame, WireModelEvent } from "./message-delta.js";

export { PROTOCOL_3_SUBPROTOCOL, PROTOCOL_VERSION, type ProtocolVersion, protocolVersionOf } from "./protocol-version.js";

/**
 * The wire protocol of the WebSocket bridge (see PROTOCOL.md). Client frames are TypeBox
 * schemas, compiled once, because they arrive from the network and every one is checked;
 * server frames are plain types, because the server builds them.
 */

/** A client-chosen id echoed in the `ack` or `error` for that command. */
const CommandId = Type.String({ minLength: 1, maxLength: 64 });

/** Session ids travel in URLs and file names, so they are kept to a safe alphabet. */
export const SessionIdSchema = Type.String({ pattern: "^[A-Za-z0-9_.:-]{1,128}$" });

const ImageSchema = Type.Object(
  { type: Type.Literal("image"), data: Type.String(), mimeType: Type.String({ maxLength: 100 }) },
  { additionalProperties: false },
);

/**
 * What a client may send as a prompt: text, or text with images. Whole messages are not
 * accepted from the network on purpose: a client must not forge assistant messages or tool
 * results into the transcript.
 */
export const WirePromptInputSchema = Type.Union([
  Type.String(),
  Type.Object({ text: Type.String(), images: Type.Optional(Type.Array(ImageSchema, { maxItems: 16 })) }, { additionalProperties: false }),
]);

const command = <T extends string, P extends Parameters<typeof Type.Object>[0]>(type: T, properties: P) =>
  Type.Object({ type: Type.Literal(type), id: CommandId, ...properties }, { additionalProperties: false });

export const AttachCommandSchema = command("attach", {
  /** Omit to start a new session; the ack says its id. */
  session: Type.Optional(SessionIdSchema),
  /** The last sequence number this client saw in the session; omit for a fresh view. */
  lastSeq: Type.Optional(Type.Integer({ minimum: 0 })),
  /** The epoch of the snapshot `lastSeq` belongs to; a different one gets a fresh snapshot. */
  epoch: Type.Optional(Type.String({ maxLength: 64 })),
});
export const PromptCommandSchema = command("prompt", { input: WirePromptInputSchema });
export const SteerCommandSchema = command("steer", { input: WirePromptInputSchema });
export const FollowUpCommandSchema = command("follow_up", { input: WirePromptInputSchema });
export const AbortCommandSchema = command("abort", { clearFollowUps: Type.Optional(Type.Boolean()) });
/** Cancels one tool call of the active run (`Agent.cancelToolCall`). */
export const CancelToolCommandSchema = command("cancel_tool", {
  toolCallId: Type.String({ minLength: 1, maxLength: 256 }),
  reason: Type.Optional(Type.String({ maxLength: 1000 })),
});
/** Answers a call waiting for approval (`Agent.approve` / `Agent.deny`). */
export const ApproveCommandSchema = command("approve", { toolCallId: Type.String({ minLength: 1, maxLength: 256 }) });
export const DenyCommandSchema = command("deny", {
  toolCallId: Type.String({ minLength: 1, maxLength: 256 }),
  reason: Type.Optional(Type.String({ maxLength: 1000 })),
});
export const ContinueCommandSchema = command("continue", {});
export const ResetCommandSchema = command("reset", {});

export const ClientCommandSchema = Type.Union([
  AttachCommandSchema,
  PromptCommandSchema,
  SteerCommandSchema,
  FollowUpCommandSchema,
  AbortCommandSchema,
  CancelToolCommandSchema,
  ApproveCommandSchema,
  DenyCommandSchema,
  ContinueCommandSchema,
  ResetCommandSchema,
]);

export type WirePromptInput = Static<typeof WirePromptInputSchema>;
export type ClientCommand = Static<typeof ClientCommandSchema>;
export type ClientCommandType = ClientCommand["type"];
/** A command without its `id`, as the client library's callers build it. */
export type ClientCommandBody = ClientCommand extends infer C ? (C extends ClientCommand ? Omit<C, "id"> : never) : never;

export const COMMAND_TYPES: readonly ClientCommandType[] = ["attach", "prompt", "steer", "follow_up", "abort", "cancel_tool", "approve", "deny", "continue", "reset"];

/** Why a command failed; `error` frames carry one. */
export type ErrorCode =
  | "invalid_json"
  | "invalid_frame"
  | "unknown_type"
  | "not_attached"
  | "unknown_session"
  | "session_limit"
  | "busy"
  | "invalid_state"
  | "rate_limited"
  /** Sessions on Redis: the process lost the session's lease before Redis stored the command; it was not taken, send it again. */
  | "session_moved"
  | "internal";

/** One agent event with its per-session sequence number. */
export interface EventFrame {
  type: "event";
  seq: number;
  /**
   * Present on merged frames (see `UpdateFrame`): it covers `first..seq`. Event frames
   * themselves are not merged in protocol 2.
   */
  first?: number;
  event: AgentEvent;
}

/** The session's state after event `seq`; the next event frame is `seq + 1`. */
export interface SnapshotFrame {
  type: "snapshot";
  session: string;
  seq: number;
  /** Changes when the session is reset: send it back in `attach` with `lastSeq`. */
  epoch: string;
  state: AgentState;
  /**
   * The `agent_end` of the latest run that ended at or before `seq`, with its number. A client
   * moved to this snapshot while it followed a run (a resync, a takeover) learns from it that the
   * run ended: `connectAgent` emits it on `events$`, so a consumer waiting for the end is not left
   * waiting. Absent when no run ended in this epoch, or the server no longer has it.
   */
  lastAgentEnd?: { seq: number; event: Extract<AgentEvent, { type: "agent_end" }> };
  /**
   * Protocol 3: the argument text of each tool call of `state.streamingMessage` still
   * streaming, so that the `j` operations of the updates that follow can be applied.
   */
  argumentTexts?: ArgumentText[];
}

export interface AckFrame {
  type: "ack";
  id: string;
  /** On `attach`: the session id (new sessions get one) and how the backlog follows. */
  session?: string;
  resume?: "replay" | "snapshot";
  /** On `attach`: the session's epoch (see `SnapshotFrame.epoch`) and the protocol version. */
  epoch?: string;
  protocol?: number;
}

export interface ErrorFrame {
  type: "error";
  /** The id of the offending command, when it could be read. */
  id?: string;
  code: ErrorCode;
  message: string;
}

/** A piece of a frame larger than the server's frame limit: concatenate `data` up to `final`, then parse. */
export interface FragmentFrame {
  type: "fragment";
  data: string;
  final?: true;
}

export type ServerFrame = EventFrame | UpdateFrame | EndFrame | SnapshotFrame | AckFrame | ErrorFrame | FragmentFrame;

const commandCheck = TypeCompiler.Compile(ClientCommandSchema);
/** Per-type checkers give errors about the command the client meant, not the whole union. */
const checksByType = new Map<string, ReturnType<typeof TypeCompiler.Compile>>(
  [AttachCommandSchema, PromptCommandSchema, SteerCommandSchema, FollowUpCommandSchema, AbortCommandSchema, CancelToolCommandSchema, ApproveCommandSchema, DenyCommandSchema, ContinueCommandSchema, ResetCommandSchema].map(
    (schema) => [schema.properties.type.const, TypeCompiler.Compile(schema)],
  ),
);

/** The outcome of reading one incoming frame. */
export type ParsedCommand = { ok: true; command: ClientCommand } | { ok: false; id?: string; code: ErrorCode; message: string };

/**
 * Parses and validates one client frame. Never throws: every failure is a readable message
 * naming the offending field, sent back in an `error` frame.
 */
export function parseClientFrame(text: string): ParsedCommand {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, code: "invalid_json", message: `The frame is not valid JSON: ${(error as Error).message}` };
  }
  // Before the schema checks, which recurse: a prompt nested 6,000 deep would overflow them.
  // The default limit, not an agent's `maxJsonDepth`: a frame is read before its session (and
  // agent) is known. The agent then checks what the frame carries against its own limit.
  if (nestsDeeperThan(value)) return { ok: false, code: "invalid_frame", message: `The frame's JSON values ${tooDeepText()}.` };
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, code: "invalid_frame", message: "A frame must be a JSON object with a \"type\" and an \"id\"." };
  }
  const record = value as Record<string, unknown>;
  const id = typeof record.id === "string" && record.id.length <= 64 ? record.id : undefined;
  const withId = id === undefined ? {} : { id };
  const check = typeof record.type === "string" ? checksByType.get(record.type) : undefined;
  if (check === undefined) {
    return {
      ok: false,
      ...withId,
      code: "unknown_type",
      message: `Unknown command type ${JSON.stringify(record.type)}; expected one of ${COMMAND_TYPES.join(", ")}.`,
    };
  }
  if (!check.Check(value) || !commandCheck.Check(value)) {
    const problems = [...check.Errors(value)].slice(0, 5).map((error) => `${error.path || "/"}: ${error.message}`);
    return { ok: false, ...withId, code: "invalid_frame", message: `Invalid "${String(record.type)}" command: ${problems.join("; ")}.` };
  }
  const command = value as ClientCommand;
  if ((command.type === "prompt" || command.type === "steer" || command.type === "follow_up") && isEmptyInput(command.input)) {
    return { ok: false, id: command.id, code: "invalid_frame", message: `Invalid "${command.type}" command: /input is empty; send some text or an image.` };
  }
  return { ok: true, command };
}

function isEmptyInput(input: WirePromptInput): boolean {
  if (typeof input === "string") return input.trim() === "";
  return input.text.trim() === "" && (input.images ?? []).length === 0;
}
