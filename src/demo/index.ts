/** The offline demo: a model that reads the conversation and decides, and the tools it uses. */
export { demoModel, demoModelInfo } from "./demo-model.js";
export type { DemoModelOptions } from "./demo-model.js";
export { planReply, offlineNotice } from "./demo-policy.js";
export type { PlannedToolCall, ReplyPlan } from "./demo-policy.js";
export { detectIntents } from "./demo-intents.js";
export type { Intents } from "./demo-intents.js";
export { demoTools } from "./demo-tools.js";
export type { CalculatorDetails, ClockDetails, DemoToolsOptions, FileEntry, ListFilesDetails, ReadFileDetails, WriteFileDetails } from "./demo-tools.js";
export { CalculatorError, evaluate, format as formatNumber } from "./calculator.js";
export type { Evaluation } from "./calculator.js";
export { Sandbox, SandboxError } from "./sandbox.js";
